import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeConnectionTypes } from 'n8n-workflow';
import { CHAT_MODEL_ID } from '../../emulator';
import { startRig, type Rig } from './fixtures';
import {
	AGENT_TYPE,
	CHAT_MODEL_TYPE,
	ITEMS_TYPE,
	OPENAI_MODEL_TYPE,
	errorOf,
	outputOf,
	type WorkflowSpec,
} from './harness';

/**
 * The GPU Cloud Chat Model sub-node supplying the emulated text workload to an AI root node through
 * n8n's engine and @n8n/ai-node-sdk's LangChain adapter, its requests going over n8n's request helper.
 */

let rig: Rig;
beforeAll(async () => {
	rig = await startRig();
	// The SDK and LangChain behind it load on first use; on a busy machine that alone can outlast
	// the first test's time, so they load here, where the wait is allowed for.
	await import('@n8n/ai-node-sdk');
}, 120_000);
afterAll(() => rig.close());

let count = 0;
function agentWorkflow(
	agent: Record<string, unknown>,
	model: Record<string, unknown> = {},
): WorkflowSpec {
	return {
		id: `chat-model-${++count}`,
		nodes: [
			{ name: 'Items', type: ITEMS_TYPE, parameters: { items: '[{}]' } },
			{ name: 'Agent', type: AGENT_TYPE, parameters: { tools: '[]', stream: false, ...agent } },
			{
				name: 'GPU Cloud Chat Model',
				type: CHAT_MODEL_TYPE,
				parameters: { model: { __rl: true, mode: 'list', value: '' }, options: {}, ...model },
				credentials: { gpuCloudWorkloadApi: 'chat' },
			},
		],
		connections: [
			['Items', 'Agent'],
			['GPU Cloud Chat Model', 'Agent', NodeConnectionTypes.AiLanguageModel],
		],
	};
}

const chatBodies = () =>
	rig.emulator.requests
		.filter(
			(request) => request.surface === 'chat' && request.path.endsWith('/v1/chat/completions'),
		)
		.map((request) => JSON.parse(request.body ?? '{}') as Record<string, unknown>);

const ENDPOINTS_TOOL = {
	name: 'list_endpoints',
	description: 'List the inference endpoints of the GPU Cloud catalogue',
	parameters: {
		type: 'object',
		properties: { page_size: { type: 'integer', minimum: 1, maximum: 100 } },
		required: ['page_size'],
	},
	result: 'transcribe (Transcription), llama-3-8b (Text generation)',
};

