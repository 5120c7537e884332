import { startEmulator, type RunningEmulator } from '../../emulator';
import { WorkloadClient } from '../../shared/client';
import { ValidationError } from '../../shared/errors';
import { systemClock, UndiciTransport } from '../../shared/runtime';
import type { ChatRequest } from '../../shared/schemas';
import type { Transport } from '../../shared/transport';

/** The shared workload client speaking the full chat dialect to the emulator over loopback. */

let emulator: RunningEmulator;
const transport = new UndiciTransport();
let streaming: WorkloadClient;
let whole: WorkloadClient;
beforeAll(async () => {
	emulator = await startEmulator({ port: 0 });
	streaming = new WorkloadClient({
		serviceUrl: emulator.chatUrl,
		transport,
		clock: systemClock,
	});
	// Without stream(), collect() reads the reply whole.
	const plain: Transport = { send: (request) => transport.send(request) };
	whole = new WorkloadClient({
		serviceUrl: emulator.chatUrl,
		transport: plain,
		clock: systemClock,
	});
});
afterAll(async () => {
	await transport.close();
	await emulator.close();
});

const tools: ChatRequest['tools'] = [
	{
		type: 'function',
		function: {
			name: 'list_endpoints',
			description: 'List the inference endpoints of the catalogue',
			parameters: {
				type: 'object',
				properties: {
					page_size: { type: 'integer', minimum: 1, maximum: 100 },
				},
				required: ['page_size'],
			},
		},
	},
];

describe('WorkloadClient chat with tools', () => {
	it('collects a tool call the same way streamed and whole, with usage', async () => {
		const request: ChatRequest = {
			messages: [
				{
					role: 'user',
					content: 'Which inference endpoints are in the catalogue?',
				},
			],
			tools,
		};
		const [streamed, read] = await Promise.all([
			streaming.chat.collect(request),
			whole.chat.collect(request),
		]);
		expect(streamed.finishReason).toBe('tool_calls');
		expect(streamed.text).toBe('');
		expect(streamed.toolCalls).toEqual([
			{
				id: expect.stringMatching(/^call_/),
				name: 'list_endpoints',
				arguments: '{"page_size":1}',
			},
		]);
		expect(read.toolCalls).toEqual(streamed.toolCalls);
		expect(streamed.usage).toEqual(read.usage);
	});

	it('sends the tool result back and collects the text answer that uses it', async () => {
		const first = await streaming.chat.collect({
			messages: [
				{
					role: 'user',
					content: 'Which inference endpoints are in the catalogue?',
				},
			],
			tools,
		});
		const [call] = first.toolCalls;
		if (!call) throw new Error('no tool call');
		const reply = await streaming.chat.collect({
			messages: [
				{
					role: 'user',
					content: 'Which inference endpoints are in the catalogue?',
				},
				{
					role: 'assistant',
					content: null,
					tool_calls: [
						{
							id: call.id,
							type: 'function',
							function: { name: call.name, arguments: call.arguments },
						},
					],
				},
				{
					role: 'tool',
					tool_call_id: call.id,
					content: [{ type: 'text', text: 'transcribe, llama-3-8b' }],
				},
			],
			tools,
		});
		expect(reply.finishReason).toBe('stop');
		expect(reply.toolCalls).toEqual([]);
		expect(reply.text).toContain('The tool list_endpoints returned: "transcribe, llama-3-8b".');
	});

	it('refuses a request the dialect does not allow before sending it', async () => {
		const bad: ChatRequest = {
			messages: [{ role: 'user', content: 'hi' }],
			tool_choice: 'required',
		};
		await expect(streaming.chat.collect(bad)).rejects.toThrow(ValidationError);
		await expect(streaming.chat.collect(bad)).rejects.toThrow(
			/tool_choice .*needs at least one tool/,
		);
	});
});
