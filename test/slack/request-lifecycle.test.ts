import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorParts } from '../../slack-app/messages/results';
import { AccessPolicy } from '../../slack-app/requests/access';
import {
	RequestLifecycle,
	type Ending,
	type RequestPlan,
} from '../../slack-app/requests/lifecycle';
import { DeliveryRecord } from '../../slack-app/requests/delivery-record';
import type { SlackThreads } from '../../slack-app/slack/slack-thread';
import { StateFile } from '../../slack-app/state/state-file';
import { BOT, type Standin } from '../../slack-standin';
import { eventually } from '../support/eventually';
import { ManualClock } from '../support/manual-clock';
import { CapturingLogger, content } from './harness';
import { standinThreads } from './standin-threads';

/**
 * The request lifecycle on its own, against the Slack stand-in and a real state file, on a clock the
 * test moves: the user's slot comes back however a request ends, and its result or failure is
 * delivered once.
 */

const USER = 'U0LIFE';
const LIMIT = 1;

let standin: Standin;
let threads: SlackThreads;
beforeAll(async () => {
	({ standin, threads } = await standinThreads());
});
afterAll(() => standin.close());

interface Rig {
	lifecycle: RequestLifecycle;
	access: AccessPolicy;
	state: StateFile;
	clock: ManualClock;
	logger: CapturingLogger;
	channel: string;
}

let channels = 0;
async function rig(): Promise<Rig> {
	const dir = await mkdtemp(join(tmpdir(), 'gpu-lifecycle-'));
	const state = await StateFile.open(join(dir, 'state.json'), () => undefined);
	const access = new AccessPolicy({
		allowedUsers: [],
		allowedChannels: [],
		maxJobsPerUser: LIMIT,
		contact: '#gpu-admins',
	});
	const clock = new ManualClock(Date.now());
	const logger = new CapturingLogger();
	const posted = new DeliveryRecord(threads, state, clock);
	const lifecycle = new RequestLifecycle({
		team: 'T0LIFE',
		access,
		threads,
		state,
		deliveries: posted,
		clock,
		logger,
	});
	channels++;
	return { lifecycle, access, state, clock, logger, channel: `C0RL${channels}` };
}

function plan(r: Rig, work: RequestPlan['work'], extra: Partial<RequestPlan> = {}): RequestPlan {
	return {
		context: { user: USER, channel: r.channel },
		kind: 'image',
		usesSlot: true,
		place: {
			kind: 'new',
			parent: {
				user: USER,
				subject: { kind: 'image', request: { prompt: 'a fox', count: 1 } },
				state: 'running',
			},
		},
		remember: { image: { prompt: 'a fox', count: 1 } },
		failure: 'Generating the image',
		work,
		...extra,
	};
}

function parentOf(r: Rig) {
	return standin.workspace
		.channelMessages(r.channel)
		.filter((message) => message.user === BOT.userId)[0];
}

function repliesOf(r: Rig) {
	const parent = parentOf(r);
	return parent ? standin.workspace.replies(r.channel, parent.ts) : [];
}

/** Settles once the slot is free again: the only way to tell is to take it. */
async function slotFree(r: Rig): Promise<boolean> {
	await r.lifecycle.idle();
	return r.access.runningCount(USER) === 0;
}

const resultOf = (ref: string, text: string): Ending => ({
	state: 'succeeded',
	parts: [
		{
			kind: 'message',
			key: `${ref}:result`,
			message: { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] },
		},
	],
});

