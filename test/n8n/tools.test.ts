import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { INodeParameters } from 'n8n-workflow';
import { z } from 'zod/v4';
import {
	LIMITS,
	NAME_RULE,
	TOOL_ANSWER_MAX_BYTES,
	TOOL_DESCRIPTIONS,
	TOOL_JOB_OUTPUT_MAX_BYTES,
	TOOL_PARAMETER_RULES,
	utf8Bytes,
} from '../../shared';
import { generatedEndpoints } from '../support/catalogue';
import { ENDPOINT_NAMES } from '../../emulator/endpoints/catalogue';
import { startRig, type Rig } from './fixtures';
import {
	ITEMS_TYPE,
	TOOL_CALLER_TYPE,
	TOOL_TYPE,
	errorOf,
	outputOf,
	type WorkflowSpec,
} from './harness';

/**
 * The GPU Cloud node called as a tool, through n8n's engine: n8n-core wraps the node's tool variant
 * (`gpuCloudTool`) as n8n's AI Agent and MCP Server Trigger get it, and the test's caller invokes it
 * with a model's arguments. Each answer is the text n8n hands the model, measured in bytes.
 */

let rig: Rig;
/** A catalogue of 500 endpoints: the emulator's own and as many more. */
const OWN_ENDPOINTS = ENDPOINT_NAMES.size;
let large: Rig;

beforeAll(async () => {
	rig = await startRig({ jobDurationMs: 50 });
	large = await startRig({
		jobDurationMs: 50,
		listedEndpoints: generatedEndpoints(500 - OWN_ENDPOINTS),
	});
});

afterEach(() => {
	rig.emulator.resetLogs();
});

afterAll(async () => {
	await rig.close();
	await large.close();
});

let workflowCount = 0;

type Route = 'direct' | 'engine';

/**
 * Items -> Tool Caller, with the GPU Cloud tool (these parameters) connected as its tool; the
 * caller invokes it the MCP Server Trigger's way ("direct") or the AI Agent's ("engine").
 */
function toolWorkflow(
	parameters: INodeParameters,
	calls: Array<Record<string, unknown>>,
	credential: 'management' | 'images',
	route: Route,
	typeVersion: number,
): WorkflowSpec {
	return {
		id: `tool-workflow-${++workflowCount}`,
		nodes: [
			{ name: 'Items', type: ITEMS_TYPE, parameters: { items: '[{}]' } },
			{
				name: 'Tool Caller',
				type: TOOL_CALLER_TYPE,
				parameters: { calls: JSON.stringify(calls.map((args) => ({ args }))), route },
			},
			{
				name: 'GPU Cloud',
				type: TOOL_TYPE,
				typeVersion,
				parameters,
				credentials: {
					[credential === 'images' ? 'gpuCloudWorkloadApi' : 'gpuCloudApi']: credential,
				},
			},
		],
		connections: [
			['Items', 'Tool Caller'],
			['GPU Cloud', 'Tool Caller', 'ai_tool'],
		],
	};
}

const callSchema = z.object({
	tool: z.string(),
	description: z.string(),
	parameters: z.record(z.string(), z.string()),
	answer: z.string(),
});

/** Each call's answer as the model receives it. */
async function callTool(
	on: Rig,
	parameters: INodeParameters,
	calls: Array<Record<string, unknown>> = [{}],
	credential: 'management' | 'images' = 'management',
	route: Route = 'direct',
	typeVersion = 1,
) {
	const execution = await on.harness.run(
		toolWorkflow(parameters, calls, credential, route, typeVersion),
	);
	expect(errorOf(execution)).toBeUndefined();
	return outputOf(execution, 'Tool Caller').map(({ json }) => callSchema.parse(json));
}

/** Inference Endpoint > Get as a tool, the model naming the endpoint (`$fromAI`, with a description). */
function getEndpointAsTool(endpointName: string, description = '') {
	return callTool(
		rig,
		{
			resource: 'inferenceEndpoint',
			operation: 'get',
			endpoint: {
				__rl: true,
				mode: 'name',
				value: `={{ $fromAI('endpointName', '${description}', 'string') }}`,
			},
			options: {},
		},
		[{ endpointName }],
	);
}

