import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator } from '../../emulator';
import type { ManagementClient } from '../../shared/client';
import type { Clock } from '../../shared/clock';
import { createManagementClient, systemClock } from '../../shared/runtime';
import { isTerminalStatus, type Job } from '../../shared/schemas';
import { jobResultParts } from '../../slack-app/messages/results';
import { JobOriginSeal, JobOrigins, type JobOrigin } from '../../slack-app/state/job-metadata';
import { JobTracker } from '../../slack-app/requests/job-tracker';
import { DeliveryRecord } from '../../slack-app/requests/delivery-record';
import type { SlackThreads } from '../../slack-app/slack/slack-thread';
import { StateFile } from '../../slack-app/state/state-file';
import { BOT, TEAM, type Standin } from '../../slack-standin';
import { eventually } from '../support/eventually';
import { ManualClock } from '../support/manual-clock';
import { CapturingLogger, content } from './harness';
import { standinThreads } from './standin-threads';

/**
 * The job tracker as a state machine (following → delivering → delivered | abandoned) on a clock the
 * test moves: nothing happens between two reads unless the clock says so, and each result reaches its
 * thread once, whether a webhook and a poll race or the app restarts halfway.
 */

type Emulator = Awaited<ReturnType<typeof startEmulator>>;

const POLL_MS = 1000;
const REFRESH_MS = 15_000;
const SECRET = 'tracker-test-secret-tracker-test-secret';

const wholeSecondsClock: Clock = {
	now: () => Math.floor(systemClock.now() / 1000) * 1000,
	sleep: systemClock.sleep,
};

let standin: Standin;
let threads: SlackThreads;
let emulator: Emulator;
let management: ManagementClient;
beforeAll(async () => {
	({ standin, threads } = await standinThreads());
	// Creation times in whole seconds, as many services stamp them: jobs created together tie, and
	// "oldest" must not depend on a millisecond between them.
	emulator = await startEmulator({ port: 0, jobDurationMs: 100, clock: wholeSecondsClock });
	management = createManagementClient({
		baseUrl: emulator.baseUrl,
		organization: emulator.organization,
		apiKey: emulator.apiKey,
	});
});
afterAll(async () => {
	await standin.close();
	await emulator.close();
});

interface Rig {
	tracker: JobTracker;
	clock: ManualClock;
	state: StateFile;
	origins: JobOrigins;
	statePath: string;
}

const trackers: JobTracker[] = [];
afterEach(() => {
	for (const tracker of trackers.splice(0)) tracker.stop();
});

/** A tracker as the app builds it; `statePath` again is the same app after a restart. */
async function rig(
	options: { statePath?: string; webhooks?: boolean; secret?: string } = {},
): Promise<Rig> {
	const statePath =
		options.statePath ?? join(await mkdtemp(join(tmpdir(), 'gpu-tracker-')), 'state.json');
	const state = await StateFile.open(statePath, () => undefined);
	await state.addEndpoint(emulator.genericEndpoint);
	const clock = new ManualClock(Date.now());
	const logger = new CapturingLogger();
	const origins = new JobOrigins(
		new JobOriginSeal(options.secret ?? SECRET, TEAM.id, (message) => logger.warn(message)),
		state,
	);
	const tracker = new JobTracker({
		management,
		threads,
		state,
		deliveries: new DeliveryRecord(threads, state, clock),
		clock,
		logger,
		origins,
		webhooks: options.webhooks ?? false,
		pollIntervalMs: options.webhooks ? 600_000 : POLL_MS,
		statusRefreshMs: REFRESH_MS,
		resumeWindowHours: 24,
	});
	trackers.push(tracker);
	return { tracker, clock, state, origins, statePath };
}

let channels = 0;
async function createJob(
	origins: JobOrigins,
	endpoint = emulator.genericEndpoint,
	options: { recorded?: boolean } = {},
): Promise<{ job: Job; origin: JobOrigin }> {
	channels++;
	const channel = `C0TRACK${channels}`;
	const parent = standin.workspace.post({
		channel,
		user: BOT.userId,
		botId: BOT.botId,
		text: 'a parent',
	});
	const origin: JobOrigin = {
		team: TEAM.id,
		thread: { channel, threadTs: parent.ts },
		user: 'U0TRACK',
		kind: 'job',
	};
	const job = await management.jobs.create(endpoint, {
		input: { n: channels },
		metadata: await origins.metadata(origin, randomUUID()),
	});
	if (options.recorded !== false) await origins.created(job);
	return { job, origin };
}

