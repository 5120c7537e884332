import type { INodeParameters } from 'n8n-workflow';
import { byName, gpuCloudWorkflow, managementRequests, startRig, type Rig } from './fixtures';
import { errorOf, outputOf, type Execution } from './harness';

/**
 * Every operation that creates a job from what the user typed checks the input against the
 * `input_schema` the endpoint publishes, before the job is created (and billed): a refused input
 * fails its item naming the field and the rule, and no job exists for it.
 */

/** Keywords the node's checker does not read (left to the service) around one it does. */
const UNREAD_KEYWORDS_SCHEMA = JSON.stringify({
	type: 'object',
	$defs: { text: { type: 'string', format: 'x-paragraph' } },
	properties: { text: { $ref: '#/$defs/text', pattern: '^\\S', contentMediaType: 'text/plain' } },
	allOf: [{ required: ['text'] }],
	not: { required: ['forbidden'] },
	dependentRequired: { text: ['language'] },
});

let rig: Rig;

beforeAll(async () => {
	rig = await startRig({ inputSchemas: { 'detect-language': UNREAD_KEYWORDS_SCHEMA } });
});

afterAll(async () => {
	await rig.close();
});

beforeEach(() => {
	rig.emulator.resetLogs();
});

function creates(): number {
	return managementRequests(rig.emulator).filter(
		(request) => request.method === 'POST' && request.path.endsWith('/jobs'),
	).length;
}