/** The single item of an answer (n8n sends the JSON array of the tool's output items). */
function onlyItem(answer: string): Record<string, unknown> {
	if (!answer.startsWith('[')) throw new Error(answer);
	const items = z.array(z.record(z.string(), z.unknown())).length(1).parse(JSON.parse(answer));
	return items[0];
}

const catalogueSchema = z.strictObject({
	total: z.number(),
	endpoints: z.array(
		z.strictObject({
			name: z.string(),
			displayName: z.string(),
			description: z.string().max(160),
			price: z.string(),
			input: z.string().max(200).optional(),
		}),
	),
	otherEndpoints: z.array(z.string()).optional(),
	note: z.string(),
});

describe('Inference Endpoint > Get Many as a tool', () => {
	const getMany = (limit?: number): INodeParameters => ({
		resource: 'inferenceEndpoint',
		operation: 'getAll',
		returnAll: limit === undefined,
		...(limit === undefined ? {} : { limit }),
		options: {},
	});

	test.each([
		['1 endpoint', () => rig, 1, 1],
		["the emulator's endpoints", () => rig, undefined, OWN_ENDPOINTS],
		['500 endpoints', () => large, undefined, 500],
	])(
		'answers a catalogue of %s within the budget, every endpoint named',
		async (_label, on, limit, count) => {
			const [call] = await callTool(on(), getMany(limit));
			expect(utf8Bytes(call.answer)).toBeLessThanOrEqual(TOOL_ANSWER_MAX_BYTES);
			const answer = catalogueSchema.parse(onlyItem(call.answer));
			expect(answer.total).toBe(count);
			const named = [
				...answer.endpoints.map((entry) => entry.name),
				...(answer.otherEndpoints ?? []),
			];
			expect(named).toHaveLength(count);
			expect(answer.note).toContain('Inference Endpoint > Get');
		},
	);

	test('gives each endpoint of a small catalogue in detail: what it does, its price, what its input takes', async () => {
		const [call] = await callTool(rig, getMany());
		const answer = catalogueSchema.parse(onlyItem(call.answer));
		expect(answer.otherEndpoints).toBeUndefined();
		const transcribe = answer.endpoints.find((entry) => entry.name === 'transcribe');
		expect(transcribe).toMatchObject({
			displayName: expect.any(String),
			price: expect.any(String),
			input: expect.stringContaining('url (string, required)'),
		});
	});

	test('says how many of a large catalogue it details and how to read any endpoint in full', async () => {
		const [call] = await callTool(large, getMany());
		const answer = catalogueSchema.parse(onlyItem(call.answer));
		expect(answer.endpoints.length).toBeGreaterThan(0);
		expect(answer.otherEndpoints?.length).toBe(500 - answer.endpoints.length);
		expect(answer.note).toMatch(/^500 endpoints: the first \d+ in detail, \d+ more by name only\./);
	});
});

describe('Inference Endpoint > Get as a tool', () => {
	test('answers one endpoint in full: its input schema as JSON, within the budget', async () => {
		const [call] = await getEndpointAsTool('transcribe', TOOL_PARAMETER_RULES.endpointName);
		expect(utf8Bytes(call.answer)).toBeLessThanOrEqual(TOOL_ANSWER_MAX_BYTES);
		expect(onlyItem(call.answer)).toMatchObject({
			name: 'transcribe',
			inputSchema: { properties: { url: expect.any(Object) } },
		});
	});
});

/** Job > Create and Wait on the echo endpoint as a tool, the model giving the text to echo. */
function echoAsTool(text: string) {
	return callTool(
		rig,
		{
			resource: 'job',
			operation: 'createAndWait',
			endpoint: { __rl: true, mode: 'name', value: 'echo' },
			input: `={{ JSON.stringify({ text: $fromAI('text', 'What to echo', 'string') }) }}`,
			options: {},
		},
		[{ text }],
	);
}

