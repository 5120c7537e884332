import { JOB_FORM } from '../../slack-app/messages/modal';
import { VOICES, WIDE_FORM_FIELDS } from '../../emulator/endpoints/form-shapes';
import { content, Stack } from './harness';
import {
	checkbox,
	choose as chooseEndpoint,
	field,
	fieldBlocks,
	jobsOn,
	nextJob,
	number,
	openForm as openJobForm,
	select,
	stateOf,
	text,
	url,
} from './job-form-support';

/**
 * The job form built from the chosen endpoint's schema: choosing an endpoint rebuilds the modal
 * (views.update, which the stand-in refuses when a view breaks a Slack limit) with one input block
 * per property; a submission becomes the job's input, and a wrong value comes back on its field.
 */

const CHANNEL = 'C0FIELDS';

let stack: Stack;
beforeAll(async () => {
	stack = await Stack.start();
});
afterAll(() => stack.close());

const openForm = (user: string) => openJobForm(stack, user, CHANNEL);
const choose = (user: string, viewId: string, endpoint: string) =>
	chooseEndpoint(stack, user, viewId, endpoint);
const nextJobInput = async (endpoint: string, before: number) =>
	(await nextJob(stack, endpoint, before)).input;
const jobCount = (endpoint: string) => jobsOn(stack, endpoint).length;

