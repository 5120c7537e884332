import { FIELD_BLOCK_PREFIX } from '../../slack-app/messages/job-fields';
import { ACTIONS } from '../../slack-app/messages/actions';
import {
	describeInputSchema,
	inputSchemaProblems,
	parseInputSchema,
} from '../../shared/input-schema';
import { Stack } from './harness';

/**
 * Every way in has the limits of the command: a button value comes back from outside and is checked
 * with the command's own schema; input the app cannot take gets an ephemeral usage error naming the
 * field and the rule, with nothing created and nothing posted in the channel; a job's input is
 * checked against the endpoint's published input_schema before the job is created.
 */

describe('input limits on every path', () => {
	let stack: Stack;
	beforeAll(async () => {
		stack = await Stack.start();
	});
	afterAll(() => stack.close());

	const imageCalls = () => stack.serviceCalls('POST', /^\/workloads\/image\//);
	const jobCreates = () => stack.serviceCalls('POST', /\/jobs$/);

	it('a crafted Regenerate click asking for 16 images generates nothing and says why', async () => {
		const channel = 'C0CRAFTED';
		await stack.command('image a red fox', 'U0CRAFT', channel);
		const parent = await stack.waitForParent(1, channel);
		const done = await stack.waitForParentText(parent.ts, /Succeeded in/, 15_000, channel);
		await stack.app.idle();
		const before = imageCalls();
		const crafted = JSON.stringify({ prompt: 'a red fox', count: 16 });
		await stack.standin.app.click({
			user: 'U0CRAFT',
			channel,
			actionId: ACTIONS.regenerateImage,
			value: crafted,
			message: done,
		});
		const text = await stack.waitForEphemeral(/count/, 'U0CRAFT');
		expect(text).toMatch(/from 1 to 4/);
		await stack.app.idle();
		expect(imageCalls()).toBe(before);
		expect(stack.replies(parent.ts, channel).flatMap((message) => message.fileIds)).toHaveLength(1);
	});

	it('deeply nested JSON (10,000 levels) in /gpu job is a usage error, not a public failure', async () => {
		const channel = 'C0NESTED';
		const before = jobCreates();
		const nested = `${'['.repeat(10_000)}1${']'.repeat(10_000)}`;
		await stack.command(`job echo {"text": ${nested}}`, 'U0NEST', channel);
		const text = await stack.waitForEphemeral(/nest/, 'U0NEST');
		expect(text).toMatch(/at most \d+ levels/);
		await stack.app.idle();
		expect(stack.parents(channel)).toHaveLength(0);
		expect(jobCreates()).toBe(before);
	});

	it("job input that does not match the endpoint's input_schema is refused before a job is created", async () => {
		const channel = 'C0SCHEMA';
		const before = jobCreates();
		await stack.command('job sentiment {"txt": "hi"}', 'U0SCHEMA', channel);
		const text = await stack.waitForEphemeral(/sentiment/, 'U0SCHEMA');
		expect(text).toMatch(/text.{0,40}required/);
		expect(text).toMatch(/txt/);
		await stack.app.idle();
		expect(stack.parents(channel)).toHaveLength(0);
		expect(jobCreates()).toBe(before);
		// The control: the input the endpoint expects runs.
		await stack.command('job sentiment {"text": "what a lovely day"}', 'U0SCHEMA', channel);
		const parent = await stack.waitForParent(1, channel);
		await stack.waitForParentText(parent.ts, /Succeeded in/, 15_000, channel);
	});

	it('/gpu endpoints shows what input each endpoint expects', async () => {
		await stack.command('endpoints sentiment', 'U0BROWSE', 'C0BROWSE');
		const text = await stack.waitForEphemeral(/Sentiment Analysis/, 'U0BROWSE');
		expect(text).toMatch(/Input: .*text/);
	});

	it('the job form shows what input the chosen endpoint expects', async () => {
		await stack.command('job sentiment', 'U0FORM', 'C0FORM');
		const view = await stack.standin.waitFor(
			() =>
				[...stack.standin.workspace.views.values()].find(
					(open) => JSON.stringify(open.view).includes('Run job') && open.user === 'U0FORM',
				),
			10_000,
			'the job form',
		);
		// Its fields: `text`, required, as the schema says.
		expect(view.view.blocks).toEqual(
			expect.arrayContaining([
				expect.objectContaining({
					type: 'input',
					block_id: `${FIELD_BLOCK_PREFIX}text`,
					optional: false,
				}),
			]),
		);
	});
});

describe('checking input against a published input_schema', () => {
	const schema = parseInputSchema(
		JSON.stringify({
			type: 'object',
			properties: {
				text: { type: 'string', minLength: 1 },
				max_words: { type: 'integer', minimum: 1, maximum: 1000 },
				mode: { enum: ['fast', 'exact'] },
			},
			required: ['text'],
			additionalProperties: false,
		}),
	);
	if (!schema) throw new Error('the schema did not parse');

	it.each([
		[{ text: 'hi' }, []],
		[{ text: 'hi', max_words: 5, mode: 'fast' }, []],
		[{ txt: 'hi' }, ['input.text is required', 'input.txt is not a field of this endpoint']],
		[{ text: '' }, ['input.text must have at least 1 characters']],
		[{ text: 'hi', max_words: 2.5 }, ['input.max_words must be integer, not number']],
		[{ text: 'hi', max_words: 5000 }, ['input.max_words must be at most 1000']],
		[{ text: 'hi', mode: 'slow' }, ['input.mode must be one of "fast", "exact"']],
		[['text'], ['input must be object, not array']],
	])('%j: %j', (input, problems) => {
		expect(inputSchemaProblems(schema, input)).toEqual(problems);
	});

	it('leaves what it cannot read to the service', () => {
		expect(parseInputSchema('not json')).toBeUndefined();
		expect(
			inputSchemaProblems(
				{
					type: 'object',
					properties: { id: { type: 'string', pattern: '^[a-z]+$', format: 'uuid' } },
				},
				{ id: 'ABC' },
			),
		).toEqual([]);
	});

	it('says what an endpoint expects', () => {
		expect(describeInputSchema(schema)).toBe('text (string, required), max_words (integer), mode');
	});
});
