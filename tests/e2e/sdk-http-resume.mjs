// Resumption of a dropped stream with the official SDK's
// StreamableHTTPClientTransport against cordond's TCP listener (issue 18).
// A call held for approval (alpha__append), its events' ids captured with
// onresumptiontoken; after its first progress the TCP connection carrying
// its stream is cut (this process forwards the first client's bytes and
// destroys the connections; that client never reconnects by itself
// (maxRetries 0) and sends no cancel). A second client on a new transport
// for the same session (sessionId) resumes with the last event id
// (request option resumptionToken: a GET with Last-Event-ID); once that
// stream has carried a progress event, this script approves the call
// (cordonctl approvals approve CODE, the code from the progress message);
// the resumed stream ends with the call's result.
// Prints {"session", "token", "before": N, "after": N, "ids": [...],
//         "text", "isError", "code"}
//   node sdk-http-resume.mjs http://127.0.0.1:PORT PATH TOKEN CORDONCTL OPSOCK
import net from 'node:net';
import { execFileSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

const [base, path, token, ctl, opsock] = process.argv.slice(2);
const target = new URL(base);
const live = new Set();
const server = net.createServer((c) => {
  const u = net.createConnection(Number(target.port), target.hostname);
  live.add(c);
  live.add(u);
  c.pipe(u);
  u.pipe(c);
  const end = () => { c.destroy(); u.destroy(); live.delete(c); live.delete(u); };
  c.on('error', end);
  u.on('error', end);
  c.on('close', end);
  u.on('close', end);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const proxied = new URL(`http://127.0.0.1:${server.address().port}${path}`);
const direct = new URL(`${base}${path}`);
const requestInit = { headers: { Authorization: `Bearer ${token}` } };
const noRetry = { initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1, maxRetries: 0 };
const call = { method: 'tools/call', params: { name: 'alpha__append', arguments: { text: 'sdk resumed' } } };
const out = {};

// The first client, through the forwarder.
const t1 = new StreamableHTTPClientTransport(proxied, { requestInit, reconnectionOptions: noRetry });
const c1 = new Client({ name: 'cordon-e2e-resume', version: '1.0.0' });
c1.onerror = () => {}; // the cut stream's error, expected
await c1.connect(t1);
out.session = t1.sessionId;
let last;
let code;
out.before = 0;
const firstProgress = new Promise((resolve) => {
  c1.request(call, CallToolResultSchema, {
    onresumptiontoken: (id) => { last = id; },
    onprogress: (p) => {
      out.before++;
      code = /approval (\S+?);/.exec(p.message ?? '')?.[1];
      resolve();
    },
    timeout: 600000,
  }).then(() => { out.first = 'answered on the cut stream'; }, () => {});
});
await firstProgress;
out.token = last;
out.code = code;
for (const s of live) s.destroy(); // the stream is cut, no cancel sent
server.close();

// A second client, a new transport for the same session, resumes.
// The resumed stream's event ids, read from a copy of its bytes (this SDK
// does not pass onresumptiontoken on to a resumed request's stream).
out.ids = [];
let sawResult;
const resultSeen = new Promise((r) => { sawResult = r; });
const watch = async (body) => {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, '');
      buf = buf.slice(nl + 1);
      if (line.startsWith('id: ')) out.ids.push(line.slice(4));
      else if (line.startsWith('data: ') && /"result"/.test(line)) sawResult();
    }
  }
};
const tapFetch = async (url, init) => {
  const r = await fetch(url, init);
  if ((init?.method ?? 'GET') !== 'GET' || !r.body) return r;
  const [sdk, copy] = r.body.tee();
  watch(copy).catch(() => {});
  return new Response(sdk, { status: r.status, statusText: r.statusText, headers: r.headers });
};
const t2 = new StreamableHTTPClientTransport(direct, {
  requestInit, sessionId: out.session, reconnectionOptions: noRetry, fetch: tapFetch,
});
t2.setProtocolVersion(t1.protocolVersion);
const c2 = new Client({ name: 'cordon-e2e-resume', version: '1.0.0' });
c2.onerror = () => {}; // progress for the first client's token: no handler here
await c2.connect(t2);
out.after = 0;
let approved = false;
const deliver = t2.onmessage;
t2.onmessage = (m, extra) => {
  if (m.method === 'notifications/progress') {
    out.after++;
    if (!approved) {
      approved = true;
      execFileSync(ctl, ['--socket', opsock, 'approvals', 'approve', code], { stdio: ['ignore', 'ignore', 'inherit'] });
    }
  }
  deliver(m, extra);
};
const res = await c2.request(call, CallToolResultSchema, {
  resumptionToken: out.token,
  timeout: 600000,
});
out.text = res.content?.[0]?.text;
out.isError = res.isError ?? false;
await resultSeen;
await t2.terminateSession();
await c2.close();
await c1.close();
process.stdout.write(JSON.stringify(out) + '\n');
