import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { jobSchema } from '../../shared/schemas';
import { signWebhook } from '../../shared/webhooks';
import { BOT, TEAM } from '../../slack-standin';
import { eventually } from '../support/eventually';
import { ManualClock } from '../support/manual-clock';
import { PausableClock } from '../support/pausable-clock';
import { content, Stack, type StackOptions } from './harness';

/** How results reach the thread: webhook, polling, restarts, repeats, forgeries, Slack rate limits. */

const CHANNEL = 'C0DELIVER';

async function withStack(
	options: StackOptions,
	run: (stack: Stack) => Promise<void>,
): Promise<void> {
	const stack = await Stack.start(options);
	try {
		await run(stack);
	} finally {
		await stack.close();
	}
}

/** Result messages and files the app posted in a thread, by their exactly-once keys. */
function resultKeys(stack: Stack, parentTs: string): string[] {
	return stack.replies(parentTs, CHANNEL).flatMap((message) => {
		const key = message.metadata?.event_payload.key;
		const files = message.fileIds.map((id) => stack.standin.workspace.files.get(id)?.name ?? id);
		return [...(typeof key === 'string' ? [key] : []), ...files];
	});
}

function jobIdOf(message: { text: string; blocks?: unknown[] }): string {
	return /Job `([0-9a-f-]{36})`/.exec(content(message as never))?.[1] ?? '';
}

describe('job completion', () => {
	it('arrives by the service webhook when the app has a public URL (polling kept out of the way)', async () => {
		await withStack(
			{ webhooks: true, env: { SLACK_POLL_INTERVAL_MS: '600000' } },
			async (stack) => {
				await stack.command('transcribe https://files.example/a.mp3', 'U0HOOK', CHANNEL);
				const parent = await stack.waitForParent(1, CHANNEL);
				const done = await stack.waitForParentText(parent.ts, /Succeeded in/, 15_000, CHANNEL);
				const jobId = jobIdOf(done);
				expect(
					stack.emulator.deliveries.some(
						(delivery) =>
							delivery.jobId === jobId && delivery.ok && delivery.url === stack.app.localWebhookUrl,
					),
				).toBe(true);
				// Only the initial look at the job: completion came by webhook, not by polling.
				expect(stack.serviceCalls('GET', new RegExp(`/jobs/${jobId}$`))).toBe(0);
				expect(resultKeys(stack, parent.ts)).toEqual([`${jobId}:result`]);
			},
		);
	});

	it('falls back to polling without a public URL', async () => {
		await withStack({ webhooks: false }, async (stack) => {
			await stack.command('transcribe https://files.example/b.mp3', 'U0POLL', CHANNEL);
			const parent = await stack.waitForParent(1, CHANNEL);
			const done = await stack.waitForParentText(parent.ts, /Succeeded in/, 15_000, CHANNEL);
			const jobId = jobIdOf(done);
			expect(stack.emulator.deliveries.filter((delivery) => delivery.jobId === jobId)).toHaveLength(
				0,
			);
			// Seen on the endpoint's job list, not by reading the job on its own.
			expect(stack.serviceCalls('GET', /\/jobs$/)).toBeGreaterThan(0);
			expect(stack.serviceCalls('GET', new RegExp(`/jobs/${jobId}$`))).toBe(0);
			expect(resultKeys(stack, parent.ts)).toEqual([`${jobId}:result`]);
		});
	});

	it('follows 50 running jobs with one list read per round, not one read per job', async () => {
		const clock = new ManualClock(Date.now());
		await withStack(
			{
				webhooks: false,
				emulator: { jobDurationMs: 120_000 },
				env: { SLACK_POLL_INTERVAL_MS: '1000' },
				// Rounds come when the test moves the app's clock, not as the machine's speed allows.
				clock,
			},
			async (stack) => {
				const { emulator } = stack;
				// Created over plain HTTP: a client in this process would share the app's pacing for the
				// key, which now waits on the app's clock.
				const create = async (body: unknown) => {
					const reply = await fetch(
						`${emulator.baseUrl}/organizations/${emulator.organization}/inference-endpoints/echo/jobs`,
						{
							method: 'POST',
							headers: { 'content-type': 'application/json', 'service-api-key': emulator.apiKey },
							body: JSON.stringify(body),
						},
					);
					expect(reply.status).toBe(201);
					return jobSchema.parse(await reply.json());
				};
				const tracker = stack.container.tracker;
				for (let i = 0; i < 50; i++) {
					const parentTs = stack.standin.workspace.post({
						channel: CHANNEL,
						user: BOT.userId,
						botId: BOT.botId,
						text: `parent ${i}`,
					}).ts;
					const origin = {
						team: TEAM.id,
						thread: { channel: CHANNEL, threadTs: parentTs },
						user: `U0MANY${i}`,
						kind: 'job' as const,
					};
					const job = await create({
						input: { i },
						metadata: await stack.container.origins.metadata(origin, randomUUID()),
					});
					await stack.container.origins.created(job);
					tracker.watch(job, origin);
				}
				const before = emulator.requests.length;
				const reads = () =>
					emulator.requests
						.slice(before)
						.filter(
							(request) => request.method === 'GET' && /\/echo\/jobs(\/|$)/.test(request.path),
						);
				// Each second of the app's clock is one round: its read of the list is the round's end.
				// (Six rounds cost nothing on this clock; one read per job would be 50 a round.)
				for (let round = 1; round <= 6; round++) {
					await clock.advance(1000);
					await eventually(`round ${round}'s list read`, () => reads().length >= round);
					await stack.app.idle();
					expect(reads().map((request) => request.path.endsWith('/jobs'))).toEqual(
						Array.from({ length: round }, () => true),
					);
				}
			},
		);
	});
});

