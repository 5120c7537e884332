import { NodeHelpers, type INode, type INodeParameters } from 'n8n-workflow';
import { GpuCloud } from '../../nodes/GpuCloud/GpuCloud.node';
import { byName, gpuCloudWorkflow, startRig, type Rig } from '../n8n/fixtures';
import { errorOf } from '../n8n/harness';

/**
 * Every bound of the interface, broken once through the GPU Cloud node's operations: each stops the
 * node with an error that names the field as the node shows it, and `emulator.requests` proves no
 * request left. Values typed literally into a required or pattern-checked field are caught by n8n
 * itself before the workflow runs (the editor marks the field); the same values coming from an
 * expression reach the node's own checks. The one input only the service can judge (an endpoint that
 * does not exist) is last: it does send a request, and comes back as the service's 404.
 */

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

type Credential = 'management' | 'images' | 'chat';
type Case = [name: string, parameters: INodeParameters, message: RegExp, credential?: Credential];

const NAME =
	'must be 2-63 lower-case letters, digits or hyphens, starting with a letter and ending with a letter or digit';
const JOB_ID = 'must be a job id \\(a UUID like';
const char64 = `a${'b'.repeat(63)}`;
const metadata21 = JSON.stringify(
	Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`key${i}`, i])),
);
const longUrl = `https://example.com/${'a'.repeat(2049 - 'https://example.com/'.length)}`;

const createJob = (parameters: INodeParameters): INodeParameters => ({
	resource: 'job',
	operation: 'create',
	endpoint: byName('summarize-text'),
	input: '{"text": "x"}',
	...parameters,
});
const createAndWait = (parameters: INodeParameters): INodeParameters => ({
	...createJob(parameters),
	operation: 'createAndWait',
});
const jobById = (operation: string, jobId: unknown): INodeParameters =>
	({ resource: 'job', operation, endpoint: byName('summarize-text'), jobId }) as INodeParameters;
const queue = (parameters: INodeParameters): INodeParameters => ({
	resource: 'queue',
	operation: 'create',
	name: 'image-jobs',
	...parameters,
});
const endpoints = (parameters: INodeParameters): INodeParameters => ({
	resource: 'inferenceEndpoint',
	operation: 'getAll',
	...parameters,
});
const transcribe = (
	options: INodeParameters,
	url = 'https://files.example/talk.mp3',
): INodeParameters => ({
	resource: 'transcription',
	operation: 'transcribe',
	url,
	transcriptionOptions: options,
});
const image = (settings: INodeParameters, extra: INodeParameters = {}): INodeParameters => ({
	resource: 'image',
	operation: 'generate',
	prompt: 'a lighthouse',
	imageSettings: settings,
	...extra,
});
const chat = (options: INodeParameters, extra: INodeParameters = {}): INodeParameters => ({
	resource: 'chat',
	operation: 'message',
	prompt: 'hello',
	options,
	...extra,
});
const conversation = (message: unknown[]): INodeParameters =>
	({
		resource: 'chat',
		operation: 'message',
		inputMode: 'messages',
		messages: { message },
	}) as INodeParameters;

