// A real MCP client built on the official TypeScript SDK, for cordon's e2e
// tests. It reads a plan (JSON) from the file named on the command line:
//   {"command": "/abs/server", "args": [...], "env": {...},
//    "calls": [{"tool": "name", "arguments": {...}} | {"prompt": "name", "arguments": {...}}]}
// connects over stdio, lists tools, performs the calls (callTool, or getPrompt
// for a "prompt" entry) in order and prints
//   {"server": {...}, "tools": [names],
//    "results": [the result, or {"error": message, "code": N, "data": ...} as the SDK's McpError has them]}
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const transport = new StdioClientTransport({
  command: plan.command,
  args: plan.args ?? [],
  env: plan.env,
  stderr: 'inherit',
});
const client = new Client({ name: 'cordon-e2e', version: '1.0.0' });
await client.connect(transport);
const out = { server: client.getServerVersion(), tools: [], results: [] };
const listed = await client.listTools();
out.tools = listed.tools.map((t) => t.name);
for (const call of plan.calls ?? []) {
  try {
    if (call.prompt !== undefined)
      out.results.push(await client.getPrompt({ name: call.prompt, arguments: call.arguments ?? {} }));
    else
      out.results.push(await client.callTool({ name: call.tool, arguments: call.arguments ?? {} }));
  } catch (e) {
    out.results.push({ error: String(e?.message ?? e), code: e?.code, data: e?.data });
  }
}
await client.close();
process.stdout.write(JSON.stringify(out) + '\n');