describe('another app in the thread', () => {
	it("cannot stand in for the app's result by posting its metadata: the result is still posted", async () => {
		await withStack({ emulator: { jobDurationMs: 2500 } }, async (stack) => {
			await stack.command('transcribe https://files.example/spoof.mp3', 'U0SPOOF', CHANNEL);
			const parent = await stack.waitForParent(1, CHANNEL);
			const jobId = await stack.standin.waitFor(
				() => jobIdOf(stack.standin.workspace.find(CHANNEL, parent.ts) ?? parent) || undefined,
				10_000,
				'the job id',
			);
			// Another bot (any app in the channel can post message metadata) claims the result's key.
			stack.standin.workspace.post({
				channel: CHANNEL,
				user: 'U0OTHERBOT',
				botId: 'B0OTHERBOT',
				text: 'All done, nothing to see.',
				threadTs: parent.ts,
				metadata: { event_type: 'gpu_cloud_result', event_payload: { key: `${jobId}:result` } },
			});
			await stack.waitForParentText(parent.ts, /Succeeded in/, 20_000, CHANNEL);
			await stack.app.idle();
			const ours = stack
				.replies(parent.ts, CHANNEL)
				.filter((message) => message.user === BOT.userId)
				.map((message) => message.metadata?.event_payload.key);
			expect(ours).toEqual([`${jobId}:result`]);
		});
	});
});

