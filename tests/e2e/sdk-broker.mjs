// The official MCP TypeScript SDK client talking to cordond through
// `cordonctl mcp` (stdio <-> gateway socket), with a parallel operator using
// `cordonctl approvals ...`. Prints one JSON object with what it saw; the C
// test (tests/e2e/test-cordond.c) asserts on it.
//   node sdk-broker.mjs CORDONCTL GATEWAY_SOCKET OPERATOR_SOCKET CONNECTOR
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [ctl, gw, op, c] = process.argv.slice(2);
const run = promisify(execFile);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const out = {};

async function pending() {
  const { stdout } = await run(ctl, ['--socket', op, '--json', 'approvals', 'list']);
  const v = JSON.parse(stdout);
  const arr = Array.isArray(v) ? v : Object.values(v).find(Array.isArray) ?? [];
  return arr.filter((a) => a.state === 'requested');
}

async function approveWhenPending() {
  for (let i = 0; i < 100; i++) {
    const p = await pending();
    if (p.length) {
      await run(ctl, ['--socket', op, 'approvals', 'approve', p[0].display_code]);
      return p[0].display_code;
    }
    await sleep(100);
  }
  return null;
}

const text = (r) => (r?.content?.[0]?.text ?? '');
const transport = new StdioClientTransport({ command: ctl, args: ['mcp', '--socket', gw], stderr: 'inherit' });
const client = new Client({ name: 'cordon-sdk-e2e', version: '1.0.0' });
await client.connect(transport);
out.protocolVersion = transport._protocolVersion ?? null;
out.server = client.getServerVersion();
out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
out.readOnly = Object.fromEntries(
  (await client.listTools()).tools.map((t) => [t.name, t.annotations?.readOnlyHint ?? null]),
);
out.echo = text(await client.callTool({ name: `${c}__echo`, arguments: { text: 'from the sdk' } }));

// A write that waits for an operator, approved in parallel: completes once.
let progress = 0;
const args1 = { text: 'sdk-1', nested: { a: 1, list: [1, 2] } };
const [r1, code1] = await Promise.all([
  client.callTool({ name: `${c}__append`, arguments: args1 }, undefined, {
    timeout: 60000,
    resetTimeoutOnProgress: true,
    onprogress: () => progress++,
  }),
  approveWhenPending(),
]);
out.write1 = { text: text(r1), isError: !!r1.isError, code: code1, progress };

// One nested argument changed: a new approval is needed (the wait runs out).
const r2 = await client.callTool({ name: `${c}__append`, arguments: { text: 'sdk-1', nested: { a: 2, list: [1, 2] } } });
out.changed = { isError: !!r2.isError, text: text(r2) };
const p2 = await pending();
out.changedCode = p2[0]?.display_code ?? null;

// Let that one expire (profile TTL 3 s): approving it then fails.
await sleep(3500);
try {
  await run(ctl, ['--socket', op, 'approvals', 'approve', out.changedCode]);
  out.approveExpired = 'accepted';
} catch (e) {
  out.approveExpired = 'refused';
}

// Cancel one (as the SDK does when its request timeout passes): the request
// is aborted, the approval stays pending for the identical call (issue 14).
const ac = new AbortController();
const r4 = client.callTool({ name: `${c}__append`, arguments: { text: 'sdk-cancel' } }, undefined, {
  signal: ac.signal,
  timeout: 60000,
});
for (let i = 0; i < 50 && (await pending()).length === 0; i++) await sleep(100);
out.beforeCancel = (await pending()).length;
ac.abort('test cancels');
try {
  await r4;
  out.cancel = 'completed';
} catch (e) {
  out.cancel = 'aborted';
}
await sleep(500);
out.afterCancel = (await pending()).length;

await client.close();
process.stdout.write(JSON.stringify(out) + '\n');