/** The job as the service has it once it has ended (read on the real clock: the service's own). */
function ended(job: Job): Promise<Job> {
	return eventually(`job ${job.id} to end`, async () => {
		const now = await management.jobs.get(job.inference_endpoint_name, job.id);
		return isTerminalStatus(now.status) && now;
	});
}

function replies(origin: JobOrigin) {
	return standin.workspace.replies(origin.thread.channel, origin.thread.threadTs);
}

function parentEdits(origin: JobOrigin): number {
	return standin.api
		.callsOf('chat.update')
		.filter((call) => call.params.ts === origin.thread.threadTs && !call.error).length;
}

const waitUntil = (predicate: () => boolean, what = 'the tracker') => eventually(what, predicate);

describe('a followed job', () => {
	it('moves following → delivering → delivered only as the injected clock moves', async () => {
		const { tracker, clock, origins } = await rig();
		const { job, origin } = await createJob(origins);
		let watchEnded = false;
		void tracker.watch(job, origin).then(() => (watchEnded = true));
		expect(tracker.phaseOf(job.id)).toBe('following');
		await ended(job);
		// The job is over in the service, but the next read is due on the tracker's clock, which has
		// not moved. The tracker has done what it does at once (the parent shows the job) and both its
		// loops (reads, parent refresh) wait on that clock: only then does "nothing yet" mean anything.
		await waitUntil(
			() => parentEdits(origin) >= 1 && clock.pendingTimers === 2,
			'the tracker parked',
		);
		await tracker.idle();
		expect(tracker.phaseOf(job.id)).toBe('following');
		expect(replies(origin)).toHaveLength(0);
		expect(watchEnded).toBe(false);

		await clock.advance(POLL_MS);
		await waitUntil(() => tracker.phaseOf(job.id) === 'delivered');
		expect(watchEnded).toBe(true);
		expect(replies(origin).map((message) => message.metadata?.event_payload.key)).toEqual([
			`${job.id}:result`,
		]);
		expect(content(standin.workspace.find(origin.thread.channel, origin.thread.threadTs))).toMatch(
			/Succeeded in/,
		);
	});

	it('refreshes its parent once per refresh interval of the clock, and stops when stopped', async () => {
		const { tracker, clock, origins } = await rig({ webhooks: true });
		const { job, origin } = await createJob(origins, emulator.slowEndpoint);
		let watchEnded = false;
		void tracker.watch(job, origin).then(() => (watchEnded = true));
		// Parked: the parent shows the job, the refresh and read loops wait on the clock.
		await waitUntil(() => parentEdits(origin) === 1 && clock.pendingTimers === 2);
		await clock.advance(REFRESH_MS - 1);
		// Both timers still wait (advance fires only what is due): no edit can follow yet.
		expect(clock.pendingTimers).toBe(2);
		await tracker.idle();
		expect(parentEdits(origin)).toBe(1);
		await clock.advance(1);
		await waitUntil(() => parentEdits(origin) === 2);
		await clock.advance(REFRESH_MS);
		await waitUntil(() => parentEdits(origin) === 3);

		tracker.stop();
		await waitUntil(() => watchEnded);
		expect(tracker.phaseOf(job.id)).toBe('abandoned');
		await waitUntil(() => clock.pendingTimers === 0);
		await clock.advance(REFRESH_MS * 4);
		expect(parentEdits(origin)).toBe(3);
	});

	it('posts its result once when webhooks and a poll race', async () => {
		const { tracker, clock, origins } = await rig();
		const { job, origin } = await createJob(origins);
		void tracker.watch(job, origin);
		const done = await ended(job);
		await Promise.all([
			tracker.complete(done),
			tracker.complete(done),
			clock.advance(POLL_MS),
			tracker.complete(done),
		]);
		await waitUntil(() => tracker.phaseOf(job.id) === 'delivered');
		await tracker.complete(done);
		await tracker.idle();
		expect(replies(origin)).toHaveLength(1);
	});

	it('is abandoned when it cannot be read any more, and the thread says so once', async () => {
		const { tracker, clock, origins } = await rig();
		const { job, origin } = await createJob(origins);
		// The same job as seen on an endpoint that no longer exists (deleted, or the key lost access).
		const gone: Job = { ...job, inference_endpoint_name: 'deleted-endpoint' };
		let watchEnded = false;
		void tracker.watch(gone, origin).then(() => (watchEnded = true));
		await clock.advance(POLL_MS);
		await waitUntil(() => tracker.phaseOf(job.id) === 'abandoned');
		expect(watchEnded).toBe(true);
		await waitUntil(() => replies(origin).length === 1);
		expect(content(replies(origin)[0])).toMatch(/Following the job failed/);
		await clock.advance(POLL_MS * 10);
		expect(replies(origin)).toHaveLength(1);
		expect(clock.pendingTimers).toBe(0);
	});

	it('is abandoned when Slack keeps refusing its result, and delivered once at the next start', async () => {
		const first = await rig();
		const { job, origin } = await createJob(first.origins);
		void first.tracker.watch(job, origin);
		await ended(job);
		standin.api.refuse('chat.postMessage', 'fatal_error', 3);
		await first.clock.advance(POLL_MS);
		await waitUntil(() => first.tracker.phaseOf(job.id) === 'delivering');
		await waitUntil(() => first.clock.pendingTimers >= 1);
		await first.clock.advance(2000);
		await waitUntil(() => first.clock.pendingTimers >= 1);
		await first.clock.advance(4000);
		await waitUntil(() => first.tracker.phaseOf(job.id) === 'abandoned');
		expect(replies(origin)).toHaveLength(0);
		first.tracker.stop();

		const second = await rig({ statePath: first.statePath });
		const resumed = await second.tracker.rediscover();
		expect(resumed.running.map((running) => running.job.id)).not.toContain(job.id);
		expect(second.tracker.phaseOf(job.id)).toBe('delivered');
		expect(replies(origin)).toHaveLength(1);
	});
});