describe('the webhook route', () => {
	let stack: Stack;
	let url: string;
	beforeAll(async () => {
		stack = await Stack.start({ webhooks: true, env: { SLACK_POLL_INTERVAL_MS: '600000' } });
		url = stack.app.localWebhookUrl ?? '';
	});
	afterAll(() => stack.close());

	async function finishedJob(user: string) {
		await stack.command('transcribe https://files.example/c.mp3', user, CHANNEL);
		const parent = await stack.standin.waitFor(
			() => stack.parents(CHANNEL).find((message) => content(message).includes(`<@${user}>`)),
			10_000,
			'the parent',
		);
		const done = await stack.waitForParentText(parent.ts, /Succeeded in/, 15_000, CHANNEL);
		await stack.app.idle();
		return { parent, jobId: jobIdOf(done) };
	}

	/** The job-end payload the service sent for a job, rebuilt from the job itself. */
	function payloadOf(jobId: string, type = 'inference_endpoint.job.succeeded'): string {
		return JSON.stringify({
			type,
			timestamp: new Date().toISOString(),
			data: stack.emulator.getJob(jobId),
		});
	}

	async function post(body: string, headers: Record<string, string>) {
		const response = await fetch(url, {
			method: 'POST',
			headers: { 'content-type': 'application/json', ...headers },
			body,
		});
		return response.status;
	}

	it('drops a repeated delivery: the result is in the thread once', async () => {
		const { parent, jobId } = await finishedJob('U0DUP');
		const delivery = stack.emulator.deliveries.find((entry) => entry.jobId === jobId && entry.ok);
		expect(delivery?.webhookId).toBeDefined();
		const body = payloadOf(jobId);
		// The same delivery again (same webhook-id): acknowledged, dropped.
		const repeat = signWebhook(stack.emulator.webhookSecret, body, {
			id: delivery?.webhookId,
			timestampSeconds: Date.now() / 1000,
		});
		expect(await post(repeat.body, { ...repeat.headers })).toBe(200);
		// A new delivery about the same finished job: accepted, but the result is not posted again.
		const resigned = signWebhook(stack.emulator.webhookSecret, body, {
			timestampSeconds: Date.now() / 1000,
		});
		expect(await post(resigned.body, { ...resigned.headers })).toBe(202);
		await stack.app.idle();
		expect(resultKeys(stack, parent.ts)).toEqual([`${jobId}:result`]);
	});

	it('answers 401 to unsigned, forged and stale deliveries and posts nothing', async () => {
		// A thread of this app and a finished job that claims it: only a genuine delivery may post there.
		const parent = stack.standin.workspace.post({
			channel: CHANNEL,
			user: BOT.userId,
			botId: BOT.botId,
			text: 'a parent',
		});
		const now = new Date().toISOString();
		const job = {
			id: randomUUID(),
			inference_endpoint_name: 'echo',
			organization_name: stack.emulator.organization,
			input: {},
			status: 'succeeded',
			events: [{ action: 'created', time: now }],
			create_time: now,
			update_time: now,
			output: { forged: true },
			metadata: await stack.container.origins.metadata(
				{
					team: TEAM.id,
					thread: { channel: CHANNEL, threadTs: parent.ts },
					user: 'U0VICTIM',
					kind: 'job',
				},
				randomUUID(),
			),
		};
		// Recorded as a job the app created: only the signature stands between it and the thread.
		await stack.container.origins.created(job);
		const body = JSON.stringify({
			type: 'inference_endpoint.job.succeeded',
			timestamp: now,
			data: job,
		});
		const seconds = Date.now() / 1000;
		const forged = signWebhook(Buffer.from('someone else entirely').toString('base64'), body, {
			timestampSeconds: seconds,
		});
		const stale = signWebhook(stack.emulator.webhookSecret, body, {
			timestampSeconds: seconds - 600,
		});
		const future = signWebhook(stack.emulator.webhookSecret, body, {
			timestampSeconds: seconds + 600,
		});
		const slackCalls = stack.standin.api.calls.length;
		expect(await post(body, {})).toBe(401);
		expect(await post(body, { ...forged.headers })).toBe(401);
		expect(await post(body, { ...stale.headers })).toBe(401);
		expect(await post(body, { ...future.headers })).toBe(401);
		expect(
			await post(body.replace('"forged":true', '"forged":false'), {
				...signWebhook(stack.emulator.webhookSecret, body, { timestampSeconds: seconds }).headers,
			}),
		).toBe(401);
		await stack.app.idle();
		expect(stack.standin.api.calls.length).toBe(slackCalls);
		expect(stack.replies(parent.ts, CHANNEL)).toHaveLength(0);

		// The control: the same delivery, correctly signed, is accepted and posted.
		const genuine = signWebhook(stack.emulator.webhookSecret, body, { timestampSeconds: seconds });
		expect(await post(genuine.body, { ...genuine.headers })).toBe(202);
		await stack.standin.waitFor(
			() => stack.replies(parent.ts, CHANNEL).length === 1,
			10_000,
			'the genuine result',
		);
	});
});