describe('Job > Create and Wait (version 2) as a tool', () => {
	test("the model fills the endpoint's fields, and the job's input is what it gave", async () => {
		const fromAI = (key: string, type: string) => `={{ $fromAI('${key}', '', '${type}') }}`;
		const [call] = await callTool(
			rig,
			{
				resource: 'job',
				operation: 'createAndWait',
				endpoint: { __rl: true, mode: 'name', value: 'product-listing' },
				inputFields: {
					mappingMode: 'defineBelow',
					value: {
						product_name: fromAI('product_name', 'string'),
						category: fromAI('category', 'string'),
						max_words: fromAI('max_words', 'number'),
					},
					matchingColumns: [],
					schema: [],
				},
				options: {},
			},
			[{ product_name: 'Desk lamp', category: 'home', max_words: 80 }],
			'management',
			'direct',
			2,
		);
		expect(Object.keys(call.parameters).sort()).toEqual(['category', 'max_words', 'product_name']);
		expect(onlyItem(call.answer)).toMatchObject({
			status: 'succeeded',
			output: { received: { product_name: 'Desk lamp', category: 'home', max_words: 80 } },
		});
	});

	test('a value the schema refuses reaches the model as a sentence naming the field', async () => {
		const [call] = await callTool(
			rig,
			{
				resource: 'job',
				operation: 'createAndWait',
				endpoint: { __rl: true, mode: 'name', value: 'product-listing' },
				inputFields: {
					mappingMode: 'defineBelow',
					value: {
						product_name: "={{ $fromAI('product_name', '', 'string') }}",
						category: "={{ $fromAI('category', '', 'string') }}",
					},
					matchingColumns: [],
					schema: [],
				},
				options: {},
			},
			[{ product_name: 'Desk lamp', category: 'cars' }],
			'management',
			'direct',
			2,
		);
		const { error } = z.strictObject({ error: z.string() }).parse(onlyItem(call.answer));
		expect(error).toMatch(/^Field "category" must be one of "apparel", /);
	});
});

describe('Jobs as a tool', () => {
	/** The echo endpoint returns its input: text this long makes an output past the cut. */
	const LONG_TEXT = 'All work and no play makes a long output. '.repeat(600);

	test('answers a job as id, status, timings and output, without its input', async () => {
		const [call] = await echoAsTool('hello');
		const answer = onlyItem(call.answer);
		expect(answer).toMatchObject({
			id: expect.any(String),
			endpoint: 'echo',
			status: 'succeeded',
			createdAt: expect.any(String),
			startedAt: expect.any(String),
			finishedAt: expect.any(String),
			runSeconds: expect.any(Number),
			output: { echo: { text: 'hello' } },
		});
		expect(answer).not.toHaveProperty('input');
		expect(answer).not.toHaveProperty('events');
	});

	test('cuts an output past the stated size and says how to read on, which Job > Get does', async () => {
		const [created] = await echoAsTool(LONG_TEXT);
		expect(utf8Bytes(created.answer)).toBeLessThanOrEqual(TOOL_ANSWER_MAX_BYTES);
		const first = onlyItem(created.answer);
		const whole = JSON.stringify({ echo: { text: LONG_TEXT } });
		expect(first).not.toHaveProperty('output');
		expect(first.outputLength).toBe(whole.length);
		const firstPart = z.string().parse(first.outputPart);
		// Within the cut as it travels: escaped inside the answer's JSON.
		expect(utf8Bytes(JSON.stringify(firstPart))).toBeLessThanOrEqual(TOOL_JOB_OUTPUT_MAX_BYTES);
		expect(first.note).toContain(`Job > Get for job ${String(first.id)}`);
		const next = Number(/Output Offset (\d+)/.exec(String(first.note))?.[1]);
		expect(next).toBe(firstPart.length);

		// Reading on as the note says, until the end: the parts make the whole output.
		const parts = [firstPart];
		let offset = next;
		while (offset < whole.length) {
			const [read] = await callTool(
				rig,
				{
					resource: 'job',
					operation: 'get',
					endpoint: { __rl: true, mode: 'name', value: 'echo' },
					jobId: `={{ $fromAI('jobId', '${TOOL_PARAMETER_RULES.jobId}', 'string') }}`,
					options: { outputOffset: `={{ $fromAI('outputOffset', '', 'number') }}` },
				},
				[{ jobId: first.id, outputOffset: offset }],
			);
			expect(utf8Bytes(read.answer)).toBeLessThanOrEqual(TOOL_ANSWER_MAX_BYTES);
			const answer = onlyItem(read.answer);
			expect(answer.outputOffset).toBe(offset);
			const part = z.string().parse(answer.outputPart);
			parts.push(part);
			offset += part.length;
		}
		expect(parts.join('')).toBe(whole);
	});
});

