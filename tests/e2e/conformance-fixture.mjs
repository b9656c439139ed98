// The fixture connector for the conformance run (tests/e2e/test-conformance):
// an MCP server over stdio, on the official TypeScript SDK, that implements
// what @modelcontextprotocol/conformance's server scenarios call, under the
// names those scenarios use (tools test_*, prompts test_*, resources test://…).
// The same file is measured directly (behind supergateway) and as a cordon
// connector (behind supergateway → cordonctl mcp --connector → cordond), so
// any difference between the two runs is cordon's.
//   node conformance-fixture.mjs
// The low-level Server (not McpServer) keeps every schema exactly as written
// here: json_schema_2020_12_tool's $schema/$defs must reach the client intact.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
	CallToolRequestSchema,
	CompleteRequestSchema,
	CreateMessageResultSchema,
	ElicitResultSchema,
	GetPromptRequestSchema,
	ListPromptsRequestSchema,
	ListResourcesRequestSchema,
	ListResourceTemplatesRequestSchema,
	ListToolsRequestSchema,
	McpError,
	ErrorCode,
	ReadResourceRequestSchema,
	SubscribeRequestSchema,
	UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

// A 1x1 PNG and a 44-byte silent WAV header, made here (no external file).
const PNG =
	'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = Buffer.from([
	0x52, 0x49, 0x46, 0x46, 0x24, 0, 0, 0, 0x57, 0x41, 0x56, 0x45, 0x66, 0x6d, 0x74, 0x20, 16, 0, 0, 0, 1, 0, 1, 0,
	0x40, 0x1f, 0, 0, 0x80, 0x3e, 0, 0, 2, 0, 16, 0, 0x64, 0x61, 0x74, 0x61, 0, 0, 0, 0,
]).toString('base64');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (t) => ({ content: [{ type: 'text', text: t }] });
const noArgs = { type: 'object', properties: {} };

const tools = [
	{ name: 'test_simple_text', description: 'Returns one text item', inputSchema: noArgs },
	{ name: 'test_image_content', description: 'Returns a PNG image', inputSchema: noArgs },
	{ name: 'test_audio_content', description: 'Returns a WAV clip', inputSchema: noArgs },
	{ name: 'test_embedded_resource', description: 'Returns an embedded resource', inputSchema: noArgs },
	{ name: 'test_multiple_content_types', description: 'Returns text, image and resource', inputSchema: noArgs },
	{ name: 'test_tool_with_logging', description: 'Logs three info messages while it runs', inputSchema: noArgs },
	{ name: 'test_error_handling', description: 'Always fails (isError)', inputSchema: noArgs },
	{ name: 'test_tool_with_progress', description: 'Reports progress 0, 50, 100 of 100', inputSchema: noArgs },
	{
		name: 'test_sampling',
		description: 'Asks the client for a sampling completion',
		inputSchema: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
	},
	{
		name: 'test_elicitation',
		description: 'Asks the client for a user name and email',
		inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
	},
	{
		name: 'json_schema_2020_12_tool',
		description: 'Has a JSON Schema 2020-12 input schema with $defs',
		inputSchema: {
			$schema: 'https://json-schema.org/draft/2020-12/schema',
			type: 'object',
			$defs: {
				address: {
					type: 'object',
					properties: { street: { type: 'string' }, city: { type: 'string' } },
				},
			},
			properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
			additionalProperties: false,
		},
	},
	{ name: 'test_elicitation_sep1034_defaults', description: 'Elicitation with defaults', inputSchema: noArgs },
	{ name: 'test_elicitation_sep1330_enums', description: 'Elicitation with every enum form', inputSchema: noArgs },
	{ name: 'test_reconnection', description: 'Answers after a short wait', inputSchema: noArgs },
];

const resources = [
	{ uri: 'test://static-text', name: 'static-text', mimeType: 'text/plain', description: 'A text resource' },
	{ uri: 'test://static-binary', name: 'static-binary', mimeType: 'image/png', description: 'A binary resource' },
	{ uri: 'test://watched-resource', name: 'watched-resource', mimeType: 'text/plain', description: 'Subscribable' },
];
const template = /^test:\/\/template\/([^/]+)\/data$/;

