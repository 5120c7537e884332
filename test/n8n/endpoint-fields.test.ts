import { NodeHelpers, type INodeParameters } from 'n8n-workflow';
import { GpuCloud } from '../../nodes/GpuCloud/GpuCloud.node';
import { VOICE_COUNT, WIDE_FORM_FIELDS } from '../../emulator/endpoints/form-shapes';
import {
	byName,
	gpuCloudWorkflow,
	managementRequests,
	mapped,
	startRig,
	type Rig,
} from './fixtures';
import { errorOf, outputOf } from './harness';

/**
 * Node version 2: Job > Create and Create and Wait take the chosen endpoint's input as fields built
 * from its published schema (n8n's resourceMapper), or as JSON ("Using JSON", version 1's box).
 * Version 1 workflows keep their JSON input unchanged.
 */

let rig: Rig;

beforeAll(async () => {
	rig = await startRig({ jobDurationMs: 50 });
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

const VERSION_2 = { typeVersion: 2 };

function jobParameters(endpoint: INodeParameters, extra: INodeParameters = {}): INodeParameters {
	return { resource: 'job', operation: 'create', endpoint, ...extra };
}

/** The fields the editor shows for an endpoint: what the node's resource-mapping method answers. */
async function fieldsFor(endpoint: INodeParameters) {
	return await rig.harness.resourceMapping(
		gpuCloudWorkflow(jobParameters(endpoint), { node: VERSION_2 }),
		'GPU Cloud',
		'getEndpointFields',
	);
}

function createdInputs(): unknown[] {
	return rig.emulator.jobsOf(rig.emulator.organization).map((job) => job.input);
}

describe("the endpoint's fields, as the editor loads them", () => {
	test('one field per property: name, type, required mark, choices, default', async () => {
		const { fields } = await fieldsFor(byName('product-listing'));
		const byId = new Map(fields.map((field) => [field.id, field]));
		expect(fields.map((field) => field.id)).toEqual([
			'product_name',
			'category',
			'tone',
			'max_words',
			'price',
			'image_url',
			'notes',
			'include_seo',
			'language',
			'temperature',
			'length',
			'features',
			'dimensions',
			'brand_kit',
		]);
		expect(byId.get('product_name')).toMatchObject({
			displayName: 'Product name',
			type: 'string',
			required: true,
			display: true,
		});
		expect(byId.get('category')).toMatchObject({
			type: 'options',
			required: true,
			options: expect.arrayContaining([{ name: 'books', value: 'books' }]),
		});
		expect(byId.get('tone')).toMatchObject({ type: 'options', defaultValue: 'friendly' });
		expect(byId.get('max_words')).toMatchObject({ type: 'number', required: false });
		expect(byId.get('image_url')).toMatchObject({ type: 'url' });
		expect(byId.get('include_seo')).toMatchObject({ type: 'boolean', defaultValue: true });
		expect(byId.get('features')).toMatchObject({ type: 'array' });
		expect(byId.get('dimensions')).toMatchObject({ type: 'object' });
		expect(byId.get('brand_kit')).toMatchObject({ type: 'string' });
	});

	test(`reads the ${WIDE_FORM_FIELDS}-property schema and the ${VOICE_COUNT}-voice choice list whole`, async () => {
		expect((await fieldsFor(byName('survey-intake'))).fields).toHaveLength(WIDE_FORM_FIELDS);
		const voice = (await fieldsFor(byName('voice-over'))).fields.find((f) => f.id === 'voice');
		expect(voice?.options).toHaveLength(VOICE_COUNT);
	});

	test('a schema that cannot be shown as fields, or an endpoint set by expression, says to use JSON', async () => {
		expect(await fieldsFor(byName('legacy-ocr'))).toEqual({
			fields: [],
			emptyFieldsNotice: expect.stringMatching(/not valid JSON.*Using JSON/),
		});
		expect(await fieldsFor(byName('={{ $json.endpoint }}'))).toEqual({
			fields: [],
			emptyFieldsNotice: expect.stringMatching(/expression.*Using JSON/),
		});
	});
});

describe('Job > Create (version 2) with the fields', () => {
	test("the job's input is the fields, typed as the schema says, expressions resolved per item", async () => {
		const { fields } = await fieldsFor(byName('product-listing'));
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				jobParameters(byName('product-listing'), {
					inputFields: mapped(fields, {
						product_name: '={{ $json.name }}',
						category: 'sports',
						max_words: 120,
						include_seo: false,
						features: '["light", "waterproof"]',
						notes: '',
					}),
				}),
				{ node: VERSION_2, items: [{ name: 'Trail shoe' }, { name: 'Road shoe' }] },
			),
		);
		expect(errorOf(execution)).toBeUndefined();
		expect(outputOf(execution, 'GPU Cloud')).toHaveLength(2);
		const expected = (name: string) => ({
			product_name: name,
			category: 'sports',
			max_words: 120,
			include_seo: false,
			features: ['light', 'waterproof'],
		});
		expect(createdInputs().slice(-2)).toEqual([expected('Trail shoe'), expected('Road shoe')]);
	});

	test('a value the schema refuses fails before any job is created, naming the field', async () => {
		const { fields } = await fieldsFor(byName('product-listing'));
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				jobParameters(byName('product-listing'), {
					inputFields: mapped(fields, { product_name: 'Lamp', category: 'home', max_words: 5 }),
				}),
				{ node: VERSION_2 },
			),
		);
		expect(errorOf(execution)?.message).toBe(
			'Field "max_words" must be at least 20 (input_schema of endpoint "product-listing")',
		);
		expect(creates()).toBe(0);
	});

	test('a required field left empty is named', async () => {
		const { fields } = await fieldsFor(byName('product-listing'));
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				jobParameters(byName('product-listing'), {
					inputFields: mapped(fields, { product_name: '', category: 'home' }),
				}),
				{ node: VERSION_2 },
			),
		);
		expect(errorOf(execution)?.message).toMatch(/^Field "product_name" is required/);
		expect(creates()).toBe(0);
	});

	test('fields on an endpoint whose schema is not understood fail saying to use JSON', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(jobParameters(byName('legacy-ocr'), { inputFields: mapped([], {}) }), {
				node: VERSION_2,
			}),
		);
		expect(errorOf(execution)?.message).toMatch(/not valid JSON.*Using JSON/);
		expect(creates()).toBe(0);
	});

	test('"Using JSON" takes the whole input as JSON, on any endpoint', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				jobParameters(byName('legacy-ocr'), {
					inputMode: 'json',
					input: '{"url": "https://files.example.com/page.png"}',
				}),
				{ node: VERSION_2 },
			),
		);
		expect(errorOf(execution)).toBeUndefined();
		expect(createdInputs().at(-1)).toEqual({ url: 'https://files.example.com/page.png' });
	});
});

