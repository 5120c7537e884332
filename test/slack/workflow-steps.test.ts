import { imageSize } from '../../shared';
import { STEPS } from '../../slack-app/listeners/functions';
import type { StepExecution } from '../../slack-standin/workspace';
import { content, Stack, USER } from './harness';

/**
 * Workflow Builder's "Run a GPU job" step as Slack runs it: `function_executed` with the step's
 * inputs and a per-run token, through signed requests on the stand-in; the step ends when its job
 * does (by poll here), once, also when the app restarted while the job ran.
 */

const CREATES = /\/inference-endpoints\/[^/]+\/jobs$/;
const CHANNEL = 'C0FLOWS';

let stack: Stack;
beforeAll(async () => {
	stack = await Stack.start({ emulator: { jobDurationMs: 300 } });
});
afterAll(() => stack.close());

function runStep(inputs: Record<string, unknown>) {
	return stack.standin.app.functionExecuted(STEPS.runGpuJob, {
		channel_id: CHANNEL,
		user_id: USER,
		...inputs,
	});
}

function ended(execution: StepExecution): Promise<StepExecution> {
	return stack.standin.waitFor(
		() => (execution.state === 'running' ? undefined : execution),
		60_000,
		`step ${execution.id} to end`,
	);
}

const completions = () =>
	stack.standin.api
		.callsOf('functions.completeSuccess')
		.concat(stack.standin.api.callsOf('functions.completeError'));

it('runs the job and completes the step with its id, status and output when the job ends', async () => {
	const before = completions().length;
	const { execution, reply } = await runStep({
		endpoint: stack.emulator.genericEndpoint,
		input: '{"greeting": "hello from a workflow"}',
	});
	expect(reply.status).toBe(200);
	const done = await ended(execution);
	expect(done.state).toBe('completed');
	expect(done.outputs).toMatchObject({ status: 'succeeded' });
	const jobId = String(done.outputs?.job_id);
	expect(stack.emulator.getJob(jobId)?.input).toEqual({ greeting: 'hello from a workflow' });
	expect(String(done.outputs?.output)).toContain('hello from a workflow');
	// The job's thread shows it as any /gpu job does.
	const parent = stack.parents(CHANNEL).find((message) => content(message).includes(jobId));
	expect(parent).toBeDefined();
	await stack.app.idle();
	expect(completions().length - before).toBe(1);
});