/** Image > Generate with the prompt and width left to the model, as the editor writes them. */
function generate(): INodeParameters {
	return {
		resource: 'image',
		operation: 'generate',
		// What the editor writes when the model is let define a parameter: no description.
		prompt: "={{ /*n8n-auto-generated-fromAI-override*/ $fromAI('Prompt', ``, 'string') }}",
		imageSettings: {
			width: "={{ /*n8n-auto-generated-fromAI-override*/ $fromAI('Width', ``, 'number') }}",
			height: 512,
		},
	};
}

describe('Image > Generate as a tool', () => {
	test('says plainly the image was made but cannot reach the model, with its size, seed and bytes', async () => {
		const [call] = await callTool(
			rig,
			generate(),
			[{ Prompt: 'a lighthouse', Width: 768 }],
			'images',
		);
		expect(call.answer).not.toContain('fileName');
		const answer = onlyItem(call.answer);
		expect(answer).toMatchObject({
			imageCount: 1,
			images: [
				{
					format: 'png',
					width: 768,
					height: 512,
					seed: expect.any(Number),
					bytes: expect.any(Number),
				},
			],
			delivered: false,
		});
		expect(answer.note).toMatch(/image was made but cannot reach you/);
		expect(answer.note).toMatch(/adds a GPU Cloud Object Storage API credential/);
	});

	test.each(['jpeg', 'webp'])('reads the size of a %s image from its header', async (format) => {
		const [call] = await callTool(
			rig,
			{ ...generate(), outputFormat: format },
			[{ Prompt: 'a lighthouse', Width: 640 }],
			'images',
		);
		expect(onlyItem(call.answer)).toMatchObject({ images: [{ format, width: 640, height: 512 }] });
	});

	test('keeps the seed the model gave, so the same image can be made again', async () => {
		const [call] = await callTool(
			rig,
			{
				...generate(),
				imageSettings: { width: 512, seed: "={{ $fromAI('Seed', '', 'number') }}" },
			},
			[{ Prompt: 'a lighthouse', Seed: 42 }],
			'images',
		);
		expect(onlyItem(call.answer)).toMatchObject({ images: [{ seed: 42 }] });
	});
});

describe('Errors a model caused, as a tool', () => {
	test('come back as one sentence naming the rule, no stack, nothing sent', async () => {
		const [call] = await callTool(rig, generate(), [{ Prompt: 'a cat', Width: 5000 }], 'images');
		const { error } = z.strictObject({ error: z.string() }).parse(onlyItem(call.answer));
		expect(error).toBe(
			'Width 5000 must be 256-2048 pixels: nothing was sent to GPU Cloud; call again with a value that follows the rule.',
		);
		expect(rig.emulator.requests.filter((request) => request.surface !== 'management')).toEqual([]);
	});

	test('name what to do for an endpoint that does not exist', async () => {
		const [call] = await getEndpointAsTool('no-such-endpoint');
		const { error } = z.strictObject({ error: z.string() }).parse(onlyItem(call.answer));
		expect(error).toBe(
			'GPU Cloud: Inference endpoint "no-such-endpoint" was not found: check the name or id (Inference Endpoint > Get Many lists the endpoint names).',
		);
	});

	test('name the rule for an endpoint name that breaks it', async () => {
		const [call] = await getEndpointAsTool('Not A Name');
		const { error } = z.strictObject({ error: z.string() }).parse(onlyItem(call.answer));
		expect(error).toContain(NAME_RULE);
	});
});