describe('after a restart', () => {
	it('completes a delivery cut short by a crash without posting anything twice, then never again', async () => {
		// Its own secret: the jobs of the other tests are not this app's.
		const secret = `${SECRET}-restart`;
		const before = await rig({ secret });
		const { job, origin } = await createJob(before.origins);
		const done = await ended(job);
		// The app died after posting the result and before the parent said so or the state file knew.
		await threads.postParts(origin.thread, jobResultParts(done));
		before.tracker.stop();

		const afterCrash = await rig({ statePath: before.statePath, secret });
		const resumed = await afterCrash.tracker.rediscover();
		expect(resumed.delivered).toBe(1);
		expect(replies(origin)).toHaveLength(1);
		expect(content(standin.workspace.find(origin.thread.channel, origin.thread.threadTs))).toMatch(
			/Succeeded in/,
		);
		afterCrash.tracker.stop();

		const editsBefore = parentEdits(origin);
		const again = await rig({ statePath: before.statePath, secret });
		expect((await again.tracker.rediscover()).delivered).toBe(0);
		expect(replies(origin)).toHaveLength(1);
		expect(parentEdits(origin)).toBe(editsBefore);
	});

	it('gives a request whose job was never recorded its oldest job, never a later copy of its metadata', async () => {
		const secret = `${SECRET}-unrecorded`;
		const before = await rig({ secret });
		// The app stopped between the create and its record of the job.
		const { job, origin } = await createJob(before.origins, emulator.genericEndpoint, {
			recorded: false,
		});
		before.tracker.stop();
		// Someone with the organization's key copies the job's metadata, seal and all.
		const copy = await management.jobs.create(emulator.genericEndpoint, {
			input: { copied: true },
			metadata: job.metadata,
		});
		await ended(job);
		await ended(copy);
		const after = await rig({ statePath: before.statePath, secret });
		const resumed = await after.tracker.rediscover();
		expect(resumed.delivered).toBe(1);
		expect(after.tracker.phaseOf(job.id)).toBe('delivered');
		expect(after.tracker.phaseOf(copy.id)).toBeUndefined();
		expect(replies(origin)).toHaveLength(1);
		expect(content(replies(origin)[0])).not.toMatch(/copied/);
		// The copy's own report, by webhook, is not posted either.
		await after.tracker.complete(await ended(copy));
		expect(after.tracker.phaseOf(copy.id)).toBeUndefined();
		expect(replies(origin)).toHaveLength(1);
	});

	it('returns the jobs still running for the lifecycle to follow, without following them itself', async () => {
		const secret = `${SECRET}-running`;
		const before = await rig({ secret });
		const { job } = await createJob(before.origins, emulator.slowEndpoint);
		await before.state.addEndpoint(emulator.slowEndpoint);
		before.tracker.stop();
		const after = await rig({ statePath: before.statePath, secret });
		const resumed = await after.tracker.rediscover();
		expect(resumed.running.map((running) => running.job.id)).toEqual([job.id]);
		expect(after.tracker.phaseOf(job.id)).toBeUndefined();
	});
});