const cases: Case[] = [
	// Names: endpoint, queue, project (2-63, lower-case, letter first, letter or digit last).
	[
		'endpoint name of 1 character (from an expression)',
		createJob({ endpoint: byName('={{ "a" }}') }),
		new RegExp(`^Inference Endpoint "a" ${NAME}$`),
	],
	[
		'endpoint name of 64 characters (from an expression)',
		createJob({ endpoint: byName(`={{ "${char64}" }}`) }),
		new RegExp(`^Inference Endpoint "ab{39}…" \\(64 characters\\) ${NAME}$`),
	],
	[
		'endpoint name with capitals (from an expression)',
		createJob({ endpoint: byName('={{ "Transcribe" }}') }),
		new RegExp(`^Inference Endpoint "Transcribe" ${NAME}$`),
	],
	[
		'endpoint name that is a path (from an expression)',
		createJob({ endpoint: byName('={{ "../queues" }}') }),
		/^Inference Endpoint "\.\.\/queues" must be 2-63/,
	],
	[
		'endpoint name that an expression makes empty',
		createJob({ endpoint: byName('={{ "" }}') }),
		new RegExp(`^Inference Endpoint is required; it ${NAME}$`),
	],
	[
		'endpoint name that an expression makes a number',
		createJob({ endpoint: byName('={{ 42 }}') }),
		/^Inference Endpoint 42 must be a text value$/,
	],
	['queue name of 1 character', queue({ name: 'q' }), /^Queue Name "q" must be 2-63/],
	[
		'queue name of 64 characters',
		queue({ name: char64 }),
		/^Queue Name "ab{39}…" \(64 characters\) must be 2-63/,
	],
	[
		'queue name with capitals',
		queue({ name: 'ImageJobs' }),
		/^Queue Name "ImageJobs" must be 2-63/,
	],
	[
		'queue name starting with a digit',
		queue({ name: '1-jobs' }),
		/^Queue Name "1-jobs" must be 2-63/,
	],
	[
		'queue name left empty',
		queue({ name: '  ' }),
		new RegExp(`^Queue Name is required; it ${NAME}$`),
	],
	[
		'project name with capitals',
		queue({ project: 'Default' }),
		/^Project Name "Default" must be 2-63/,
	],
	[
		'queue description of 501 characters',
		queue({ options: { description: 'd'.repeat(501) } }),
		/^Description "d{40}…" \(501 characters\) must be at most 500 characters$/,
	],
	[
		'queue display name of 1 character',
		queue({ options: { displayName: 'Q' } }),
		/^Display Name "Q" must be 2-63 characters$/,
	],
	[
		'queue display name of 64 characters',
		queue({ options: { displayName: 'Q'.repeat(64) } }),
		/^Display Name "Q{40}…" \(64 characters\) must be 2-63 characters$/,
	],
	// Job body: input, metadata, webhook URL.
	[
		'job input that is not valid JSON',
		createJob({ input: '{"text": "unfinished' }),
		/^Input must be valid JSON \(.+\)$/,
	],
	['job input left empty', createJob({ input: '   ' }), /^Input is required: enter a JSON value/],
	[
		'metadata with 21 properties',
		createJob({ options: { metadata: metadata21 } }),
		/^Metadata \(an object\) must have at most 20 properties$/,
	],
	[
		'metadata that is a list',
		createJob({ options: { metadata: '[1, 2]' } }),
		/^Metadata \(a list of 2\) must be a JSON object$/,
	],
	[
		'metadata that is not valid JSON',
		createJob({ options: { metadata: '{order: 7}' } }),
		/^Metadata must be valid JSON/,
	],
	[
		'webhook URL of 2049 characters',
		createJob({ options: { webhookUrl: longUrl } }),
		/^Webhook URL "https:\/\/example\.com\/a+…" \(2049 characters\) must be at most 2048 characters$/,
	],
	[
		'webhook URL that is not a URL',
		createJob({ options: { webhookUrl: 'n8n.example.com/webhook' } }),
		/^Webhook URL "n8n\.example\.com\/webhook" must be a full http:\/\/ or https:\/\/ URL$/,
	],
	[
		'webhook URL with another scheme',
		createJob({ options: { webhookUrl: 'ftp://example.com/hook' } }),
		/^Webhook URL "ftp:\/\/example\.com\/hook" must be a full http/,
	],
	// Job IDs and waits.
	[
		'job ID that is not a UUID (Get)',
		jobById('get', '12345'),
		new RegExp(`^Job ID "12345" ${JOB_ID}`),
	],
	[
		'job ID with a path in it (Cancel)',
		jobById('cancel', '3f2a9c1e-8b4d-4e6f-9a0b-1c2d3e4f5a6b/../../queues'),
		new RegExp(
			`^Job ID "3f2a9c1e-8b4d-4e6f-9a0b-1c2d3e4f5a6b/\\.\\./…" \\(49 characters\\) ${JOB_ID}`,
		),
	],
	[
		'job ID that an expression makes empty (Wait for Completion)',
		jobById('waitForCompletion', '={{ "" }}'),
		new RegExp(`^Job ID "" ${JOB_ID}`),
	],
	[
		'job ID that an expression makes a number',
		jobById('get', '={{ 12345 }}'),
		new RegExp(`^Job ID "12345" ${JOB_ID}`),
	],
	[
		'timeout of 0 minutes',
		createAndWait({ timeoutMinutes: 0 }),
		/^Timeout \(Minutes\) 0 must be more than 0 minutes$/,
	],
	[
		'timeout of -5 minutes',
		{ ...jobById('waitForCompletion', '3f2a9c1e-8b4d-4e6f-9a0b-1c2d3e4f5a6b'), timeoutMinutes: -5 },
		/^Timeout \(Minutes\) -5 must be more than 0 minutes$/,
	],
	[
		'timeout over 7 days',
		createAndWait({ timeoutMinutes: 10081 }),
		/^Timeout \(Minutes\) 10081 must be at most 10080 minutes \(7 days\)$/,
	],
	// Catalogue paging: page 0 (the "From List" search), page size 0 and 101, limit 0, wrong type.
	['page 0 of the endpoint list search', {}, /^Unexpected page "0" while listing endpoints\.$/],
	[
		'page size 0',
		endpoints({ options: { pageSize: 0 } }),
		/^Page Size 0 must be between 1 and 100$/,
	],
	[
		'page size 101',
		endpoints({ options: { pageSize: 101 } }),
		/^Page Size 101 must be between 1 and 100$/,
	],
	[
		'page size that is text',
		endpoints({ options: { pageSize: 'ten' } }),
		/^Page Size "ten" must be a whole number$/,
	],
	['limit 0', endpoints({ limit: 0 }), /^Limit 0 must be at least 1$/],
	// Transcription input.
	[
		'transcription file URL that an expression makes empty',
		transcribe({}, '={{ $json.missing ?? "" }}'),
		/^Audio or Video URL "" must be a full http:\/\/ or https:\/\/ URL$/,
	],
	[
		'transcription file URL that is a file name',
		transcribe({}, 'meeting.mp3'),
		/^Audio or Video URL "meeting\.mp3" must be a full http/,
	],
	[
		'transcription language code that is a name',
		transcribe({ languageCode: 'english' }),
		/^Transcription language_code "english" must be a language code such as "en", "fr" or "pt-BR"$/,
	],
	[
		'transcription language code in capitals',
		transcribe({ languageCode: 'EN' }),
		/^Transcription language_code "EN" must be a language code/,
	],
	[
		'transcription into an unsupported language',
		transcribe({ llmTranslation: ['Klingon'] }),
		/^Transcription llm_translation "Klingon" has unsupported language "Klingon"; supported: English, French/,
	],
	[
		'transcription with a negative summary length',
		transcribe({ summarize: -5 }),
		/^Transcription summarize -5 must be 0 \(off\) or a positive word limit$/,
	],
	[
		'transcription summary length that is not whole',
		transcribe({ summarize: 2.5 }),
		/^Transcription summarize 2\.5 must be a whole number of words$/,
	],
	[
		'"translate to English" that is not true or false',
		transcribe({ translateToEnglish: 'to_fra' }),
		/^Transcription Options translateToEnglish "to_fra"/,
	],
	[
		'transcription endpoint name with capitals',
		{ ...transcribe({}), options: { endpointName: 'Transcribe' } },
		/^Endpoint Name "Transcribe" must be 2-63/,
	],
	[
		'transcription metadata with 21 properties',
		{ ...transcribe({}), options: { metadata: metadata21 } },
		/^Metadata \(an object\) must have at most 20 properties$/,
	],
	// Images.
	['image 255 pixels wide', image({ width: 255 }), /^Width 255 must be 256-2048 pixels$/, 'images'],
	[
		'image 2049 pixels wide',
		image({ width: 2049 }),
		/^Width 2049 must be 256-2048 pixels$/,
		'images',
	],
	[
		'image 2049 pixels high',
		image({ height: 2049 }),
		/^Height 2049 must be 256-2048 pixels$/,
		'images',
	],
	['image width that is text', image({ width: 'wide' }), /^Image Settings width "wide"/, 'images'],
	['image with 0 steps', image({ steps: 0 }), /^Steps 0 must be 1-150$/, 'images'],
	['image with 151 steps', image({ steps: 151 }), /^Steps 151 must be 1-150$/, 'images'],
	['image with a negative seed', image({ seed: -1 }), /^Seed -1 must be 0 or more$/, 'images'],
	[
		'image guidance scale of 31',
		image({ cfgScale: 31 }),
		/^Guidance Scale 31 must be 0-30$/,
		'images',
	],
	[
		'image with an empty prompt',
		image({}, { prompt: '   ' }),
		/^Prompt " {3}" must not be empty$/,
		'images',
	],
	[
		'image workflow name that is a path',
		image({}, { workflowName: '../prompt' }),
		/^Workflow Name "\.\.\/prompt" must be 1-64 letters, digits, hyphens or underscores/,
		'images',
	],
	[
		'image JPEG quality 0',
		image({}, { outputFormat: 'jpeg', quality: 0 }),
		/^Quality options\.quality 0 must be a whole number from 1 to 100$/,
		'images',
	],
	[
		'image webhook URL that is not a URL',
		image({}, { delivery: 'webhook', webhookUrl: 'hooks/images' }),
		/^Webhook URL "hooks\/images" must be a full http/,
		'images',
	],
	[
		'image webhook URL of 2049 characters',
		image({}, { delivery: 'webhook', webhookUrl: longUrl }),
		/^Webhook URL ".+" \(2049 characters\) must be at most 2048 characters$/,
		'images',
	],
	[
		'image output field with spaces',
		image({}, { binaryPropertyName: 'my image' }),
		/^Put Output File in Field "my image" must be 1-64 letters/,
		'images',
	],
	[
		'image graph that is not valid JSON',
		{ resource: 'image', operation: 'generate', source: 'graph', graph: '{"1": ' },
		/^Workflow Graph must be valid JSON/,
		'images',
	],
	[
		'image graph with no nodes',
		{ resource: 'image', operation: 'generate', source: 'graph', graph: '{}' },
		/^Workflow Graph \(an object\) must contain at least one node$/,
		'images',
	],
	[
		'image graph linking to a missing node',
		{
			resource: 'image',
			operation: 'generate',
			source: 'graph',
			graph: JSON.stringify({
				9: { class_type: 'SaveImage', inputs: { filename_prefix: 'x', images: ['8', 0] } },
			}),
		},
		/^Workflow Graph 9\.inputs\.images \(a list of 2\) links to node "8", which is not in the graph$/,
		'images',
	],
	// Chat.
	[
		'chat max tokens 0',
		chat({ maxTokens: 0 }),
		/^Maximum Number of Tokens 0 must be at least 1$/,
		'chat',
	],
	['chat temperature 3', chat({ temperature: 3 }), /^Sampling Temperature 3 must be 0-2$/, 'chat'],
	[
		'chat temperature -0.5',
		chat({ temperature: -0.5 }),
		/^Sampling Temperature -0\.5 must be 0-2$/,
		'chat',
	],
	['chat top P 0', chat({ topP: 0 }), /^Top P 0 must be greater than 0 and at most 1$/, 'chat'],
	[
		'chat frequency penalty 3',
		chat({ frequencyPenalty: 3 }),
		/^Frequency Penalty 3 must be -2 to 2$/,
		'chat',
	],
	[
		'chat prompt that an expression makes blank',
		chat({}, { prompt: '={{ "  " }}' }),
		/^Prompt is required$/,
		'chat',
	],
	[
		'chat conversation with no messages',
		conversation([]),
		/^Messages \(a list of 0\) must contain at least one message$/,
		'chat',
	],
	[
		'chat message with an unknown role',
		conversation([{ role: 'robot', content: 'beep' }]),
		/^Messages 1 role "robot" must be "system", "user" or "assistant"$/,
		'chat',
	],
	[
		'chat message whose content is a number',
		conversation([{ role: 'user', content: 42 }]),
		/^Messages 1 content 42 must be a text value$/,
		'chat',
	],
	[
		'chat conversation whose messages are all blank',
		conversation([{ role: 'user', content: '  ' }]),
		/^Chat messages \(a list of 1\) must contain a message with some text$/,
		'chat',
	],
];