const prompts = [
	{ name: 'test_simple_prompt', description: 'A prompt without arguments' },
	{
		name: 'test_prompt_with_arguments',
		description: 'A prompt with two arguments',
		arguments: [
			{ name: 'arg1', description: 'First argument', required: true },
			{ name: 'arg2', description: 'Second argument', required: true },
		],
	},
	{
		name: 'test_prompt_with_embedded_resource',
		description: 'A prompt that embeds a resource',
		arguments: [{ name: 'resourceUri', description: 'The URI to embed', required: true }],
	},
	{ name: 'test_prompt_with_image', description: 'A prompt with an image' },
];

const server = new Server(
	{ name: 'cordon-conformance-fixture', version: '1.0.0' },
	{
		capabilities: {
			tools: {},
			resources: { subscribe: true, listChanged: true },
			prompts: {},
			completions: {},
			logging: {},
		},
		instructions: 'The cordon conformance fixture: every server feature the conformance suite exercises.',
	},
);

server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));

server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
	const args = req.params.arguments ?? {};
	switch (req.params.name) {
		case 'test_simple_text':
			return text('This is a simple text response for testing.');
		case 'test_image_content':
			return { content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] };
		case 'test_audio_content':
			return { content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] };
		case 'test_embedded_resource':
			return {
				content: [
					{
						type: 'resource',
						resource: {
							uri: 'test://embedded-resource',
							mimeType: 'text/plain',
							text: 'This is an embedded resource content.',
						},
					},
				],
			};
		case 'test_multiple_content_types':
			return {
				content: [
					{ type: 'text', text: 'Multiple content types test:' },
					{ type: 'image', data: PNG, mimeType: 'image/png' },
					{
						type: 'resource',
						resource: {
							uri: 'test://mixed-content-resource',
							mimeType: 'application/json',
							text: '{"test":"data","value":123}',
						},
					},
				],
			};
		case 'test_tool_with_logging':
			await server.sendLoggingMessage({ level: 'info', data: 'Tool execution started' });
			await sleep(50);
			await server.sendLoggingMessage({ level: 'info', data: 'Tool processing data' });
			await sleep(50);
			await server.sendLoggingMessage({ level: 'info', data: 'Tool execution completed' });
			return text('Tool with logging executed successfully');
		case 'test_error_handling':
			return { isError: true, content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }] };
		case 'test_tool_with_progress': {
			const token = req.params._meta?.progressToken;
			for (const progress of [0, 50, 100]) {
				if (token !== undefined)
					await extra.sendNotification({
						method: 'notifications/progress',
						params: { progressToken: token, progress, total: 100 },
					});
				if (progress < 100) await sleep(50);
			}
			return text('Tool with progress executed successfully');
		}
		case 'test_sampling': {
			const r = await extra.sendRequest(
				{
					method: 'sampling/createMessage',
					params: {
						messages: [{ role: 'user', content: { type: 'text', text: String(args.prompt ?? '') } }],
						maxTokens: 100,
					},
				},
				CreateMessageResultSchema,
			);
			return text(`LLM response: ${r.content?.type === 'text' ? r.content.text : JSON.stringify(r.content)}`);
		}
		case 'test_elicitation': {
			const r = await extra.sendRequest(
				{
					method: 'elicitation/create',
					params: {
						mode: 'form',
						message: String(args.message ?? 'Please provide your information'),
						requestedSchema: {
							type: 'object',
							properties: {
								username: { type: 'string', description: 'User name' },
								email: { type: 'string', description: 'Email address' },
							},
							required: ['username', 'email'],
						},
					},
				},
				ElicitResultSchema,
			);
			return text(`User response: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
		}
		case 'json_schema_2020_12_tool':
			return text(`Received: ${JSON.stringify(args)}`);
		case 'test_elicitation_sep1034_defaults': {
			const r = await extra.sendRequest(
				{
					method: 'elicitation/create',
					params: {
						mode: 'form',
						message: 'Please review your information (defaults given)',
						requestedSchema: {
							type: 'object',
							properties: {
								name: { type: 'string', description: 'User name', default: 'John Doe' },
								age: { type: 'integer', description: 'User age', default: 30 },
								score: { type: 'number', description: 'User score', default: 95.5 },
								status: {
									type: 'string',
									description: 'User status',
									enum: ['active', 'inactive', 'pending'],
									default: 'active',
								},
								verified: { type: 'boolean', description: 'Verified', default: true },
							},
						},
					},
				},
				ElicitResultSchema,
			);
			return text(`Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
		}
		case 'test_elicitation_sep1330_enums': {
			const r = await extra.sendRequest(
				{
					method: 'elicitation/create',
					params: {
						mode: 'form',
						message: 'Choose options (every enum form)',
						requestedSchema: {
							type: 'object',
							properties: {
								untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
								titledSingle: {
									type: 'string',
									oneOf: [
										{ const: 'value1', title: 'First' },
										{ const: 'value2', title: 'Second' },
									],
								},
								legacyEnum: {
									type: 'string',
									enum: ['opt1', 'opt2'],
									enumNames: ['Option One', 'Option Two'],
								},
								untitledMulti: {
									type: 'array',
									items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
								},
								titledMulti: {
									type: 'array',
									items: {
										anyOf: [
											{ const: 'value1', title: 'First' },
											{ const: 'value2', title: 'Second' },
										],
									},
								},
							},
						},
					},
				},
				ElicitResultSchema,
			);
			return text(`Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
		}
		case 'test_reconnection':
			await sleep(100);
			return text('Reconnection test completed successfully');
		default:
			throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name}`);
	}
});