describe('GPU Cloud Chat Model', () => {
	beforeEach(() => rig.emulator.resetLogs());

	test.each([false, true])(
		'answers a prompt through the engine (stream %s), sending the options the node sets, the reply always as a stream',
		async (stream) => {
			const execution = await rig.harness.run(
				agentWorkflow(
					{ prompt: 'What is an interruptible GPU node?', stream },
					{
						model: { __rl: true, mode: 'id', value: CHAT_MODEL_ID },
						options: {
							maxTokens: 30,
							temperature: 0.3,
							topP: 0.9,
							presencePenalty: 0.2,
							stop: ['never'],
						},
					},
				),
			);
			expect(errorOf(execution)).toBeUndefined();
			const [{ json }] = outputOf(execution, 'Agent');
			expect(json.answer).toMatch(/^You wrote: "What is an interruptible GPU node\?"/);
			expect(json.toolCalls).toEqual([]);
			expect(chatBodies()).toEqual([
				expect.objectContaining({
					model: CHAT_MODEL_ID,
					max_tokens: 30,
					temperature: 0.3,
					top_p: 0.9,
					presence_penalty: 0.2,
					stop: ['never'],
					stream: true,
				}),
			]);
		},
	);

	test.each([false, true])(
		'lets the agent call a tool and answers with its result (stream %s)',
		async (stream) => {
			const execution = await rig.harness.run(
				agentWorkflow({
					prompt: 'Which inference endpoints can I use?',
					tools: JSON.stringify([ENDPOINTS_TOOL]),
					stream,
				}),
			);
			expect(errorOf(execution)).toBeUndefined();
			const [{ json }] = outputOf(execution, 'Agent');
			expect(json.toolCalls).toEqual([{ name: 'list_endpoints', args: { page_size: 1 } }]);
			expect(json.answer).toContain(
				'The tool list_endpoints returned: "transcribe (Transcription), llama-3-8b (Text generation)".',
			);
			const [first, second] = chatBodies();
			expect(first?.tools).toEqual([
				{
					type: 'function',
					function: {
						name: 'list_endpoints',
						description: ENDPOINTS_TOOL.description,
						parameters: ENDPOINTS_TOOL.parameters,
					},
				},
			]);
			expect(second?.messages).toEqual([
				{ role: 'user', content: 'Which inference endpoints can I use?' },
				{
					role: 'assistant',
					content: null,
					tool_calls: [
						{
							id: expect.stringMatching(/^call_/),
							type: 'function',
							function: { name: 'list_endpoints', arguments: '{"page_size":1}' },
						},
					],
				},
				{
					role: 'tool',
					tool_call_id: expect.stringMatching(/^call_/),
					content: ENDPOINTS_TOOL.result,
				},
			]);
		},
	);

	test('asks for JSON when the response format is JSON Object', async () => {
		const execution = await rig.harness.run(
			agentWorkflow(
				{ prompt: 'Describe a GPU node.' },
				{ options: { responseFormat: 'json_object' } },
			),
		);
		const [{ json }] = outputOf(execution, 'Agent');
		expect(JSON.parse(String(json.answer))).toEqual({
			answer: expect.stringContaining('Describe a GPU node.'),
		});
		expect(chatBodies()[0]).toMatchObject({ response_format: { type: 'json_object' } });
	});

	test.each([false, true])(
		'refuses an image passed through from the chat, saying text workloads read text only, and sends no empty message (stream %s)',
		async (stream) => {
			const execution = await rig.harness.run(
				agentWorkflow({
					prompt: 'What is in this picture?',
					imageUrl: `data:image/png;base64,${Buffer.from('not really a png').toString('base64')}`,
					stream,
				}),
			);
			expect(errorOf(execution)?.message).toMatch(
				/^GPU Cloud text workloads read text only: .*image.* cannot reach the model\b/,
			);
			expect(errorOf(execution)?.description).toMatch(
				/turn off its option "Automatically Passthrough Binary Images"/,
			);
			expect(chatBodies()).toEqual([]);
		},
	);

	test.each([false, true])(
		'a workload that cannot be reached stops the agent with the chat model’s own words, naming GPU Cloud and the request (stream %s)',
		async (stream) => {
			const closed = createServer();
			closed.listen(0, '127.0.0.1');
			await once(closed, 'listening');
			const { port } = closed.address() as AddressInfo;
			await new Promise<void>((resolve) => closed.close(() => resolve()));
			rig.harness.setCredentials('closed', 'gpuCloudWorkloadApi', {
				serviceUrl: `http://127.0.0.1:${port}`,
				apiKey: '',
			});
			const workflow = agentWorkflow({ prompt: 'Hello?', stream });
			const model = workflow.nodes.find((node) => node.name === 'GPU Cloud Chat Model');
			if (model) model.credentials = { gpuCloudWorkloadApi: 'closed' };
			const error = errorOf(await rig.harness.run(workflow));
			expect(error).toEqual({
				message:
					'Could not reach GPU Cloud workload for POST /v1/chat/completions: Could not connect.',
				description: expect.stringMatching(/^ECONNREFUSED: The service refused the connection/),
				node: 'Agent',
			});
		},
	);

	test('lists the workload’s models for the Model parameter', async () => {
		const spec = agentWorkflow({});
		expect(
			(await rig.harness.listSearch(spec, 'GPU Cloud Chat Model', 'searchModels')).results,
		).toEqual([{ name: CHAT_MODEL_ID, value: CHAT_MODEL_ID }]);
		expect(
			(await rig.harness.listSearch(spec, 'GPU Cloud Chat Model', 'searchModels', 'no-such'))
				.results,
		).toEqual([]);
	});

	test.each([
		[
			{ stop: ['a', 'b', 'c', 'd', 'e'] },
			/^Stop Sequences \(a list of 5\) must be a text value or a list of up to 4$/,
		],
		[{ temperature: 5 }, /^Sampling Temperature 5 must be 0-2$/],
	])('refuses bad options %j before any request', async (options, message) => {
		const execution = await rig.harness.run(agentWorkflow({ prompt: 'Hello' }, { options }));
		// n8n reports a sub-node's error under its own heading, with the node's message as description.
		expect(errorOf(execution)).toEqual({
			message: 'Error in sub-node GPU Cloud Chat Model',
			description: expect.stringMatching(message),
			node: 'GPU Cloud Chat Model',
		});
		expect(chatBodies()).toEqual([]);
	});
});

describe("n8n's OpenAI-compatible model pointed at the workload (the recipe in docs/ai-agent.md)", () => {
	beforeEach(() => rig.emulator.resetLogs());

	function openAiWorkflow(agent: Record<string, unknown>, streaming: boolean): WorkflowSpec {
		return {
			id: `openai-model-${++count}`,
			nodes: [
				{ name: 'Items', type: ITEMS_TYPE, parameters: { items: '[{}]' } },
				{
					name: 'Agent',
					type: AGENT_TYPE,
					parameters: { tools: '[]', stream: streaming, ...agent },
				},
				{
					name: 'OpenAI Model',
					type: OPENAI_MODEL_TYPE,
					parameters: {
						baseUrl: `${rig.emulator.chatUrl}/v1`,
						serviceApiKey: rig.emulator.apiKey,
						model: CHAT_MODEL_ID,
						streaming,
					},
				},
			],
			connections: [
				['Items', 'Agent'],
				['OpenAI Model', 'Agent', NodeConnectionTypes.AiLanguageModel],
			],
		};
	}

	test.each([false, true])(
		'lets the agent call a tool and answers with its result (streaming %s)',
		async (streaming) => {
			const execution = await rig.harness.run(
				openAiWorkflow(
					{
						prompt: 'Which inference endpoints can I use?',
						tools: JSON.stringify([ENDPOINTS_TOOL]),
					},
					streaming,
				),
			);
			expect(errorOf(execution)).toBeUndefined();
			const [{ json }] = outputOf(execution, 'Agent');
			expect(json.toolCalls).toEqual([{ name: 'list_endpoints', args: { page_size: 1 } }]);
			expect(json.answer).toContain(
				'The tool list_endpoints returned: "transcribe (Transcription), llama-3-8b (Text generation)".',
			);
			const requests = rig.emulator.requests.filter((request) => request.surface === 'chat');
			expect(
				requests.map((request) => `${request.method} ${request.path} ${request.status}`),
			).toEqual([
				'POST /workloads/chat/v1/chat/completions 200',
				'POST /workloads/chat/v1/chat/completions 200',
			]);
		},
	);
});