/** Literal values n8n refuses before running: [case, parameters, parameter marked, what the editor says]. */
const editorCases: Array<[string, INodeParameters, string, RegExp]> = [
	[
		'endpoint name of 1 character',
		createJob({ endpoint: byName('a') }),
		'endpoint',
		/^Not a valid endpoint name: 2-63 lower-case letters/,
	],
	[
		'endpoint name of 64 characters',
		createJob({ endpoint: byName(char64) }),
		'endpoint',
		/^Not a valid endpoint name/,
	],
	[
		'endpoint name with capitals',
		createJob({ endpoint: byName('Transcribe') }),
		'endpoint',
		/^Not a valid endpoint name/,
	],
	[
		'endpoint name with an underscore',
		createJob({ endpoint: byName('summarize_text') }),
		'endpoint',
		/^Not a valid endpoint name/,
	],
	[
		'endpoint name ending in a hyphen',
		createJob({ endpoint: byName('summarize-') }),
		'endpoint',
		/^Not a valid endpoint name/,
	],
	[
		'endpoint name left empty',
		createJob({ endpoint: byName('') }),
		'endpoint',
		/^Parameter "Inference Endpoint" is required\.$/,
	],
	[
		'job ID left empty',
		jobById('waitForCompletion', ''),
		'jobId',
		/^Parameter "Job ID" is required\.$/,
	],
	[
		'transcription without a file URL',
		transcribe({}, ''),
		'url',
		/^Parameter "Audio or Video URL" is required\.$/,
	],
	[
		'chat with an empty prompt',
		chat({}, { prompt: '' }),
		'prompt',
		/^Parameter "Prompt" is required\.$/,
	],
];