describe('restarts', () => {
	it('resumes jobs in flight after a restart and posts every result exactly once', async () => {
		// The jobs stand still until the app is gone: on a busy machine they cannot end before it is.
		const jobsClock = new PausableClock({ held: true });
		await withStack({ emulator: { jobDurationMs: 2500, clock: jobsClock } }, async (stack) => {
			for (const n of [1, 2, 3])
				await stack.command(`transcribe https://files.example/${n}.mp3`, `U0R${n}`, CHANNEL);
			const parents = await stack.standin.waitFor(
				() => (stack.parents(CHANNEL).length === 3 ? stack.parents(CHANNEL) : undefined),
				10_000,
				'three parents',
			);
			await stack.standin.waitFor(
				() =>
					parents.every((parent) =>
						jobIdOf(stack.standin.workspace.find(CHANNEL, parent.ts) ?? parent),
					),
				10_000,
				'three jobs',
			);
			const jobIds = parents.map((parent) =>
				jobIdOf(stack.standin.workspace.find(CHANNEL, parent.ts) ?? parent),
			);

			// The app goes away while all three run...
			await stack.app.stop();
			expect(parents.every((parent) => resultKeys(stack, parent.ts).length === 0)).toBe(true);
			jobsClock.release();
			// ...and comes back: it finds its jobs in the service by their metadata.
			await stack.startApp();
			for (const [i, parent] of parents.entries()) {
				await stack.waitForParentText(parent.ts, /Succeeded in/, 20_000, CHANNEL);
				await stack.standin.waitFor(
					() => resultKeys(stack, parent.ts).length > 0,
					10_000,
					'the result',
				);
				expect(resultKeys(stack, parent.ts)).toEqual([`${jobIds[i]}:result`]);
			}
			await stack.app.idle();

			// Restarting again posts nothing new, with the state file...
			const posts = stack.standin.api.callsOf('chat.postMessage').length;
			await stack.app.stop();
			await stack.startApp();
			await stack.app.idle();
			// ...and without it (Slack's thread shows what was posted).
			await stack.app.stop();
			await rm(stack.stateFile, { force: true });
			await stack.startApp();
			await stack.app.idle();
			expect(stack.standin.api.callsOf('chat.postMessage').length).toBe(posts);
			for (const [i, parent] of parents.entries())
				expect(resultKeys(stack, parent.ts)).toEqual([`${jobIds[i]}:result`]);
		});
	});
});

describe('Slack rate limits', () => {
	it('waits out 429 + Retry-After and still posts everything once', async () => {
		await withStack({}, async (stack) => {
			stack.standin.api.rateLimit('chat.postMessage', 1, 1);
			stack.standin.api.rateLimit('chat.update', 1, 1);
			stack.standin.api.rateLimit('files.getUploadURLExternal', 1, 1);
			await stack.command('image a red fox --count 2', 'U0RATE', CHANNEL);
			const parent = await stack.waitForParent(1, CHANNEL);
			await stack.waitForParentText(parent.ts, /Succeeded in/, 20_000, CHANNEL);
			await stack.app.idle();
			expect(stack.parents(CHANNEL)).toHaveLength(1);
			const files = stack.replies(parent.ts, CHANNEL).flatMap((message) => message.fileIds);
			expect(files).toHaveLength(2);
			const limited = stack.standin.api.calls
				.filter((call) => call.status === 429)
				.map((call) => call.method);
			expect(limited.sort()).toEqual([
				'chat.postMessage',
				'chat.update',
				'files.getUploadURLExternal',
			]);
		});
	});
});
