import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CHAT_MODEL_ID } from '../../emulator';
import { GpuCloud } from '../../nodes/GpuCloud/GpuCloud.node';
import { eventually } from '../support/eventually';
import { gpuCloudWorkflow, startRig, type Rig } from './fixtures';
import { ITEMS_TYPE, NODE_TYPE, errorOf, outputOf, type WorkflowSpec } from './harness';

let rig: Rig;
/** Stands in for whatever the user points image webhook delivery at. */
let receiver: Server;
let receiverUrl: string;

beforeAll(async () => {
	rig = await startRig();
	receiver = createServer((_req, res) => res.writeHead(200).end());
	receiver.listen(0, '127.0.0.1');
	await once(receiver, 'listening');
	receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/images`;
});

afterAll(async () => {
	await rig.close();
	receiver.closeAllConnections();
	await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

const PNG_SIGNATURE = '89504e470d0a1a0a';
const JPEG_SIGNATURE = 'ffd8ff';

function bytesOf(data: string | undefined): Buffer {
	return Buffer.from(data ?? '', 'base64');
}

/** A prompt graph asking for `count` images in one batch. */
function graph(count: number) {
	return JSON.stringify({
		'5': { class_type: 'EmptyLatentImage', inputs: { width: 256, height: 256, batch_size: count } },
		'6': { class_type: 'CLIPTextEncode', inputs: { text: 'three lanterns' } },
		'3': {
			class_type: 'KSampler',
			inputs: { seed: 5, positive: ['6', 0], latent_image: ['5', 0] },
		},
		'9': { class_type: 'SaveImage', inputs: { filename_prefix: 'lanterns', images: ['3', 0] } },
	});
}

/** The default the editor shows for one of the Image Settings. */
function shownImageSetting(name: string): unknown {
	const settings = new GpuCloud().description.properties.find(
		(property) => property.name === 'imageSettings',
	);
	const option = settings?.options?.find((candidate) => candidate.name === name);
	return option && 'default' in option ? option.default : undefined;
}

describe('Image generation', () => {
	test('generates an image from a text prompt and outputs it as a PNG file', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				{
					resource: 'image',
					operation: 'generate',
					prompt: 'a lighthouse at dawn',
					imageSettings: { width: 256, height: 256, seed: 3 },
				},
				{ credential: 'images' },
			),
		);
		expect(errorOf(execution)).toBeUndefined();
		const [item] = outputOf(execution, 'GPU Cloud');
		expect(item.json).toMatchObject({
			id: expect.any(String),
			index: 0,
			fileName: expect.stringMatching(/\.png$/),
		});
		expect(item.binary?.data).toMatchObject({ mimeType: 'image/png', fileExtension: 'png' });
		expect(bytesOf(item.binary?.data.data).subarray(0, 8).toString('hex')).toBe(PNG_SIGNATURE);
	});

	test('with no settings added, the image has the Width and Height the settings show as defaults', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				{ resource: 'image', operation: 'generate', prompt: 'a lighthouse at dawn' },
				{ credential: 'images' },
			),
		);
		expect(errorOf(execution)).toBeUndefined();
		const png = bytesOf(outputOf(execution, 'GPU Cloud')[0].binary?.data.data);
		// A PNG's IHDR chunk holds the width and height as the 4-byte numbers at offsets 16 and 20.
		expect({ width: png.readUInt32BE(16), height: png.readUInt32BE(20) }).toEqual({
			width: shownImageSetting('width'),
			height: shownImageSetting('height'),
		});
	});

	test('puts every image of a graph on one item as JPEG files, named after the output field', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				{
					resource: 'image',
					operation: 'generate',
					source: 'graph',
					graph: graph(3),
					outputFormat: 'jpeg',
					quality: 70,
					outputMode: 'allInOne',
					binaryPropertyName: 'picture',
				},
				{ credential: 'images' },
			),
		);
		expect(errorOf(execution)).toBeUndefined();
		const [item] = outputOf(execution, 'GPU Cloud');
		expect(item.json).toMatchObject({ imageCount: 3 });
		expect(Object.keys(item.binary ?? {})).toEqual(['picture_0', 'picture_1', 'picture_2']);
		for (const file of Object.values(item.binary ?? {})) {
			expect(file).toMatchObject({
				mimeType: 'image/jpeg',
				fileName: expect.stringMatching(/^lanterns_\d+_\.jpg$/),
			});
			expect(bytesOf(file.data).subarray(0, 3).toString('hex')).toBe(JPEG_SIGNATURE);
		}
	});

	test('outputs one item per image by default, each paired with its input item', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				{ resource: 'image', operation: 'generate', source: 'graph', graph: graph(2) },
				{ credential: 'images', items: [{}, {}] },
			),
		);
		expect(
			outputOf(execution, 'GPU Cloud').map((item) => [item.json.index, item.pairedItem]),
		).toEqual([
			[0, { item: 0 }],
			[1, { item: 0 }],
			[0, { item: 1 }],
			[1, { item: 1 }],
		]);
	});

	test('hands long generations to a webhook and outputs the request id', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				{
					resource: 'image',
					operation: 'generate',
					prompt: 'a slow masterpiece',
					delivery: 'webhook',
					webhookUrl: receiverUrl,
				},
				{ credential: 'images' },
			),
		);
		expect(errorOf(execution)).toBeUndefined();
		const [item] = outputOf(execution, 'GPU Cloud');
		expect(item.json).toEqual({ id: expect.any(String), status: 'ok', webhookUrl: receiverUrl });
		expect(item.binary).toBeUndefined();
		const delivery = await eventually('the delivery to the receiver', () =>
			rig.emulator.deliveries.find((attempt) => attempt.url === receiverUrl),
		);
		expect(delivery).toMatchObject({
			type: 'prompt.complete',
			signed: true,
			ok: true,
			webhookId: item.json.id,
		});
	});

	test('reports what the workload refused, with its words', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				{
					resource: 'image',
					operation: 'generate',
					prompt: 'anything',
					workflowName: 'no-such-flow',
				},
				{ credential: 'images' },
			),
		);
		expect(errorOf(execution)?.message).toMatch(
			/^GPU Cloud workload: Workflow "no-such-flow" does not exist here.*\[HTTP 404 Not Found, POST \/workflow\/no-such-flow\]$/,
		);
	});
});

describe('Chat', () => {
	test('answers a prompt with a system message, with the reply text and token usage', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				{
					resource: 'chat',
					operation: 'message',
					prompt: 'What is an interruptible GPU node?',
					systemMessage: 'Answer in one sentence.',
					options: { maxTokens: 40, temperature: 0.2 },
				},
				{ credential: 'chat' },
			),
		);
		expect(errorOf(execution)).toBeUndefined();
		const [{ json }] = outputOf(execution, 'GPU Cloud');
		expect(json).toMatchObject({
			reply: expect.stringMatching(/\S/),
			model: CHAT_MODEL_ID,
			finishReason: expect.any(String),
		});
		expect(json.usage).toMatchObject({
			prompt_tokens: expect.any(Number),
			completion_tokens: expect.any(Number),
			total_tokens: expect.any(Number),
		});
	});

	/** An image generated on GPU Cloud, then a question about it to the text workload. */
	function pictureThenQuestion(prompt: string): WorkflowSpec {
		return {
			id: `picture-then-question-${prompt.length}`,
			nodes: [
				{ name: 'Items', type: ITEMS_TYPE, parameters: { items: '[{}]' } },
				{
					name: 'Picture',
					type: NODE_TYPE,
					parameters: {
						resource: 'image',
						operation: 'generate',
						prompt: 'a lighthouse at dawn',
						imageSettings: { width: 256, height: 256, seed: 3 },
					},
					credentials: { gpuCloudWorkloadApi: 'images' },
				},
				{
					name: 'GPU Cloud',
					type: NODE_TYPE,
					parameters: { resource: 'chat', operation: 'message', prompt },
					credentials: { gpuCloudWorkloadApi: 'chat' },
				},
			],
			connections: [
				['Items', 'Picture'],
				['Picture', 'GPU Cloud'],
			],
		};
	}

	test('says beside the reply that the image on the item did not reach the model', async () => {
		const execution = await rig.harness.run(pictureThenQuestion('What is in the picture?'));
		expect(errorOf(execution)).toBeUndefined();
		expect(outputOf(execution, 'GPU Cloud')[0].json.reply).toEqual(expect.any(String));
		expect(execution.run?.data.resultData.runData['GPU Cloud']?.[0]?.hints).toEqual([
			{
				message: expect.stringMatching(
					/^GPU Cloud text workloads read text only: the image in binary property "data" was not sent to the model\b/,
				),
				type: 'warning',
				location: 'outputPane',
			},
		]);
	});

	test('continues a conversation given as a list of messages, one reply per item', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				{
					resource: 'chat',
					operation: 'message',
					inputMode: 'messages',
					messages: {
						message: [
							{ role: 'system', content: 'You are terse.' },
							{ role: 'user', content: 'Name a colour.' },
							{ role: 'assistant', content: 'Blue.' },
							{ role: 'user', content: '={{ $json.question }}' },
						],
					},
				},
				{ credential: 'chat', items: [{ question: 'Another one?' }, { question: 'And a third?' }] },
			),
		);
		expect(errorOf(execution)).toBeUndefined();
		const output = outputOf(execution, 'GPU Cloud');
		expect(output).toHaveLength(2);
		expect(
			output.every((item) => typeof item.json.reply === 'string' && item.json.reply.length > 0),
		).toBe(true);
		expect(output.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }]);
	});

	const lastChatBody = (): Record<string, unknown> => {
		const body = rig.emulator.requests
			.filter(
				(request) => request.surface === 'chat' && request.path.endsWith('/v1/chat/completions'),
			)
			.at(-1)?.body;
		return JSON.parse(body ?? '{}') as Record<string, unknown>;
	};

	test('sends stop sequences, seed and presence penalty; the reply ends before the first stop sequence', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				{
					resource: 'chat',
					operation: 'message',
					prompt: 'What is an interruptible GPU node?',
					options: { stop: ['interruptible', 'never'], seed: 7, presencePenalty: 0.5 },
				},
				{ credential: 'chat' },
			),
		);
		expect(errorOf(execution)).toBeUndefined();
		const [{ json }] = outputOf(execution, 'GPU Cloud');
		expect(json).toMatchObject({ reply: 'You wrote: "What is an', finishReason: 'stop' });
		expect(json).not.toHaveProperty('toolCalls');
		expect(lastChatBody()).toMatchObject({
			stop: ['interruptible', 'never'],
			seed: 7,
			presence_penalty: 0.5,
		});
	});

	test.each([
		[
			'a JSON object',
			{ responseFormat: 'json_object' },
			{ answer: expect.stringContaining('GPU node') },
		],
		[
			'JSON matching a schema',
			{
				responseFormat: 'json_schema',
				jsonSchema:
					'{"type": "object", "properties": {"title": {"type": "string", "maxLength": 12}, "count": {"type": "integer", "minimum": 3}}, "required": ["title", "count"]}',
			},
			{ title: expect.any(String), count: 3 },
		],
	])('returns %s parsed in "json"', async (_kind, options, expected) => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				{
					resource: 'chat',
					operation: 'message',
					prompt: 'What is an interruptible GPU node?',
					options,
				},
				{ credential: 'chat' },
			),
		);
		expect(errorOf(execution)).toBeUndefined();
		const [{ json }] = outputOf(execution, 'GPU Cloud');
		expect(json.json).toEqual(expected);
		expect(JSON.parse(String(json.reply))).toEqual(json.json);
	});

	const weatherTool = JSON.stringify([
		{
			type: 'function',
			function: {
				name: 'get_forecast',
				description: 'Weather forecast for a city',
				parameters: {
					type: 'object',
					properties: {
						city: { type: 'string' },
						days: { type: 'integer', minimum: 1, maximum: 7 },
					},
					required: ['city'],
				},
			},
		},
	]);

	test('returns the tool calls the model makes when tools are given, arguments parsed', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				{
					resource: 'chat',
					operation: 'message',
					prompt: 'Get the forecast for Paris.',
					options: { tools: weatherTool },
				},
				{ credential: 'chat' },
			),
		);
		expect(errorOf(execution)).toBeUndefined();
		const [{ json }] = outputOf(execution, 'GPU Cloud');
		expect(json).toMatchObject({ reply: '', finishReason: 'tool_calls' });
		expect(json.toolCalls).toEqual([
			{
				id: expect.stringMatching(/^call_/),
				name: 'get_forecast',
				arguments: { city: 'Get the forecast for Paris.', days: 1 },
				argumentsText: expect.any(String),
			},
		]);
		expect(lastChatBody()).toMatchObject({ tool_choice: 'auto', tools: JSON.parse(weatherTool) });
	});

	test('with tool choice None, answers in words and says no tool was called', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				{
					resource: 'chat',
					operation: 'message',
					prompt: 'Get the forecast for Paris.',
					options: { tools: weatherTool, toolChoice: 'none' },
				},
				{ credential: 'chat' },
			),
		);
		const [{ json }] = outputOf(execution, 'GPU Cloud');
		expect(json).toMatchObject({ finishReason: 'stop', toolCalls: [] });
		expect(json.reply).toContain('Paris');
	});

	test.each([
		[{ tools: '[{"type": "function"}]' }, /^Tools 0\.function is required$/],
		[{ tools: '{oops' }, /^Tools must be valid JSON/],
		[
			{ stop: ['a', 'b', 'c', 'd', 'e'] },
			/^Stop Sequences \(a list of 5\) must be a text value or a list of up to 4$/,
		],
		[
			{ responseFormat: 'json_schema' },
			/^JSON Schema is required when Response Format is JSON Matching a Schema$/,
		],
		[
			{ jsonSchema: '{}' },
			/^JSON Schema is used only when Response Format is JSON Matching a Schema$/,
		],
		[
			{ responseFormat: 'yaml' },
			/^Response Format "yaml" must be Text, JSON Object or JSON Matching a Schema$/,
		],
	])('refuses bad options %j before any request', async (options, message) => {
		const before = rig.emulator.requests.length;
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				{ resource: 'chat', operation: 'message', prompt: 'Hello', options },
				{ credential: 'chat' },
			),
		);
		expect(errorOf(execution)?.message).toMatch(message);
		expect(rig.emulator.requests.length).toBe(before);
	});

	test('receives the reply as a stream, so an error the model reports part-way fails the item clearly', async () => {
		rig.emulator.setFaults({ streamErrorRate: 1, surfaces: ['chat'] });
		try {
			const execution = await rig.harness.run(
				gpuCloudWorkflow(
					{ resource: 'chat', operation: 'message', prompt: 'Tell me a long story.' },
					{ credential: 'chat' },
				),
			);
			expect(errorOf(execution)?.message).toMatch(/^The chat model stopped with an error: /);
		} finally {
			rig.emulator.setFaults({ streamErrorRate: 0 });
		}
	});
});
