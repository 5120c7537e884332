import type { INodeParameters } from 'n8n-workflow';
import { byName, gpuCloudWorkflow, startRig, type Rig } from './fixtures';
import { errorOf } from './harness';

let rig: Rig;

beforeAll(async () => {
	rig = await startRig();
});

afterAll(async () => {
	await rig.close();
});

beforeEach(() => {
	rig.emulator.resetLogs();
});

const NAME_RULE =
	'must be 2-63 lower-case letters, digits or hyphens, starting with a letter and ending with a letter or digit';
const createJob = (parameters: INodeParameters): INodeParameters => ({
	resource: 'job',
	operation: 'create',
	endpoint: byName('summarize-text'),
	input: '{"text": "x"}',
	...parameters,
});
const metadata21 = JSON.stringify(
	Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`key${i}`, i])),
);

const cases: Array<[string, INodeParameters, RegExp, 'management' | 'images' | 'chat']> = [
	[
		'an endpoint name that resolves to nothing',
		createJob({ endpoint: byName('={{ $json.missing ?? "" }}') }),
		new RegExp(`^Inference Endpoint is required; it ${NAME_RULE}$`),
		'management',
	],
	[
		'input that is not valid JSON',
		createJob({ input: '{"text": "unfinished' }),
		/^Input must be valid JSON \(.+\)$/,
		'management',
	],
	[
		'a page size of 101',
		{ resource: 'inferenceEndpoint', operation: 'getAll', options: { pageSize: 101 } },
		/^Page Size 101 must be between 1 and 100$/,
		'management',
	],
	[
		'a queue name with capitals',
		{ resource: 'queue', operation: 'create', name: 'ImageJobs' },
		new RegExp(`^Queue Name "ImageJobs" ${NAME_RULE}$`),
		'management',
	],
	[
		'a queue description of 501 characters',
		{
			resource: 'queue',
			operation: 'create',
			name: 'image-jobs',
			options: { description: 'd'.repeat(501) },
		},
		/^Description "d{40}…" \(501 characters\) must be at most 500 characters$/,
		'management',
	],
	[
		'a one-character display name',
		{ resource: 'queue', operation: 'create', name: 'image-jobs', options: { displayName: 'Q' } },
		/^Display Name "Q" must be 2-63 characters$/,
		'management',
	],
	[
		'metadata with 21 properties',
		createJob({ options: { metadata: metadata21 } }),
		/^Metadata \(an object\) must have at most 20 properties$/,
		'management',
	],
	[
		'a webhook URL over 2048 characters',
		createJob({ options: { webhookUrl: `https://example.com/${'a'.repeat(2048)}` } }),
		/^Webhook URL ".+" \(2068 characters\) must be at most 2048 characters$/,
		'management',
	],
	[
		'a job ID that is not one',
		{ resource: 'job', operation: 'get', endpoint: byName('transcribe'), jobId: '12345' },
		/^Job ID "12345" must be a job id/,
		'management',
	],
	[
		'a file URL that is not a URL',
		{ resource: 'transcription', operation: 'transcribe', url: 'meeting.mp3' },
		/^Audio or Video URL "meeting.mp3" must be a full http:\/\/ or https:\/\/ URL$/,
		'management',
	],
	[
		'a timeout of 0 minutes',
		{
			resource: 'job',
			operation: 'createAndWait',
			endpoint: byName('transcribe'),
			input: '{}',
			timeoutMinutes: 0,
		},
		/^Timeout \(Minutes\) 0 must be more than 0 minutes$/,
		'management',
	],
	[
		'an image 100 pixels wide',
		{ resource: 'image', operation: 'generate', prompt: 'a cat', imageSettings: { width: 100 } },
		/^Width 100 must be 256-2048 pixels$/,
		'images',
	],
	[
		'a graph without a save-image node',
		{
			resource: 'image',
			operation: 'generate',
			source: 'graph',
			graph: '{"1": {"class_type": "KSampler", "inputs": {}}}',
		},
		/^Workflow Graph \(an object\) must contain a save-image node/,
		'images',
	],
	[
		'a sampling temperature of 3',
		{ resource: 'chat', operation: 'message', prompt: 'hi', options: { temperature: 3 } },
		/^Sampling Temperature 3 must be 0-2$/,
		'chat',
	],
	[
		'an empty prompt',
		{ resource: 'chat', operation: 'message', prompt: '   ' },
		/^Prompt is required$/,
		'chat',
	],
];

describe('Parameters that break a rule stop the node before any request', () => {
	test.each(cases)('%s', async (_name, parameters, message, credential) => {
		const execution = await rig.harness.run(gpuCloudWorkflow(parameters, { credential }));
		expect(execution.status).toBe('error');
		expect(errorOf(execution)).toMatchObject({
			node: 'GPU Cloud',
			message: expect.stringMatching(message),
		});
		expect(rig.emulator.requests).toEqual([]);
	});

	test('an empty endpoint name is caught by n8n itself: the workflow does not start', async () => {
		await expect(
			rig.harness.run(gpuCloudWorkflow(createJob({ endpoint: byName('') }))),
		).rejects.toThrow(
			/The 'GPU Cloud' node has issues:\n- Parameter "Inference Endpoint" is required/,
		);
		expect(rig.emulator.requests).toEqual([]);
	});

	test('a bad second item stops the node before the first item is sent', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				{ resource: 'queue', operation: 'create', name: '={{ $json.name }}' },
				{ items: [{ name: 'good-name' }, { name: 'Bad Name' }] },
			),
		);
		expect(errorOf(execution)?.message).toMatch(/^Queue Name "Bad Name" must be/);
		expect(rig.emulator.requests).toEqual([]);
	});

	test('the API key never appears in an error', async () => {
		rig.harness.setCredentials('wrong-key', 'gpuCloudApi', {
			apiKey: 'secret-key-that-must-not-leak',
			baseUrl: rig.emulator.baseUrl,
			organizationName: rig.emulator.organization,
		});
		const spec = gpuCloudWorkflow({
			resource: 'inferenceEndpoint',
			operation: 'getAll',
			returnAll: true,
		});
		spec.nodes[1].credentials = { gpuCloudApi: 'wrong-key' };
		const execution = await rig.harness.run(spec);
		expect(errorOf(execution)?.message).toMatch(
			/did not accept the API key.*\[HTTP 401 Unauthorized, GET /,
		);
		expect(JSON.stringify(execution.run)).not.toContain('secret-key-that-must-not-leak');
	});
});