describe('What a model reads about the tool', () => {
	/** A `$fromAI` expression as the editor writes it, with a description. */
	const fromAI = (key: string, description: string, type: string) =>
		`={{ /*n8n-auto-generated-fromAI-override*/ $fromAI('${key}', \`${description}\`, '${type}') }}`;

	test("n8n's automatic description is the operation's action; the editor leaves parameters undescribed", async () => {
		const [call] = await callTool(rig, generate(), [{ Prompt: 'a cat', Width: 512 }], 'images');
		expect(call.description).toBe('Generate an image in GPU Cloud');
		expect(call.parameters).toEqual({ Prompt: '', Width: '' });
	});

	test('docs/ai-agent.md quotes the shared parameter rules as they are', () => {
		const docs = readFileSync(join(__dirname, '../../docs/ai-agent.md'), 'utf8');
		for (const key of [
			'endpointName',
			'jobId',
			'prompt',
			'imageSide',
			'seed',
			'outputOffset',
		] as const)
			expect(docs).toContain(`| ${TOOL_PARAMETER_RULES[key]} |`);
	});

	test('set up as docs/ai-agent.md shows, the tool and each parameter carry the shared rules', async () => {
		const [call] = await callTool(
			rig,
			{
				...generate(),
				descriptionType: 'manual',
				toolDescription: TOOL_DESCRIPTIONS.generateImage,
				prompt: fromAI('Prompt', TOOL_PARAMETER_RULES.prompt, 'string'),
				imageSettings: {
					width: fromAI('Width', TOOL_PARAMETER_RULES.imageSide, 'number'),
					height: fromAI('Height', TOOL_PARAMETER_RULES.imageSide, 'number'),
				},
			},
			[{ Prompt: 'a cat', Width: 512, Height: 512 }],
			'images',
		);
		expect(call.description).toContain(`${LIMITS.imageSideMin} to ${LIMITS.imageSideMax}`);
		expect(call.parameters).toEqual({
			Prompt: TOOL_PARAMETER_RULES.prompt,
			Width: TOOL_PARAMETER_RULES.imageSide,
			Height: TOOL_PARAMETER_RULES.imageSide,
		});

		const [endpoint] = await callTool(
			rig,
			{
				resource: 'inferenceEndpoint',
				operation: 'get',
				descriptionType: 'manual',
				toolDescription: TOOL_DESCRIPTIONS.getEndpoint,
				endpoint: {
					__rl: true,
					mode: 'name',
					value: fromAI('endpointName', TOOL_PARAMETER_RULES.endpointName, 'string'),
				},
				options: {},
			},
			[{ endpointName: 'echo' }],
		);
		expect(endpoint.description).toContain(NAME_RULE);
		expect(endpoint.parameters.endpointName).toContain(NAME_RULE);
	});
});

describe("The AI Agent's route: the engine runs the tool node", () => {
	test('answers the same catalogue within the budget', async () => {
		const [call] = await callTool(
			large,
			{ resource: 'inferenceEndpoint', operation: 'getAll', returnAll: true, options: {} },
			[{}],
			'management',
			'engine',
		);
		expect(utf8Bytes(call.answer)).toBeLessThanOrEqual(TOOL_ANSWER_MAX_BYTES);
		expect(catalogueSchema.parse(onlyItem(call.answer)).total).toBe(500);
	});

	test('answers the image without binary data, and a mistake as one sentence', async () => {
		const [made, refused] = await callTool(
			rig,
			generate(),
			[
				{ Prompt: 'a lighthouse', Width: 768 },
				{ Prompt: 'a lighthouse', Width: 5000 },
			],
			'images',
			'engine',
		);
		expect(onlyItem(made.answer)).toMatchObject({
			images: [{ width: 768, height: 512 }],
			delivered: false,
		});
		expect(onlyItem(refused.answer)).toEqual({
			error:
				'Width 5000 must be 256-2048 pixels: nothing was sent to GPU Cloud; call again with a value that follows the rule.',
		});
	});
});

describe('Transcription as a tool', () => {
	test('answers a transcription as its job: status, timings and output, within the budget', async () => {
		const [call] = await callTool(
			rig,
			{
				resource: 'transcription',
				operation: 'transcribe',
				url: "={{ $fromAI('url', '', 'string') }}",
				transcriptionOptions: {
					wordLevelTimestamps: true,
					sentenceLevelTimestamps: true,
					diarization: true,
					srt: true,
				},
			},
			[{ url: 'https://files.example/weekly-meeting.mp3?signature=abc' }],
		);
		expect(utf8Bytes(call.answer)).toBeLessThanOrEqual(TOOL_ANSWER_MAX_BYTES);
		expect(onlyItem(call.answer)).toMatchObject({ endpoint: 'transcribe', status: 'succeeded' });
	});
});
