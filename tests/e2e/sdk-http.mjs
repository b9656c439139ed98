// The official SDK's StreamableHTTPClientTransport against cordond's MCP
// HTTP endpoint (issue 18). The SDK dials TCP, so this process copies the
// bytes of its own loopback listener to the Unix socket named on the command
// line (nothing else can reach it: the test runs it in a network namespace
// of its own). Then, on PATH (/mcp):
//   tools/list; an echo call; a call held for approval with onprogress (its
//   progress notifications counted, its answer the approval's text); the same
//   call aborted after its first progress (notifications/cancelled); DELETE.
// Prints {"tools": [...], "echo": text, "held": {"progress": N, "text": ...},
//         "cancelled": message, "session": id}
//   node sdk-http.mjs SOCKET PATH
//   node sdk-http.mjs http://127.0.0.1:PORT PATH TOKEN   (TCP, no forwarder:
//     the SDK sends Authorization: Bearer TOKEN on every request; https://
//     too, the certificate trusted through NODE_EXTRA_CA_CERTS)
import net from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [sock, path, token] = process.argv.slice(2);
const direct = /^https?:\/\//.test(sock);
const server = net.createServer((c) => {
  const u = net.createConnection(sock);
  c.pipe(u);
  u.pipe(c);
  const end = () => { c.destroy(); u.destroy(); };
  c.on('error', end);
  u.on('error', end);
});
let url;
if (direct) {
  url = new URL(`${sock}${path}`);
} else {
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  url = new URL(`http://127.0.0.1:${server.address().port}${path}`);
}
const transport = new StreamableHTTPClientTransport(
  url, token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : undefined);
const client = new Client({ name: 'cordon-e2e-http', version: '1.0.0' });
await client.connect(transport);
const out = { session: transport.sessionId };
out.tools = (await client.listTools()).tools.map((t) => t.name);
const echo = await client.callTool({ name: 'alpha__echo', arguments: { text: 'sdk over http' } });
out.echo = echo.content[0].text;
let progress = 0;
const held = await client.callTool({ name: 'alpha__append', arguments: { text: 'sdk held' } }, undefined, {
  onprogress: () => { progress++; },
  timeout: 60000,
});
out.held = { progress, text: held.content[0].text, isError: held.isError };
const ac = new AbortController();
try {
  await client.callTool({ name: 'alpha__append', arguments: { text: 'sdk cancelled' } }, undefined, {
    signal: ac.signal,
    onprogress: () => ac.abort('the test cancels'),
    timeout: 60000,
  });
  out.cancelled = 'not cancelled';
} catch (e) {
  out.cancelled = String(e?.message ?? e);
}
await transport.terminateSession();
await client.close();
if (!direct) server.close();
process.stdout.write(JSON.stringify(out) + '\n');
