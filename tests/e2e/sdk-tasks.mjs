// The official MCP TypeScript SDK client, announcing `tasks`, talking to
// cordond through `cordonctl mcp` (stdio <-> gateway socket); run by
// tests/e2e/test-sdk-tasks, which plays the operator. Two task-augmented
// calls through the SDK's own task loop (experimental.tasks.callToolStream:
// CreateTaskResult, tasks/get polling, tasks/result):
//  1. everything__simulate-research-query (server-everything, taskSupport
//     required, granted at tier read): passed through to the connector's
//     own task;
//  2. memory__create_entities (server-memory, a write): held by cordon for
//     an operator's approval as a task, which the operator gives after 90 s,
//     longer than the SDK's 60 s request timeout.
// Prints one JSON object with what it saw.
//   node sdk-tasks.mjs CORDONCTL GATEWAY_SOCKET
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

const [ctl, gw] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: ctl, args: ['mcp', '--socket', gw], stderr: 'inherit' });
const client = new Client(
  { name: 'cordon-sdk-tasks', version: '1.0.0' },
  { capabilities: { tasks: { list: {}, cancel: {} } } },
);
await client.connect(transport);
const out = { serverTasks: client.getServerCapabilities()?.tasks ?? null };
const tools = (await client.listTools()).tools;
out.taskSupport = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport ?? null]));

async function stream(name, args) {
  const t0 = Date.now();
  const seen = { statuses: [], polls: 0 };
  for await (const m of client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, {
    task: { ttl: 600000 },
  })) {
    if (m.type === 'taskCreated') seen.created = m.task;
    else if (m.type === 'taskStatus') {
      seen.polls++;
      if (!seen.statuses.includes(m.task.status)) seen.statuses.push(m.task.status);
      seen.lastStatus = m.task;
    } else if (m.type === 'result') seen.result = m.result;
    else if (m.type === 'error') seen.error = String(m.error?.message ?? m.error);
  }
  seen.ms = Date.now() - t0;
  return seen;
}

out.research = await stream('everything__simulate-research-query', { topic: 'cordon tasks' });
out.listed = (await client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
out.held = await stream('memory__create_entities', {
  entities: [{ name: 'task-e2e', entityType: 'test', observations: ['approved after 90 s'] }],
});
out.graph = await client.callTool({ name: 'memory__read_graph', arguments: {} });
console.log(JSON.stringify(out));
await client.close();