it('fails at once, creating nothing, when the input is not JSON or the endpoint does not exist', async () => {
	const createsBefore = stack.serviceCalls('POST', CREATES);
	const notJson = await runStep({ endpoint: stack.emulator.genericEndpoint, input: '{oops' });
	expect((await ended(notJson.execution)).error).toMatch(/The step's Input must be JSON/);
	const noEndpoint = await runStep({ endpoint: 'no-such-endpoint', input: '{}' });
	expect((await ended(noEndpoint.execution)).error).toMatch(
		/There is no endpoint "no-such-endpoint"/,
	);
	const noChannel = await runStep({
		endpoint: stack.emulator.genericEndpoint,
		input: '{}',
		channel_id: 'general',
	});
	expect((await ended(noChannel.execution)).error).toBe(
		"The step's inputs are not usable: check channel_id.",
	);
	await stack.app.idle();
	expect(stack.serviceCalls('POST', CREATES)).toBe(createsBefore);
});

it('fails the step with the reason when its job is cancelled', async () => {
	const { execution } = await runStep({
		endpoint: stack.emulator.slowEndpoint,
		input: '{"long": true}',
	});
	const parent = await stack.standin.waitFor(
		() => stack.parents(CHANNEL).find((message) => /Cancel/.test(content(message))),
		10_000,
		'the running job’s parent with Cancel',
	);
	const jobId = /[0-9a-f-]{36}/.exec(content(parent))?.[0] ?? '';
	await stack.command(`cancel ${jobId}`, USER, CHANNEL);
	expect((await ended(execution)).error).toBe(`The GPU job ${jobId} was cancelled.`);
});

it('completes the step once after the app restarted while the job ran', async () => {
	const before = completions().length;
	const { execution } = await runStep({
		endpoint: stack.emulator.slowEndpoint,
		input: '{"across": "a restart"}',
	});
	await stack.standin.waitFor(
		() =>
			stack.emulator.requests.some(
				(request) => CREATES.test(request.path) && request.body?.includes('a restart'),
			) || undefined,
		10_000,
		'the job created',
	);
	await stack.app.stop();
	await stack.startApp();
	const done = await ended(execution);
	expect(done.state).toBe('completed');
	expect(stack.emulator.getJob(String(done.outputs?.job_id))?.input).toEqual({
		across: 'a restart',
	});
	await stack.app.idle();
	expect(completions().length - before).toBe(1);
});

it('is not run for a callback id the manifest does not define', async () => {
	await expect(stack.standin.app.functionExecuted('no_such_step', {})).rejects.toThrow(
		/defines no step "no_such_step"/,
	);
});

describe('Ask a model', () => {
	it("completes with the model's whole answer to the question", async () => {
		const chatsBefore = stack.serviceCalls('POST', /\/v1\/chat\/completions$/);
		const { execution } = await stack.standin.app.functionExecuted(STEPS.askModel, {
			question: 'What is an interruptible GPU node?',
			channel_id: CHANNEL,
			user_id: USER,
		});
		const done = await ended(execution);
		expect(done.state).toBe('completed');
		expect(String(done.outputs?.answer)).toContain('What is an interruptible GPU node?');
		expect(stack.serviceCalls('POST', /\/v1\/chat\/completions$/) - chatsBefore).toBe(1);
	});

	it('fails with the sentence a person would see when they may not use the app', async () => {
		await stack.app.stop();
		await stack.startApp({ env: { SLACK_ALLOWED_USERS: 'U0SOMEONE' } });
		try {
			const chatsBefore = stack.serviceCalls('POST', /\/v1\/chat\/completions$/);
			const { execution } = await stack.standin.app.functionExecuted(STEPS.askModel, {
				question: 'Am I allowed?',
				channel_id: CHANNEL,
				user_id: USER,
			});
			expect((await ended(execution)).error).toMatch(/You are not on the list of people/);
			await stack.app.idle();
			expect(stack.serviceCalls('POST', /\/v1\/chat\/completions$/)).toBe(chatsBefore);
		} finally {
			await stack.app.stop();
			await stack.startApp();
		}
	});
});

describe('Generate an image', () => {
	const IMAGES = /^\/workloads\/image\//;
	const generateImage = (inputs: Record<string, unknown>) =>
		stack.standin.app.functionExecuted(STEPS.generateImage, {
			channel_id: CHANNEL,
			user_id: USER,
			...inputs,
		});

	it('completes with the image shared in the channel as its file, and the seed it was made with', async () => {
		const imagesBefore = stack.serviceCalls('POST', IMAGES);
		const { execution } = await generateImage({
			prompt: 'A lighthouse on a cliff at dawn',
			width: 640,
		});
		const done = await ended(execution);
		expect(done.state).toBe('completed');
		const fileId = String(done.outputs?.image);
		const file = stack.standin.workspace.files.get(fileId);
		expect(file?.shared).toBe(true);
		expect(file?.content && imageSize(file.content)).toEqual({ width: 640, height: 512 });
		expect(Number.isInteger(done.outputs?.seed)).toBe(true);
		// Shared in the workflow's channel, saying whose image it is and what it shows.
		const message = stack.standin.workspace.messages.find(
			(posted) => posted.channel === CHANNEL && posted.fileIds.includes(fileId),
		);
		expect(message?.text).toContain(`<@${USER}>`);
		expect(message?.text).toContain('A lighthouse on a cliff at dawn');
		expect(stack.serviceCalls('POST', IMAGES) - imagesBefore).toBe(1);
	});

	it('keeps the seed it was given, so the same image can be made again', async () => {
		const { execution } = await generateImage({ prompt: 'A red kite', seed: 42 });
		const done = await ended(execution);
		expect(done.outputs?.seed).toBe(42);
	});

	it('fails with the rule, making nothing, for a size the workload does not take', async () => {
		const imagesBefore = stack.serviceCalls('POST', IMAGES);
		const { execution } = await generateImage({ prompt: 'Too wide', width: 5000 });
		expect((await ended(execution)).error).toMatch(/^The step's width .*2048/);
		await stack.app.idle();
		expect(stack.serviceCalls('POST', IMAGES)).toBe(imagesBefore);
	});
});

it('the stand-in refuses a step output that is not of its declared type, as Slack does', async () => {
	const { execution } = await stack.standin.app.functionExecuted(STEPS.generateImage, {
		prompt: 'never made',
		channel_id: 'not-a-channel',
		user_id: USER,
	});
	await ended(execution);
	// A run still waiting for its outputs, completed with a file no one uploaded.
	const waiting = {
		...execution,
		id: stack.standin.workspace.newId('Fx'),
		state: 'running' as const,
	};
	stack.standin.workspace.executions.set(waiting.id, waiting);
	const reply = stack.standin.api.handle('functions.completeSuccess', `Bearer ${waiting.token}`, {
		function_execution_id: waiting.id,
		outputs: JSON.stringify({ image: 'F0NOSUCHFILE', seed: 1 }),
	});
	expect(reply.body).toMatchObject({ ok: false, error: 'parameter_validation_failed' });
	expect(waiting.state).toBe('running');
});