describe('choosing an endpoint rebuilds the form with its fields', () => {
	it('one block per property, the element its type asks for, optional unless required', async () => {
		const opened = await openForm('U0FLD1');
		const { blocks } = await choose('U0FLD1', opened.id, 'product-listing');
		const fields = fieldBlocks(blocks);
		expect([...fields.keys()].slice(0, 2)).toEqual(['product_name', 'category']);
		expect(fields.get('product_name')).toMatchObject({
			optional: false,
			label: { text: 'Product name' },
			hint: { text: 'What the product is called.' },
			element: { type: 'plain_text_input', multiline: false },
		});
		expect(fields.get('category')?.element).toMatchObject({ type: 'static_select' });
		expect(fields.get('tone')?.element).toMatchObject({
			type: 'static_select',
			initial_option: { value: 'friendly' },
		});
		expect(fields.get('max_words')).toMatchObject({
			optional: true,
			element: { type: 'number_input', is_decimal_allowed: false },
		});
		expect(fields.get('price')?.element).toMatchObject({
			type: 'number_input',
			is_decimal_allowed: true,
		});
		expect(fields.get('image_url')?.element).toMatchObject({ type: 'url_text_input' });
		expect(fields.get('notes')?.element).toMatchObject({ multiline: true });
		expect(fields.get('include_seo')?.element).toMatchObject({
			type: 'checkboxes',
			initial_options: [{ value: 'true' }],
		});
		expect(fields.get('features')).toMatchObject({
			label: { text: 'Features (JSON)' },
			element: { type: 'plain_text_input', multiline: true },
		});
		expect(blocks.some((block) => block.block_id === JOB_FORM.advanced.block)).toBe(true);
		expect(blocks.some((block) => block.block_id === JOB_FORM.input.block)).toBe(false);
	});

	it('switching endpoint changes the fields; a schema that is not JSON keeps the JSON box, saying why', async () => {
		const opened = await openForm('U0FLD2');
		await choose('U0FLD2', opened.id, 'product-listing');
		const voice = await choose('U0FLD2', opened.id, 'voice-over');
		expect([...fieldBlocks(voice.blocks).keys()]).toEqual(['script', 'voice', 'speed']);
		const legacy = await choose('U0FLD2', opened.id, 'legacy-ocr');
		expect(fieldBlocks(legacy.blocks).size).toBe(0);
		const input = legacy.blocks.find((block) => block.block_id === JOB_FORM.input.block);
		expect(input?.hint?.text).toMatch(/^The endpoint's input schema is not valid JSON/);
	});

	it('every endpoint of the catalogue opens a view Slack accepts', async () => {
		const opened = await openForm('U0FLD0');
		for (const { name } of stack.emulator.endpoints) {
			const { blocks } = await choose('U0FLD0', opened.id, name);
			expect(blocks.length).toBeLessThanOrEqual(100);
			const fields = fieldBlocks(blocks).size;
			const json = blocks.some((block) => block.block_id === JOB_FORM.input.block);
			// Fields, or the JSON box: never both, never neither.
			expect(fields > 0).toBe(!json);
		}
	});

	it(`a ${WIDE_FORM_FIELDS}-property schema opens a valid view of 100 blocks, saying where the others go`, async () => {
		const opened = await openForm('U0FLD3');
		const { blocks } = await choose('U0FLD3', opened.id, 'survey-intake');
		expect(blocks.length).toBeLessThanOrEqual(100);
		const fields = fieldBlocks(blocks);
		expect([...fields.keys()].slice(0, 2)).toEqual(['q001', 'q002']);
		const note = blocks.find((block) => block.type === 'section')?.text?.text;
		expect(note).toBe(
			`${fields.size} of the ${WIDE_FORM_FIELDS} fields of \`survey-intake\` are shown (required ones first); give any other in *Advanced: JSON*.`,
		);
	});

	it(`a ${VOICES.length}-value choice lists Slack's 100 options and says how to give another`, async () => {
		const opened = await openForm('U0FLD4');
		const { blocks } = await choose('U0FLD4', opened.id, 'voice-over');
		const voice = fieldBlocks(blocks).get('voice');
		expect(voice?.element?.options).toHaveLength(100);
		expect(voice?.hint?.text).toBe(
			`Who reads it. 100 of ${VOICES.length} choices are listed; for another, give "voice" in Advanced: JSON.`,
		);
	});
});

describe('submitting the fields', () => {
	it("the job's input is the fields, typed as the schema says, untouched ones as they started", async () => {
		const opened = await openForm('U0FLD5');
		const { id, blocks } = await choose('U0FLD5', opened.id, 'product-listing');
		const before = stack.parents(CHANNEL).length;
		const jobs = jobCount('product-listing');
		const reply = await stack.standin.app.submitView({
			user: 'U0FLD5',
			viewId: id,
			values: stateOf(blocks, {
				[JOB_FORM.endpoint.block]: { [JOB_FORM.endpoint.action]: select('product-listing') },
				[field('product_name')]: { value: text('Trail shoe') },
				[field('category')]: { value: select('sports') },
				[field('max_words')]: { value: number('120') },
				[field('price')]: { value: number('59.5') },
				[field('image_url')]: { value: url('https://shop.example.com/shoe.png') },
				[field('include_seo')]: { value: checkbox(false) },
				[field('features')]: { value: text('["light", "waterproof"]') },
			}),
		});
		expect(reply.body).toBe('');
		const parent = await stack.waitForParent(before + 1, CHANNEL);
		expect(content(parent)).toContain('ran a job on `product-listing`');
		// The fields filled, and those left as they started (the schema's defaults).
		expect(await nextJobInput('product-listing', jobs)).toEqual({
			product_name: 'Trail shoe',
			category: 'sports',
			tone: 'friendly',
			max_words: 120,
			price: 59.5,
			image_url: 'https://shop.example.com/shoe.png',
			include_seo: false,
			language: 'en',
			temperature: 0.7,
			features: ['light', 'waterproof'],
		});
	});

	it('transcribe from its fields makes the same job input as /gpu transcribe', async () => {
		const audio = 'https://files.example/weekly-meeting.mp3';
		const jobs = jobCount('transcribe');
		await stack.command(
			`transcribe ${audio} --language fr --summary 50 --word-timestamps`,
			'U0FLD8',
			CHANNEL,
		);
		const byCommand = await nextJobInput('transcribe', jobs);
		const opened = await openForm('U0FLD8');
		const { id, blocks } = await choose('U0FLD8', opened.id, 'transcribe');
		const reply = await stack.standin.app.submitView({
			user: 'U0FLD8',
			viewId: id,
			values: stateOf(blocks, {
				[JOB_FORM.endpoint.block]: { [JOB_FORM.endpoint.action]: select('transcribe') },
				[field('url')]: { value: url(audio) },
				[field('language_code')]: { value: text('fr') },
				[field('summarize')]: { value: number('50') },
				[field('word_level_timestamps')]: { value: checkbox(true) },
			}),
		});
		expect(reply.body).toBe('');
		expect(await nextJobInput('transcribe', jobs + 1)).toEqual(byCommand);
		expect(byCommand).toEqual({
			url: audio,
			language_code: 'fr',
			summarize: 50,
			word_level_timestamps: true,
		});
	});

	it('a voice past the listed 100 goes through Advanced: JSON', async () => {
		const opened = await openForm('U0FLD6');
		const { id, blocks } = await choose('U0FLD6', opened.id, 'voice-over');
		const before = stack.parents(CHANNEL).length;
		const jobs = jobCount('voice-over');
		const reply = await stack.standin.app.submitView({
			user: 'U0FLD6',
			viewId: id,
			values: stateOf(blocks, {
				[JOB_FORM.endpoint.block]: { [JOB_FORM.endpoint.action]: select('voice-over') },
				[field('script')]: { value: text('Hello there') },
				[JOB_FORM.advanced.block]: {
					[JOB_FORM.advanced.action]: text(`{"voice": "${VOICES[450]}"}`),
				},
			}),
		});
		expect(reply.body).toBe('');
		await stack.waitForParent(before + 1, CHANNEL);
		expect(await nextJobInput('voice-over', jobs)).toEqual({
			script: 'Hello there',
			voice: VOICES[450],
			speed: 1,
		});
	});

	it('a wrong value comes back on its field and nothing is created', async () => {
		const opened = await openForm('U0FLD7');
		const { id, blocks } = await choose('U0FLD7', opened.id, 'product-listing');
		const jobs = jobCount('product-listing');
		const reply = await stack.standin.app.submitView({
			user: 'U0FLD7',
			viewId: id,
			values: stateOf(blocks, {
				[JOB_FORM.endpoint.block]: { [JOB_FORM.endpoint.action]: select('product-listing') },
				[field('category')]: { value: select('home') },
				[field('max_words')]: { value: number('5') },
				[field('features')]: { value: text('["light"') },
			}),
		});
		const body = JSON.parse(reply.body) as {
			response_action: string;
			errors: Record<string, string>;
		};
		expect(body).toEqual({
			response_action: 'errors',
			errors: {
				[field('product_name')]: 'This field is required.',
				[field('max_words')]: 'This field must be at least 20.',
				[field('features')]: expect.stringMatching(/^This field must be JSON/),
			},
		});
		// Each error names a block the view has: Slack shows it under that field.
		for (const block of Object.keys(body.errors))
			expect(blocks.some((candidate) => candidate.block_id === block)).toBe(true);
		await stack.app.idle();
		expect(jobCount('product-listing')).toBe(jobs);
	});
});
