import { createManagementClient } from '../../shared/runtime';
import { signWebhook } from '../../shared/webhooks';
import { APP_MARKER } from '../../slack-app/state/job-metadata';
import { BOT, TEAM } from '../../slack-standin';
import { eventually } from '../support/eventually';
import { jobFixture } from '../support/fixtures';
import { content, Stack } from './harness';

/**
 * The app posts only results of jobs it started. Anyone holding an API key of the organization can
 * create a job whose metadata names this app and a thread; only the app's own seal over that
 * metadata (an HMAC under a key only the app holds) makes the app post, edit or resume it.
 */

const CHANNEL = 'C0ORIGIN';
const PARENT_TEXT = 'a parent the app posted';

/** What the app writes into a job's metadata, typed by someone else: every field but the seal. */
function unsealedMetadata(threadTs: string, channel = CHANNEL) {
	return {
		slack_app: APP_MARKER,
		slack_team: TEAM.id,
		slack_channel: channel,
		slack_thread_ts: threadTs,
		slack_user: 'U0VICTIM',
		slack_kind: 'job',
	};
}

function botParent(stack: Stack, channel = CHANNEL): string {
	return stack.standin.workspace.post({
		channel,
		user: BOT.userId,
		botId: BOT.botId,
		text: PARENT_TEXT,
	}).ts;
}

function management(stack: Stack) {
	return createManagementClient({
		baseUrl: stack.emulator.baseUrl,
		organization: stack.emulator.organization,
		apiKey: stack.emulator.apiKey,
	});
}

/** The app's refusal of a job ("Ignored job <id> ..."): the sign it has looked at the job. */
const refused = (stack: Stack, jobId: string) =>
	eventually(`the app's refusal of job ${jobId}`, () =>
		stack.logger.lines.some((line) => line.includes(`Ignored job ${jobId}`)),
	);

describe("a job some other API key holder created with the app's metadata", () => {
	let stack: Stack;
	beforeAll(async () => {
		stack = await Stack.start({ webhooks: true, env: { SLACK_POLL_INTERVAL_MS: '600000' } });
	});
	afterAll(() => stack.close());

	it('is not posted when a genuine, correctly signed webhook reports it, and is logged once', async () => {
		const parentTs = botParent(stack);
		const time = new Date().toISOString();
		const job = jobFixture({
			inference_endpoint_name: 'echo',
			organization_name: stack.emulator.organization,
			input: {},
			status: 'succeeded',
			create_time: time,
			update_time: time,
			output: 'Hello <!channel>, from outside',
			metadata: unsealedMetadata(parentTs),
		});
		const body = JSON.stringify({
			type: 'inference_endpoint.job.succeeded',
			timestamp: time,
			data: job,
		});
		const slackCalls = stack.standin.api.calls.length;
		for (let delivery = 0; delivery < 2; delivery++) {
			const signed = signWebhook(stack.emulator.webhookSecret, body, {
				timestampSeconds: Date.now() / 1000,
			});
			const reply = await fetch(stack.app.localWebhookUrl ?? '', {
				method: 'POST',
				headers: { 'content-type': 'application/json', ...signed.headers },
				body,
			});
			expect(reply.status).toBe(202);
		}
		await refused(stack, job.id);
		await stack.app.idle();
		expect(stack.standin.api.calls.length).toBe(slackCalls);
		expect(stack.replies(parentTs, CHANNEL)).toHaveLength(0);
		const refusals = stack.logger.lines.filter((line) => line.includes(job.id));
		expect(refusals).toHaveLength(1);
		expect(refusals[0]).toMatch(/not sealed by this app/);
		for (const secret of stack.secrets()) expect(refusals[0]).not.toContain(secret);
	});

	it('is neither resumed nor posted after a restart', async () => {
		const parentTs = botParent(stack);
		// The transcription endpoint: one a restarted app always looks through.
		const job = await management(stack).jobs.create('transcribe', {
			input: { url: 'https://files.example/around-the-allow-list.mp3' },
			metadata: unsealedMetadata(parentTs),
		});
		await stack.emulator.deliveriesSettled();
		await stack.app.stop();
		await stack.startApp();
		// The restarted app resumes only the requests it recorded: this job is not even looked at.
		await stack.app.idle();
		expect(stack.container.tracker.phaseOf(job.id)).toBeUndefined();
		expect(stack.replies(parentTs, CHANNEL)).toHaveLength(0);
		expect(stack.standin.workspace.find(CHANNEL, parentTs)?.text).toBe(PARENT_TEXT);
	});
});

describe('a job the app started, its metadata re-pointed to another thread after creation', () => {
	it('is not posted into the other thread after a restart', async () => {
		const stack = await Stack.start({ emulator: { jobDurationMs: 2500 } });
		try {
			await stack.command('job echo {"text": "mine"}', 'U0OWNER', CHANNEL);
			const parent = await stack.waitForParent(1, CHANNEL);
			const jobId = await stack.standin.waitFor(
				() =>
					/Job `([0-9a-f-]{36})`/.exec(
						content(stack.standin.workspace.find(CHANNEL, parent.ts)),
					)?.[1],
				10_000,
				'the job',
			);
			await stack.app.stop();
			const elsewhere = botParent(stack, 'C0ELSEWHERE');
			const stored = stack.emulator.getJob(jobId);
			if (!stored?.metadata) throw new Error('the emulator lost the job');
			Object.assign(stored.metadata, { slack_channel: 'C0ELSEWHERE', slack_thread_ts: elsewhere });
			await stack.startApp();
			// The restarted app's look at its jobs refused this one (its seal no longer matches); the
			// job then ends, and nothing follows it to post.
			await refused(stack, jobId);
			expect(stack.container.tracker.phaseOf(jobId)).toBeUndefined();
			const client = management(stack);
			await eventually(
				'the job to end',
				async () => (await client.jobs.get('echo', jobId)).status === 'succeeded',
			);
			await stack.app.idle();
			expect(stack.replies(elsewhere, 'C0ELSEWHERE')).toHaveLength(0);
			expect(stack.standin.workspace.find('C0ELSEWHERE', elsewhere)?.text).toBe(PARENT_TEXT);
		} finally {
			await stack.close();
		}
	}, 30_000);
});