/** The issues n8n's editor shows on the node's fields for these parameters. */
function editorIssues(parameters: INodeParameters): Record<string, string[]> {
	const description = new GpuCloud().description;
	const node: INode = {
		id: 'node',
		name: 'GPU Cloud',
		type: 'gpuCloud',
		typeVersion: 1,
		position: [0, 0],
		parameters,
	};
	const full =
		NodeHelpers.getNodeParameters(
			description.properties,
			parameters,
			true,
			false,
			node,
			description,
		) ?? {};
	return (
		NodeHelpers.getNodeParametersIssues(
			description.properties,
			{ ...node, parameters: full },
			description,
		)?.parameters ?? {}
	);
}

describe('n8n refuses to run a workflow whose fields break a rule, and marks the field', () => {
	test.each(editorCases)('%s', async (_name, parameters, field, message) => {
		// n8n 2.41 names the node and the issue where older lines said only "The workflow has issues".
		await expect(rig.harness.run(gpuCloudWorkflow(parameters))).rejects.toThrow(
			"The 'GPU Cloud' node has issues",
		);
		expect(editorIssues(parameters)).toEqual({
			[field]: expect.arrayContaining([expect.stringMatching(message)]),
		});
		expect(rig.emulator.requests).toEqual([]);
	});
});