server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources }));
server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
	resourceTemplates: [
		{ uriTemplate: 'test://template/{id}/data', name: 'template', mimeType: 'text/plain', description: 'By id' },
	],
}));
server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
	const uri = req.params.uri;
	if (uri === 'test://static-text')
		return { contents: [{ uri, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }] };
	if (uri === 'test://static-binary') return { contents: [{ uri, mimeType: 'image/png', blob: PNG }] };
	if (uri === 'test://watched-resource')
		return { contents: [{ uri, mimeType: 'text/plain', text: 'Watched resource content' }] };
	if (uri === 'test://example-resource')
		return { contents: [{ uri, mimeType: 'text/plain', text: 'Example resource content' }] };
	const m = template.exec(uri);
	if (m) return { contents: [{ uri, mimeType: 'text/plain', text: `Data for id ${m[1]}` }] };
	throw new McpError(-32002, `Resource not found: ${uri}`, { uri });
});
server.setRequestHandler(SubscribeRequestSchema, async () => ({}));
server.setRequestHandler(UnsubscribeRequestSchema, async () => ({}));

server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts }));
server.setRequestHandler(GetPromptRequestSchema, async (req) => {
	const args = req.params.arguments ?? {};
	switch (req.params.name) {
		case 'test_simple_prompt':
			return { messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }] };
		case 'test_prompt_with_arguments':
			return {
				messages: [
					{
						role: 'user',
						content: { type: 'text', text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` },
					},
				],
			};
		case 'test_prompt_with_embedded_resource':
			return {
				messages: [
					{
						role: 'user',
						content: {
							type: 'resource',
							resource: { uri: args.resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
						},
					},
					{ role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
				],
			};
		case 'test_prompt_with_image':
			return {
				messages: [
					{ role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
					{ role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
				],
			};
		default:
			throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${req.params.name}`);
	}
});

server.setRequestHandler(CompleteRequestSchema, async (req) => {
	const words = ['paris', 'park', 'party', 'test', 'testing'];
	const prefix = String(req.params.argument?.value ?? '');
	const values = words.filter((w) => w.startsWith(prefix));
	return { completion: { values, total: values.length, hasMore: false } };
});

await server.connect(new StdioServerTransport());
