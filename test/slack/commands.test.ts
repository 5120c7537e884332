import { randomUUID } from 'node:crypto';
import { createManagementClient } from '../../shared/runtime';
import { ACTIONS } from '../../slack-app/messages/actions';
import { BOT, TEAM } from '../../slack-standin';
import { content, Stack } from './harness';

/** Every /gpu subcommand through signed HTTP requests, against the emulator, seen in the stand-in. */

let stack: Stack;
beforeAll(async () => {
	stack = await Stack.start({ env: { SLACK_MAX_JOBS_PER_USER: '10' } });
});
afterAll(() => stack.close());

let channelCounter = 0;
/** Each test has its own channel, so parents and threads never mix. */
function freshChannel(): string {
	channelCounter++;
	return `C0CMD${channelCounter}`;
}

const JOB_POSTS = /\/inference-endpoints\/[^/]+\/jobs$/;

describe('/gpu commands', () => {
	it('help lists every subcommand to the asker only, and touches nothing', async () => {
		const channel = freshChannel();
		const before = stack.emulator.requests.length;
		const reply = await stack.command('', 'U0HELP', channel);
		expect(reply.status).toBe(200);
		const help = await stack.waitForEphemeral(/\/gpu transcribe/, 'U0HELP');
		for (const name of ['endpoints', 'job', 'status', 'cancel', 'queue', 'image', 'chat'])
			expect(help).toContain(`/gpu ${name}`);
		expect(stack.parents(channel)).toHaveLength(0);
		expect(stack.emulator.requests.length).toBe(before);
	});

	it('endpoints shows the catalogue privately and pages with Next/Previous', async () => {
		const channel = freshChannel();
		await stack.command('endpoints', 'U0CAT', channel);
		const first = await stack.waitForEphemeral(/Inference endpoints/, 'U0CAT');
		expect(first).toContain('transcribe');
		const ephemeral = stack.standin.workspace
			.ephemeralsFor('U0CAT')
			.find((message) => message.text.startsWith('Inference endpoints'));
		expect(stack.emulator.endpoints.length).toBeGreaterThan(8);
		expect(JSON.stringify(ephemeral?.blocks)).toContain(`${ACTIONS.endpointsPage}.next`);
		await stack.standin.app.click({
			user: 'U0CAT',
			channel,
			actionId: `${ACTIONS.endpointsPage}.next`,
			value: '{"page":2}',
			ephemeralId: ephemeral?.id,
		});
		// The list is replaced in place, not posted again.
		await stack.standin.waitFor(
			() => JSON.stringify(stack.standin.workspace.ephemeralsFor('U0CAT')).includes('page 2 of '),
			10_000,
			'page 2',
		);
		expect(stack.standin.workspace.ephemeralsFor('U0CAT')).toHaveLength(1);
		await stack.standin.app.click({
			user: 'U0CAT',
			channel,
			actionId: `${ACTIONS.endpointsPage}.previous`,
			value: '{"page":1}',
			ephemeralId: ephemeral?.id,
		});
		await stack.standin.waitFor(
			() => JSON.stringify(stack.standin.workspace.ephemeralsFor('U0CAT')).includes('page 1 of '),
			10_000,
			'page 1',
		);
		expect(stack.parents(channel)).toHaveLength(0);
	});

	it('job posts who asked for what, shows live status and puts the output in the thread', async () => {
		const channel = freshChannel();
		const endpoint = stack.emulator.genericEndpoint;
		const reply = await stack.command(`job ${endpoint} {"prompt": "hello"}`, 'U0JOB', channel);
		expect(reply.status).toBe(200);
		const parent = await stack.waitForParent(1, channel);
		expect(content(parent)).toContain(`<@U0JOB> ran a job on \`${endpoint}\``);
		await stack.waitForParentText(parent.ts, /Succeeded in/, 15_000, channel);
		const replies = stack.replies(parent.ts, channel);
		expect(replies).toHaveLength(1);
		expect(content(replies[0])).toContain('Output');
		// The parent went through the job's states by editing itself.
		const edits = stack.standin.api
			.callsOf('chat.update')
			.filter((call) => call.params.ts === parent.ts && call.params.channel === channel);
		const states = edits.map(
			(call) => /Pending|Running|Succeeded/.exec(call.params.text ?? '')?.[0],
		);
		expect(states).toContain('Succeeded');
		expect(states.indexOf('Succeeded')).toBe(states.length - 1);
	});

	it('shows a failed job with the service detail, and uploads long output as a file', async () => {
		const channel = freshChannel();
		// The app refuses input the endpoint's schema rejects, so this job is created past it (as an
		// API client would), sealed as the app's own and followed like one of its jobs.
		const failed = stack.standin.workspace.post({
			channel,
			user: BOT.userId,
			botId: BOT.botId,
			text: 'a parent',
		});
		const origin = {
			team: TEAM.id,
			thread: { channel, threadTs: failed.ts },
			user: 'U0FAIL',
			kind: 'job' as const,
		};
		const management = createManagementClient({
			baseUrl: stack.emulator.baseUrl,
			organization: stack.emulator.organization,
			apiKey: stack.emulator.apiKey,
		});
		const job = await management.jobs.create('sentiment', {
			input: { wrong: true },
			metadata: await stack.container.origins.metadata(origin, randomUUID()),
		});
		await stack.container.origins.created(job);
		stack.container.tracker.watch(job, origin);
		await stack.waitForParentText(failed.ts, /Failed after/, 15_000, channel);
		await stack.standin.waitFor(
			() => stack.replies(failed.ts, channel).length === 1,
			10_000,
			'the failure',
		);
		expect(content(stack.replies(failed.ts, channel)[0])).toMatch(
			/The job failed\.[\s\S]*Invalid input/,
		);

		const long = 'lorem ipsum '.repeat(400);
		await stack.command(
			`job ${stack.emulator.genericEndpoint} {"text": "${long}"}`,
			'U0LONG',
			channel,
		);
		const parent = await stack.waitForParent(2, channel);
		await stack.waitForParentText(parent.ts, /Succeeded in/, 15_000, channel);
		const replies = await stack.standin.waitFor(
			() => {
				const all = stack.replies(parent.ts, channel);
				return all.some((message) => message.fileIds.length > 0) ? all : undefined;
			},
			10_000,
			'the output file',
		);
		expect(content(replies[0])).toMatch(/the full output is in `output-[0-9a-f]{8}\.json`/);
		const file = stack.standin.workspace.files.get(replies[1].fileIds[0]);
		expect(JSON.parse(file?.content?.toString('utf8') ?? '{}')).toEqual({ echo: { text: long } });
	});

	it('transcribe posts the transcript with summary and translations', async () => {
		const channel = freshChannel();
		await stack.command(
			'transcribe https://files.example/talk.mp3?sig=abc --language en --summary 20 --translate german --word-timestamps',
			'U0TR',
			channel,
		);
		const parent = await stack.waitForParent(1, channel);
		expect(content(parent)).toContain(
			'asked for a transcription of https://files.example/talk.mp3?sig=abc',
		);
		await stack.waitForParentText(parent.ts, /Succeeded in/, 15_000, channel);
		const thread = stack.replies(parent.ts, channel).map(content).join('\n');
		expect(thread).toContain('*Transcript*');
		expect(thread).toContain('*Summary*');
		expect(thread).toContain('*German*');
	});

	it('status shows a job privately; cancel stops a running job and the thread says who cancelled', async () => {
		const channel = freshChannel();
		const endpoint = stack.emulator.slowEndpoint;
		await stack.command(`job ${endpoint} {"work": 1}`, 'U0CAN', channel);
		const parent = await stack.waitForParent(1, channel);
		const withJob = await stack.waitForParentText(
			parent.ts,
			/Job `[0-9a-f-]{36}`/,
			10_000,
			channel,
		);
		const jobId = /Job `([0-9a-f-]{36})`/.exec(content(withJob))?.[1] ?? '';

		await stack.command(`status ${jobId}`, 'U0CAN', channel);
		await stack.waitForEphemeral(new RegExp(`Job ${jobId}: (pending|running)`), 'U0CAN');

		await stack.command(`cancel ${jobId}`, 'U0INTRUDER', channel);
		await stack.waitForEphemeral(/Only <@U0CAN>, who started job/, 'U0INTRUDER');

		await stack.standin.app.click({
			user: 'U0CAN',
			channel,
			actionId: ACTIONS.cancel,
			value: JSON.stringify({ endpoint, jobId }),
			message: withJob,
		});
		await stack.waitForParentText(parent.ts, /Cancelled after/, 15_000, channel);
		await stack.standin.waitFor(
			() =>
				stack
					.replies(parent.ts, channel)
					.some((message) => content(message).includes('cancelled by <@U0CAN>')),
			10_000,
			'the cancel note',
		);
		expect(stack.serviceCalls('DELETE', new RegExp(`/jobs/${jobId}$`))).toBe(1);
	});

	it('queue creates a queue in the configured project and reports it in the thread', async () => {
		const channel = freshChannel();
		await stack.command(
			'queue nightly-renders --display-name Nightly renders --description For the farm',
			'U0Q',
			channel,
		);
		const parent = await stack.waitForParent(1, channel);
		expect(content(parent)).toContain('is creating queue `nightly-renders`');
		await stack.waitForParentText(parent.ts, /Succeeded in/, 10_000, channel);
		expect(content(stack.replies(parent.ts, channel)[0])).toContain(
			'Queue `nightly-renders` (Nightly renders) created',
		);
	});

	describe('mistakes come back privately with the usage; nothing is posted or created', () => {
		const cases: [string, string, RegExp][] = [
			['bad JSON', 'job ENDPOINT {prompt: 1}', /not valid JSON[\s\S]*\/gpu job &lt;endpoint&gt;/],
			[
				'unknown endpoint',
				'job no-such-endpoint {}',
				/no endpoint "no-such-endpoint" in the catalogue/,
			],
			['endpoint name rule', 'job Bad_Name {}', /endpoint name "Bad_Name" must be 2-63 lower-case/],
			[
				'queue name rule',
				'queue Nightly_Renders',
				/queue name "Nightly_Renders" must be 2-63 lower-case[\s\S]*\/gpu queue &lt;name&gt;/,
			],
			[
				'missing URL',
				'transcribe --summary 10',
				/Give the URL of the file to transcribe[\s\S]*\/gpu transcribe &lt;url&gt;/,
			],
			['bad URL', 'transcribe not-a-url', /must be a full http:\/\/ or https:\/\/ URL/],
			['image size', 'image a fox --width 99999', /--width 99999 must be 256-2048 pixels/],
			['unknown subcommand', 'deploy', /There is no subcommand "deploy"/],
			['bad job id', 'cancel 1234', /job id "1234" must be a job id/],
		];
		it.each(cases)('%s', async (_name, text, expected) => {
			const channel = freshChannel();
			const user = `U0ERR${channelCounter}`;
			const jobsBefore = stack.serviceCalls('POST', JOB_POSTS);
			const queuesBefore = stack.serviceCalls('POST', /\/queues$/);
			const reply = await stack.command(
				text.replace('ENDPOINT', stack.emulator.genericEndpoint),
				user,
				channel,
			);
			expect(reply.status).toBe(200);
			await stack.waitForEphemeral(expected, user);
			await stack.app.idle();
			expect(stack.parents(channel)).toHaveLength(0);
			expect(stack.serviceCalls('POST', JOB_POSTS)).toBe(jobsBefore);
			expect(stack.serviceCalls('POST', /\/queues$/)).toBe(queuesBefore);
		});
	});
});