describe('the user slot', () => {
	it('is held while the work runs and comes back when it succeeds', async () => {
		const r = await rig();
		let finish = () => {};
		const gate = new Promise<void>((resolve) => (finish = resolve));
		expect(
			await r.lifecycle.start(plan(r, async ({ ref }) => (await gate, resultOf(ref, 'done')))),
		).toBeUndefined();
		expect(r.access.runningCount(USER)).toBe(1);
		expect(r.state.inflight).toHaveLength(1);
		// The limit is one: a second request waits for the first.
		const second = await r.lifecycle.start(
			plan({ ...r, channel: `${r.channel}b` }, async () => resultOf('x', 'never')),
		);
		expect(second?.text).toMatch(/already have 1 GPU job running/);
		finish();
		expect(await slotFree(r)).toBe(true);
		expect(r.state.inflight).toHaveLength(0);
		expect(repliesOf(r).map(content)).toEqual([expect.stringContaining('done')]);
		expect(content(parentOf(r))).toMatch(/Succeeded in/);
	});

	it('comes back when the work throws, and the failure is posted once, in the thread only', async () => {
		const r = await rig();
		await r.lifecycle.start(
			plan(r, async () => Promise.reject(new Error('the workload fell over'))),
		);
		expect(await slotFree(r)).toBe(true);
		const replies = repliesOf(r);
		expect(replies).toHaveLength(1);
		expect(content(replies[0])).toMatch(/Generating the image failed/);
		expect(content(parentOf(r))).toMatch(/Failed after/);
		expect(r.state.inflight).toHaveLength(0);
		expect(
			r.logger.lines.some((line) =>
				/Image request .* failed: Error: the workload fell over/.test(line),
			),
		).toBe(true);
	});

	it('comes back when the parent cannot be posted, and the asker is told why, privately', async () => {
		const r = await rig();
		let worked = false;
		standin.api.refuse('chat.postMessage', 'not_in_channel');
		const reply = await r.lifecycle.start(
			plan(r, async () => ((worked = true), resultOf('x', 'never'))),
		);
		expect(reply?.text).toMatch(/Invite me/);
		expect(await slotFree(r)).toBe(true);
		expect(worked).toBe(false);
		expect(r.state.inflight).toHaveLength(0);
	});

	it('comes back when posting the parent throws an error the asker cannot act on', async () => {
		const r = await rig();
		standin.api.refuse('chat.postMessage', 'fatal_error');
		await expect(r.lifecycle.start(plan(r, async () => resultOf('x', 'never')))).rejects.toThrow(
			/fatal_error/,
		);
		expect(await slotFree(r)).toBe(true);
	});

	it('comes back when Slack keeps refusing the result; retries wait on the clock, then the failure is logged', async () => {
		const r = await rig();
		await r.lifecycle.start(plan(r, async ({ ref }) => resultOf(ref, 'refused')));
		// The parent is up; the result's three posts are refused.
		standin.api.refuse('chat.postMessage', 'fatal_error', 3);
		await waitUntil(
			() =>
				standin.api.callsOf('chat.postMessage').filter((call) => call.error === 'fatal_error')
					.length >= 1,
		);
		// The pause before the next attempt is on the injected clock, not a real timer.
		await waitUntil(() => r.clock.pendingTimers === 1);
		expect(r.access.runningCount(USER)).toBe(1);
		await r.clock.advance(2000);
		await waitUntil(
			() =>
				standin.api.callsOf('chat.postMessage').filter((call) => call.error === 'fatal_error')
					.length >= 2,
		);
		await r.clock.advance(4000);
		expect(await slotFree(r)).toBe(true);
		expect(repliesOf(r)).toHaveLength(0);
		expect(
			r.logger.lines.some((line) => /^error Image request .* failed: .*fatal_error/.test(line)),
		).toBe(true);
	});

	it('is not taken by a request that uses no GPU', async () => {
		const r = await rig();
		await r.lifecycle.start(
			plan(r, async ({ ref }) => resultOf(ref, 'queue made'), {
				kind: 'queue',
				usesSlot: false,
				remember: undefined,
			}),
		);
		expect(r.access.runningCount(USER)).toBe(0);
		await r.lifecycle.idle();
		expect(repliesOf(r)).toHaveLength(1);
	});

	it('is counted past the limit for work resumed after a restart, and released at its end', async () => {
		const r = await rig();
		await r.access.acquire(USER, 'already-running');
		const thread = {
			channel: r.channel,
			threadTs: standin.workspace.post({
				channel: r.channel,
				user: BOT.userId,
				botId: BOT.botId,
				text: 'parent',
			}).ts,
		};
		r.lifecycle.adopt({
			ref: 'resumed-1',
			user: USER,
			kind: 'image',
			thread,
			startedAt: r.clock.now(),
			remembered: false,
			work: async ({ ref }) => resultOf(ref, 'again'),
		});
		expect(r.access.runningCount(USER)).toBe(2);
		await r.lifecycle.idle();
		expect(r.access.runningCount(USER)).toBe(1);
	});
});

describe('delivery', () => {
	it('posts a failure once even when the same ref is delivered twice at the same time', async () => {
		const r = await rig();
		const posted = new DeliveryRecord(threads, r.state, r.clock);
		const thread = {
			channel: r.channel,
			threadTs: standin.workspace.post({
				channel: r.channel,
				user: BOT.userId,
				botId: BOT.botId,
				text: 'parent',
			}).ts,
		};
		const parts = errorParts(
			'ref-twice',
			'Creating the queue',
			'A queue named "x" already exists.',
		);
		await Promise.all([
			posted.deliver('ref-twice', thread, { parts }),
			posted.deliver('ref-twice', thread, { parts }),
			posted.deliver('ref-twice', thread, { parts }),
		]);
		await posted.deliver('ref-twice', thread, { parts });
		expect(standin.workspace.replies(r.channel, thread.threadTs)).toHaveLength(1);
		expect(posted.isDelivered('ref-twice')).toBe(true);
	});
});

describe('drain', () => {
	it('takes no new request, and resolves once the work taken has finished or been handed over', async () => {
		const r = await rig();
		let finishImage = () => {};
		const image = new Promise<void>((resolve) => (finishImage = resolve));
		let handOver = () => {};
		const job = new Promise<void>((resolve) => (handOver = resolve));
		let jobEnds = () => {};
		const jobEnd = new Promise<void>((resolve) => (jobEnds = resolve));
		await r.lifecycle.start(plan(r, async ({ ref }) => (await image, resultOf(ref, 'image'))));
		await r.lifecycle.start(
			plan(
				{ ...r, channel: `${r.channel}job` },
				async (request) => {
					await job;
					request.handedOver();
					await jobEnd;
					return { state: 'followed' };
				},
				{
					context: { user: 'U0OTHER', channel: `${r.channel}job` },
					kind: 'job',
					remember: undefined,
				},
			),
		);
		expect(r.lifecycle.inFlight()).toBe(2);
		let drained = false;
		const draining = r.lifecycle.drain().then(() => (drained = true));
		const refused = await r.lifecycle.start(
			plan({ ...r, channel: `${r.channel}late` }, async () => resultOf('late', 'late'), {
				context: { user: 'U0LATE', channel: `${r.channel}late` },
			}),
		);
		expect(refused?.text).toMatch(/restarting/);
		expect(standin.workspace.channelMessages(`${r.channel}late`)).toHaveLength(0);

		finishImage();
		await waitUntil(() => r.lifecycle.inFlight() === 1);
		expect(drained).toBe(false);
		handOver();
		await draining;
		expect(drained).toBe(true);
		// The handed-over job still holds its owner's slot until it ends.
		expect(r.access.runningCount('U0OTHER')).toBe(1);
		jobEnds();
		await waitUntil(() => r.access.runningCount('U0OTHER') === 0);
	});
});

const waitUntil = (predicate: () => boolean) => eventually('the lifecycle', predicate);