describe('Job > Create and Wait (version 2) with the fields', () => {
	test('waits for the job made of the fields and returns its output', async () => {
		const { fields } = await fieldsFor(byName('voice-over'));
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				{
					resource: 'job',
					operation: 'createAndWait',
					endpoint: byName('voice-over'),
					inputFields: mapped(fields, {
						script: 'Hello there',
						voice: 'en-gb-voice-002',
						speed: 1.5,
					}),
					options: {},
				},
				{ node: VERSION_2 },
			),
		);
		expect(errorOf(execution)).toBeUndefined();
		expect(outputOf(execution, 'GPU Cloud')[0].json).toMatchObject({
			status: 'succeeded',
			output: { received: { script: 'Hello there', voice: 'en-gb-voice-002', speed: 1.5 } },
		});
	});
});

describe('transcription, as its own operation and as a plain endpoint', () => {
	test('Transcription > Transcribe and Job > Create on transcribe with its fields make the same job input', async () => {
		const url = 'https://files.example/weekly-meeting.mp3?signature=abc';
		const transcribed = await rig.harness.run(
			gpuCloudWorkflow({
				resource: 'transcription',
				operation: 'transcribe',
				url,
				transcriptionOptions: { languageCode: 'fr', diarization: true, summarize: 50 },
			}),
		);
		expect(errorOf(transcribed)).toBeUndefined();
		const byOperation = createdInputs().at(-1);
		const { fields } = await fieldsFor(byName('transcribe'));
		// Required by the schema, but a media field may get a file instead (media-fields-binary.test.ts).
		expect(fields.find((field) => field.id === 'url')).toMatchObject({ required: false });
		const created = await rig.harness.run(
			gpuCloudWorkflow(
				jobParameters(byName('transcribe'), {
					inputFields: mapped(fields, {
						url,
						language_code: 'fr',
						diarization: true,
						summarize: 50,
					}),
				}),
				{ node: VERSION_2 },
			),
		);
		expect(errorOf(created)).toBeUndefined();
		expect(createdInputs().at(-1)).toEqual(byOperation);
		expect(byOperation).toEqual({ url, language_code: 'fr', diarization: true, summarize: 50 });
	});
});

describe('version 1 workflows', () => {
	const description = new GpuCloud().description;
	const defaultsAt = (typeVersion: number) =>
		NodeHelpers.getNodeParameters(
			description.properties,
			{ resource: 'job', operation: 'create' },
			true,
			false,
			{ typeVersion, parameters: {} } as never,
			description,
		);

	test('the node offers version 2 to new workflows and still loads version 1', () => {
		expect(description.version).toEqual([1, 2]);
		expect(defaultsAt(1)).toMatchObject({ input: '{\n  "url": ""\n}' });
		expect(defaultsAt(1)).not.toHaveProperty('inputMode');
		expect(defaultsAt(1)).not.toHaveProperty('inputFields');
		expect(defaultsAt(2)).toMatchObject({ inputMode: 'fields' });
		expect(defaultsAt(2)).not.toHaveProperty('input');
	});

	test('a version 1 Job > Create runs its JSON input unchanged', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				jobParameters(byName('summarize-text'), { input: '{"text": "Short text."}' }),
			),
		);
		expect(errorOf(execution)).toBeUndefined();
		expect(createdInputs().at(-1)).toEqual({ text: 'Short text.' });
	});
});