function endpointReads(): string[] {
	return managementRequests(rig.emulator)
		.filter(
			(request) => request.method === 'GET' && /\/inference-endpoints\/[^/]+$/.test(request.path),
		)
		.map((request) => request.path.replace(/^.*\//, ''));
}

function itemIndexOf(execution: Execution): unknown {
	return execution.run?.data.resultData.error?.context?.itemIndex;
}

const createJob = (input: string, extra: INodeParameters = {}): INodeParameters => ({
	resource: 'job',
	operation: 'create',
	endpoint: byName('summarize-text'),
	input,
	...extra,
});

describe("Job > Create checks the input against the endpoint's input_schema", () => {
	test('an input the schema refuses fails before any job is created, naming the field and the rule', async () => {
		const execution = await rig.harness.run(gpuCloudWorkflow(createJob('{"text": 42}')));
		expect(execution.status).toBe('error');
		expect(errorOf(execution)).toMatchObject({
			node: 'GPU Cloud',
			message:
				'Input "text" must be string, not integer (input_schema of endpoint "summarize-text")',
			description: expect.stringContaining(
				'It expects: text (string, required), max_words (integer).',
			),
		});
		expect(creates()).toBe(0);
		expect(endpointReads()).toEqual(['summarize-text']);
	});

	test('every broken rule is named, the whole input too', async () => {
		const several = await rig.harness.run(
			gpuCloudWorkflow(createJob('{"words": "no text", "max_words": 5000}')),
		);
		expect(errorOf(several)?.message).toBe(
			'Input "text" is required; "words" is not a field of this endpoint; "max_words" must be at most 1000 (input_schema of endpoint "summarize-text")',
		);
		const whole = await rig.harness.run(gpuCloudWorkflow(createJob('"just text"')));
		expect(errorOf(whole)?.message).toBe(
			'Input must be object, not string (input_schema of endpoint "summarize-text")',
		);
		expect(creates()).toBe(0);
	});

	test('a valid input creates the job', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(createJob('{"text": "a b c", "max_words": 2}')),
		);
		expect(errorOf(execution)).toBeUndefined();
		expect(outputOf(execution, 'GPU Cloud')[0].json).toMatchObject({
			inference_endpoint_name: 'summarize-text',
			status: 'pending',
		});
		expect(creates()).toBe(1);
	});

	test("a refused second item stops the node before the first item's job is created", async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(createJob('={{ JSON.stringify({ text: $json.text }) }}'), {
				items: [{ text: 'fine' }, { text: '' }, { text: 'fine too' }],
			}),
		);
		expect(errorOf(execution)).toMatchObject({
			message:
				'Input "text" must have at least 1 characters (input_schema of endpoint "summarize-text")',
			description: expect.stringMatching(/^Item 1's input was checked/),
		});
		expect(itemIndexOf(execution)).toBe(1);
		expect(creates()).toBe(0);
	});

	test('with "Continue On Fail" the refused item becomes an error item and the others are created', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(createJob('={{ JSON.stringify({ text: $json.text }) }}'), {
				items: [{ text: 'first' }, { text: 7 }, { text: 'third' }],
				node: { onError: 'continueRegularOutput' },
			}),
		);
		expect(errorOf(execution)).toBeUndefined();
		const output = outputOf(execution, 'GPU Cloud');
		expect(output).toHaveLength(3);
		expect(output[0].json).toMatchObject({ status: 'pending', input: { text: 'first' } });
		expect(output[1]).toEqual({
			json: {
				error:
					'Input "text" must be string, not integer (input_schema of endpoint "summarize-text")',
				details: expect.stringMatching(/^Item 1's input was checked/),
			},
			pairedItem: { item: 1 },
		});
		expect(output[2].json).toMatchObject({ status: 'pending', input: { text: 'third' } });
		expect(creates()).toBe(2);
	});

	test('the endpoint is read once per run, however many items use it', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				{
					resource: 'job',
					operation: 'create',
					endpoint: byName('={{ $json.endpoint }}'),
					input: '={{ JSON.stringify({ text: "item " + $json.index }) }}',
				},
				{
					items: Array.from({ length: 40 }, (_, index) => ({
						index,
						endpoint: index % 2 ? 'sentiment' : 'summarize-text',
					})),
				},
			),
		);
		expect(errorOf(execution)).toBeUndefined();
		expect(outputOf(execution, 'GPU Cloud')).toHaveLength(40);
		expect(endpointReads().sort()).toEqual(['sentiment', 'summarize-text']);
		expect(creates()).toBe(40);
	});

	test('a schema with keywords the node does not read never blocks a valid input', async () => {
		expect(
			rig.emulator.endpoints.find((endpoint) => endpoint.name === 'detect-language')?.input_schema,
		).toBe(UNREAD_KEYWORDS_SCHEMA);
		// "language" fits the published schema (it even requires it, by a keyword left to the service),
		// not the endpoint's own rules: only the published schema decides here.
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				createJob('{"text": "bonjour le monde", "language": "fr"}', {
					endpoint: byName('detect-language'),
				}),
			),
		);
		expect(errorOf(execution)).toBeUndefined();
		expect(creates()).toBe(1);
	});

	test('an endpoint whose schema sets no rule takes any input', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(createJob('[1, "two", {"three": 3}]', { endpoint: byName('echo') })),
		);
		expect(errorOf(execution)).toBeUndefined();
		expect(creates()).toBe(1);
	});

	test("an endpoint that cannot be read fails the item with the service's answer, and no job is created", async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(createJob('{"text": "x"}', { endpoint: byName('no-such-endpoint') })),
		);
		expect(errorOf(execution)).toMatchObject({
			message:
				'GPU Cloud: Inference endpoint "no-such-endpoint" was not found. [HTTP 404 Not Found, GET /organizations/acme/inference-endpoints/no-such-endpoint]',
			description: expect.stringMatching(
				/^Inference endpoint "no-such-endpoint" was not found\.\nNo job was created/,
			),
		});
		expect(endpointReads()).toEqual(['no-such-endpoint']);
		expect(creates()).toBe(0);
	});
});

describe('The other operations that create jobs check too', () => {
	test.each<[string, INodeParameters, string]>([
		[
			'Job > Create and Wait, polling',
			createJob('{"text": "x", "max_words": 0}', { operation: 'createAndWait' }),
			'Input "max_words" must be at least 1 (input_schema of endpoint "summarize-text")',
		],
		[
			'Job > Create and Wait, pausing for the webhook: the execution fails instead of waiting',
			createJob('{"text": "x", "tone": "formal"}', {
				operation: 'createAndWait',
				waitMode: 'webhook',
			}),
			'Input "tone" is not a field of this endpoint (input_schema of endpoint "summarize-text")',
		],
		[
			'Transcription > Transcribe on an endpoint that takes fewer options',
			{
				resource: 'transcription',
				operation: 'transcribe',
				url: 'https://files.example/call.mp3?signature=abc',
				transcriptionOptions: { languageCode: 'en' },
				options: { endpointName: 'caption-image' },
			},
			'Input "language_code" is not a field of this endpoint (input_schema of endpoint "caption-image")',
		],
	])('%s', async (_name, parameters, message) => {
		const execution = await rig.harness.run(gpuCloudWorkflow(parameters));
		expect(execution.status).toBe('error');
		expect(errorOf(execution)?.message).toBe(message);
		expect(creates()).toBe(0);
	});
});