describe('invalid input stops the node with an error naming the field, before any request', () => {
	test.each(cases)('%s', async (name, parameters, message, credential = 'management') => {
		if (name.startsWith('page 0')) {
			const spec = gpuCloudWorkflow(
				createJob({ endpoint: { __rl: true, mode: 'list', value: '' } }),
			);
			await expect(
				rig.harness.listSearch(spec, 'GPU Cloud', 'searchEndpoints', undefined, '0'),
			).rejects.toThrow(message);
		} else {
			const execution = await rig.harness.run(gpuCloudWorkflow(parameters, { credential }));
			expect(execution.status).toBe('error');
			expect(errorOf(execution)).toMatchObject({
				node: 'GPU Cloud',
				message: expect.stringMatching(message),
			});
		}
		expect(rig.emulator.requests).toEqual([]);
	});
});

describe('what only the service can judge', () => {
	test("an endpoint that does not exist: one request (the endpoint read before any job is created), and the service's 404 named in the error", async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(createJob({ endpoint: byName('no-such-endpoint') })),
		);
		expect(execution.status).toBe('error');
		expect(errorOf(execution)?.message).toMatch(/no-such-endpoint/);
		expect(errorOf(execution)?.message).toMatch(/404/);
		expect(rig.emulator.requests.map((request) => [request.method, request.status])).toEqual([
			['GET', 404],
		]);
	});
});
