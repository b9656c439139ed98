// The official MCP TypeScript SDK client and resources through cordond
// (issue 13, Resources): server-everything runs as two connectors, ea and
// eb. Prints one JSON object with what it saw; test-sdk-resources asserts.
//   node sdk-resources.mjs CORDONCTL GATEWAY_SOCKET
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const [ctl, gw] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const out = {};

async function connect(args) {
  const transport = new StdioClientTransport({ command: ctl, args: ['mcp', '--socket', gw, ...args], stderr: 'inherit' });
  const client = new Client({ name: 'cordon-sdk-resources', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

// Every page of a list, following nextCursor.
async function all(list, key) {
  const items = [];
  let cursor;
  let pages = 0;
  do {
    const r = await list(cursor ? { cursor } : undefined);
    items.push(...r[key]);
    cursor = r.nextCursor;
    pages++;
  } while (cursor && pages < 100);
  return { items, pages };
}

// The multiplexed view: both connectors.
const m = await connect([]);
out.caps = m.getServerCapabilities();
const updates = [];
m.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
const res = await all((p) => m.listResources(p), 'resources');
out.uris = res.items.map((r) => r.uri);
out.pages = res.pages;
const tpls = await all((p) => m.listResourceTemplates(p), 'resourceTemplates');
out.templates = tpls.items.map((t) => t.uriTemplate);

// The same URI of both connectors: each read reaches its own.
const first = out.uris.find((u) => u.startsWith('cordon+ea:'));
const same = first.slice('cordon+ea:'.length);
out.same = same;
out.readA = (await m.readResource({ uri: `cordon+ea:${same}` })).contents[0].uri;
out.readB = (await m.readResource({ uri: `cordon+eb:${same}` })).contents[0].uri;

// A template of eb, expanded by the client, read without listing it.
const tpl = out.templates.find((t) => t.startsWith('cordon+eb:') && t.includes('/text/{resourceId}'));
const r = await m.readResource({ uri: tpl.replace('{resourceId}', '7') });
out.templateRead = { uri: r.contents[0].uri, text: r.contents[0].text };

// Subscribe to ea's URI; ea sends updates (one at once, then every 5 s).
await m.subscribeResource({ uri: `cordon+ea:${same}` });
out.toggle = (await m.callTool({ name: 'ea__toggle-subscriber-updates', arguments: {} })).content?.[0]?.text ?? null;
for (let i = 0; i < 50 && updates.length === 0; i++) await sleep(100);
out.updatesSubscribed = [...updates];
await m.unsubscribeResource({ uri: `cordon+ea:${same}` });
const n = updates.length;
await sleep(6000);
out.updatesAfterUnsubscribe = updates.length - n;
await m.close();

// The one-connector view: the connector's own URIs, no listing first.
const b = await connect(['--connector', 'eb']);
out.boundCaps = b.getServerCapabilities();
out.boundRead = (await b.readResource({ uri: 'demo://resource/dynamic/text/3' })).contents[0].uri;
await b.close();
process.stdout.write(JSON.stringify(out) + '\n');
