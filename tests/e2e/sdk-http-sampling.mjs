// The sampling relay over Streamable HTTP (issue 18), with the official SDK:
// a client that declares the sampling capability and answers
// sampling/createMessage calls TOOL, whose connector asks the client's model
// through cordond (the request comes back on the call's own SSE stream).
// Prints {"asked": [the messages the handler got], "result": tool text}
//   node sdk-http-sampling.mjs URL TOKEN TOOL   (https: NODE_EXTRA_CA_CERTS)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [url, token, tool] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: 'cordon-e2e-sampling', version: '1.0.0' }, { capabilities: { sampling: {} } });
const asked = [];
client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
  asked.push(req.params.messages.map((m) => m.content.text).join(' '));
  return { role: 'assistant', content: { type: 'text', text: 'hi from the client model' }, model: 'e2e-model' };
});
await client.connect(transport);
const r = await client.callTool({ name: tool, arguments: {} }, undefined, { timeout: 60000 });
await transport.terminateSession();
await client.close();
process.stdout.write(JSON.stringify({ asked, result: r.content[0].text, isError: r.isError ?? false }) + '\n');
