import type { Logger } from '@slack/bolt';
import type { ManagementClient } from '../../shared/client';
import type { Clock } from '../../shared/clock';
import { GpuCloudError, NotFoundError } from '../../shared/errors';
import { isTerminalStatus, LIMITS, TRANSCRIPTION_ENDPOINT, type Job } from '../../shared/schemas';
import { nextPollDelayMs } from '../../shared/wait';
import { withLogContext } from '../slack/log';
import { jobParentMessage } from '../messages/parent';
import { errorParts, jobResultParts } from '../messages/results';
import { describeError, errorSummary } from '../slack/errors';
import type { JobOrigin, JobOrigins } from '../state/job-metadata';
import type { PostedRecord } from './posted-record';
import type { SharedState } from '../state/shared-state';
import type { SlackThreads } from '../slack/slack-thread';
import type { StateStore } from '../state/state-store';

/**
 * Follows every job the app started until its result is in the thread, exactly once. Completion
 * arrives by webhook (`complete`) or by polling, whichever is first; the parent message shows the
 * status as it changes. Polling is one loop per endpoint reading the newest page of its jobs, so
 * its cost does not grow with the number of jobs (the service allows 240 requests a minute). After
 * a restart `resume` finds the app's jobs again from their metadata. Every wait is on the injected
 * Clock.
 *
 * Each job is a small state machine:
 *
 *   following ──(terminal status seen)──▶ delivering ──▶ delivered
 *       │                                     │
 *       └──(cannot be read, app stops)──▶ abandoned ◀──(Slack kept refusing)
 *
 * A job leaves `following` once, which ends its `watch` (the owner's slot is freed then, before the
 * result is posted); `delivered` and `abandoned` are final. A job the app did not follow (a webhook
 * after a restart) starts in `delivering`.
 */

export interface JobTrackerOptions {
	management: ManagementClient;
	threads: SlackThreads;
	state: StateStore;
	/** The one record of what was delivered. */
	posted: PostedRecord;
	clock: Clock;
	logger: Logger;
	/** Tells the jobs this workspace's app created (and where they post) from anyone else's. */
	origins: JobOrigins;
	/** With webhooks, polling is a safety net at `pollIntervalMs`; without, it starts fast and backs off to it. */
	webhooks: boolean;
	/** Longest pause between two reads of an endpoint's jobs. */
	pollIntervalMs: number;
	/** How often a running job's parent refreshes its elapsed time. */
	statusRefreshMs?: number;
	resumeWindowHours: number;
	/**
	 * Several replicas: a replica follows a job while it holds the job's `follow:<id>` lease; `resume`
	 * (run by every replica now and then) takes up only jobs whose lease is free, so the jobs of a
	 * replica that died are followed again by another once its leases expire.
	 */
	shared?: Pick<SharedState, 'lease' | 'releaseLease' | 'leaseMs'>;
	/** Told each phase a job enters, with the job's status where the phase has one (metrics). */
	onPhase?: (phase: JobPhaseName, status?: string) => void;
}

export type JobPhase =
	| { name: 'following'; job: Job; cancelledBy?: string; end: () => void }
	| { name: 'delivering'; job: Job; delivery: Promise<void> }
	| { name: 'delivered' }
	| { name: 'abandoned'; reason: string };

type JobPhaseName = JobPhase['name'];

const NEXT: Record<JobPhaseName, readonly JobPhaseName[]> = {
	following: ['following', 'delivering', 'abandoned'],
	delivering: ['delivered', 'abandoned'],
	delivered: [],
	abandoned: [],
};

interface TrackedJob {
	readonly jobId: string;
	readonly endpoint: string;
	readonly origin: JobOrigin;
	readonly trackedAt: number;
	phase: JobPhase;
	/** The parent edit under way: a delivery waits for it, so a late "running" never overwrites the end. */
	lastEdit: Promise<void>;
}

/** A job the app found again after a restart, still running. */
interface RunningJob {
	job: Job;
	origin: JobOrigin;
}

const RESUME_MAX_PAGES = 10;
/** Without webhooks: the first reads after a job starts, then a quarter of the youngest job's age. */
const FIRST_POLL_MS = 1000;

interface EndpointPoller {
	dueAt: number;
	/** Aborted to read sooner (a new job) or to stop. */
	wake?: AbortController;
}

export class JobTracker {
	private readonly jobs = new Map<string, TrackedJob>();
	private readonly pollers = new Map<string, EndpointPoller>();
	private readonly stopping = new AbortController();
	/** Set while the loop refreshing the parents runs; aborted when no job is followed any more. */
	private refresher?: AbortController;

	constructor(private readonly options: JobTrackerOptions) {}

	/** Starts following a job the app just created; resolves when it stops following it (the job no longer uses a GPU). */
	watch(job: Job, origin: JobOrigin): Promise<void> {
		// Every line about the job (its status edits, its delivery) carries its id.
		return withLogContext({ job: job.id }, () => this.follow(job, origin));
	}

	private follow(job: Job, origin: JobOrigin): Promise<void> {
		if (this.stopping.signal.aborted || this.jobs.has(job.id)) return Promise.resolve();
		return new Promise<void>((end) => {
			const entry = this.track(job, origin, { name: 'following', job, end });
			this.options.shared?.lease(followLease(job.id)).catch(() => undefined);
			if (isTerminalStatus(job.status)) {
				void this.complete(job);
				return;
			}
			// Shows the job id and the Cancel button at once; the refresh loop keeps the elapsed time fresh.
			this.editParent(entry);
			this.startRefreshing();
			this.schedulePoll(entry.endpoint);
		});
	}

	/** Where a job stands in this process, if it knows the job. */
	phaseOf(jobId: string): JobPhaseName | undefined {
		return this.jobs.get(jobId)?.phase.name;
	}

	/** The endpoint of a job this process knows, for `/gpu status|cancel <id>`. */
	endpointOf(jobId: string): string | undefined {
		return this.jobs.get(jobId)?.endpoint;
	}

	/** Endpoints worth searching for a job id: the ones this app has created jobs on. */
	knownEndpoints(): string[] {
		return [
			...new Set([
				TRANSCRIPTION_ENDPOINT,
				...this.options.state.endpoints,
				...[...this.jobs.values()].map((entry) => entry.endpoint),
			]),
		];
	}

	/** Remembers who pressed Cancel, for the note in the thread. */
	noteCancelledBy(jobId: string, user: string): void {
		const entry = this.jobs.get(jobId);
		if (entry?.phase.name === 'following') this.enter(entry, { ...entry.phase, cancelledBy: user });
	}

	/**
	 * A job reached its end (a webhook said so, or polling saw it). Jobs this app did not start are
	 * ignored. Each job is delivered once however many times this is called.
	 */
	complete(job: Job): Promise<void> {
		return withLogContext({ job: job.id }, () => this.settle(job));
	}

	private async settle(job: Job): Promise<void> {
		if (!isTerminalStatus(job.status)) return;
		let entry = this.jobs.get(job.id);
		if (!entry) {
			const origin = await this.options.origins.origin(job);
			if (!origin) return;
			// Another call may have taken it up while the record was read.
			entry = this.jobs.get(job.id);
			if (!entry) {
				// Not followed here (a webhook after a restart): it starts at delivering.
				const delivery = Promise.resolve().then(() => this.deliver(adopted, job));
				const adopted = this.track(job, origin, { name: 'delivering', job, delivery });
				return delivery;
			}
		}
		const phase = entry.phase;
		if (phase.name === 'delivering') return phase.delivery;
		if (phase.name !== 'following') return;
		const following = entry;
		const delivery = Promise.resolve().then(() => this.deliver(following, job, phase.cancelledBy));
		this.enter(entry, { name: 'delivering', job, delivery });
		return delivery;
	}

	/**
	 * Finds the app's jobs of the last hours again: delivers those that ended, and returns those still
	 * running. They are looked at oldest first, so a request whose job was never recorded takes its
	 * first job, never a later copy of its metadata.
	 */
	async resume(): Promise<{ running: RunningJob[]; delivered: number }> {
		const { management, clock, origins, logger, posted } = this.options;
		const cutoff = clock.now() - this.options.resumeWindowHours * 3600_000;
		const running: RunningJob[] = [];
		const deliveries: Promise<void>[] = [];
		const listed = new Map<string, Job>();
		for (const endpoint of this.knownEndpoints()) {
			for (let page = 1; page <= RESUME_MAX_PAGES; page++) {
				let result;
				try {
					result = await management.jobs.list(endpoint, { page, page_size: LIMITS.pageSizeMax });
				} catch (error) {
					if (!(error instanceof NotFoundError))
						logger.warn(
							`Could not list jobs of ${endpoint} to resume them: ${errorSummary(error)}`,
						);
					break;
				}
				for (const job of result.items) {
					if (Date.parse(job.create_time) < cutoff || this.jobs.has(job.id)) continue;
					if (origins.seal.origin(job)) listed.set(job.id, job);
				}
				if (page * result.page_size >= result.total_size || result.items.length === 0) break;
			}
		}
		const oldestFirst = [...listed.values()].sort(
			(a, b) => Date.parse(a.create_time) - Date.parse(b.create_time),
		);
		for (const job of oldestFirst) {
			const origin = await origins.origin(job, { claim: true });
			if (!origin) continue;
			if (!isTerminalStatus(job.status)) {
				// Another replica follows it, unless its lease ran out (that replica died). A job younger
				// than a lease may be between its creation and its creator's lease: left to the next look.
				const { shared } = this.options;
				if (
					shared &&
					(clock.now() - Date.parse(job.create_time) < shared.leaseMs ||
						!(await shared.lease(followLease(job.id))))
				)
					continue;
				running.push({ job, origin });
			} else if (!posted.isDelivered(job.id)) deliveries.push(this.complete(job));
		}
		await Promise.all(deliveries);
		return { running, delivered: deliveries.length };
	}

	/** Stops following (on shutdown): every watch ends; results not yet posted are found again by `resume`. */
	stop(): void {
		this.stopping.abort();
		this.options.posted.close();
		for (const entry of this.jobs.values()) {
			if (entry.phase.name === 'following')
				this.enter(entry, { name: 'abandoned', reason: 'the app stopped' });
		}
	}

	/** Resolves when every delivery under way has finished (graceful shutdown, tests). */
	async idle(): Promise<void> {
		await Promise.all(
			[...this.jobs.values()].map((entry) =>
				entry.phase.name === 'delivering' ? entry.phase.delivery.catch(() => undefined) : undefined,
			),
		);
	}

	private track(job: Job, origin: JobOrigin, phase: JobPhase): TrackedJob {
		const entry: TrackedJob = {
			endpoint: job.inference_endpoint_name,
			jobId: job.id,
			origin,
			trackedAt: this.options.clock.now(),
			phase,
			lastEdit: Promise.resolve(),
		};
		this.jobs.set(job.id, entry);
		this.options.onPhase?.(phase.name, job.status);
		return entry;
	}

	/** The one way a job changes phase; a step the machine does not allow is a bug, not a state. */
	private enter(entry: TrackedJob, next: JobPhase): void {
		const previous = entry.phase;
		if (!NEXT[previous.name].includes(next.name))
			throw new Error(`Job ${entry.jobId} cannot go from ${previous.name} to ${next.name}.`);
		entry.phase = next;
		this.options.onPhase?.(next.name, 'job' in next ? next.job.status : undefined);
		if (previous.name === 'following' && next.name !== 'following') {
			previous.end();
			// Ends with the shutdown at the latest; the lease then expires by itself.
			this.options.shared?.releaseLease(followLease(entry.jobId)).catch(() => undefined);
			// The endpoint's loop may have nothing left to read, the refresh loop nothing to refresh.
			this.schedulePoll(entry.endpoint);
			if (this.followed().length === 0) this.refresher?.abort();
		}
	}

	private followed(endpoint?: string): TrackedJob[] {
		return [...this.jobs.values()].filter(
			(entry) =>
				entry.phase.name === 'following' && (endpoint === undefined || entry.endpoint === endpoint),
		);
	}

	/** Refreshes the parents of followed jobs (their elapsed time) while there are any. */
	private startRefreshing(): void {
		if (this.refresher && !this.refresher.signal.aborted) return;
		const refresher = new AbortController();
		this.refresher = refresher;
		const refreshMs = this.options.statusRefreshMs ?? 15_000;
		void withLogContext({ job: undefined, request: undefined }, async () => {
			try {
				while (this.followed().length > 0) {
					await this.options.clock.sleep(
						refreshMs,
						AbortSignal.any([refresher.signal, this.stopping.signal]),
					);
					for (const entry of this.followed()) this.editParent(entry);
				}
			} catch {
				// Nothing left to refresh, or the tracker stopped.
			} finally {
				if (this.refresher === refresher) this.refresher = undefined;
			}
		});
	}

	/** When to read the endpoint next: by the youngest job's age, so a new job is seen within seconds. */
	private pollDelayMs(entries: TrackedJob[]): number {
		const { pollIntervalMs, webhooks, clock } = this.options;
		if (webhooks) return pollIntervalMs;
		const youngestAgeMs = clock.now() - Math.max(...entries.map((entry) => entry.trackedAt));
		const minDelayMs = Math.min(FIRST_POLL_MS, pollIntervalMs);
		return nextPollDelayMs(youngestAgeMs, { minDelayMs, maxDelayMs: pollIntervalMs, growth: 0.25 });
	}

	/** Starts the endpoint's loop, or wakes it sooner; an earlier read already due is kept. */
	private schedulePoll(endpoint: string): void {
		if (this.stopping.signal.aborted) return;
		const entries = this.followed(endpoint);
		const poller = this.pollers.get(endpoint);
		if (!poller) {
			// The loop serves every job on the endpoint: not the log context of the job that started it.
			if (entries.length > 0)
				withLogContext({ job: undefined, request: undefined }, () => void this.pollLoop(endpoint));
			return;
		}
		if (entries.length === 0) {
			poller.wake?.abort();
			return;
		}
		const dueAt = this.options.clock.now() + this.pollDelayMs(entries);
		if (dueAt < poller.dueAt) {
			poller.dueAt = dueAt;
			poller.wake?.abort();
		}
	}

	/** One loop per endpoint: wait until due, read, repeat while it has followed jobs. */
	private async pollLoop(endpoint: string): Promise<void> {
		const { clock, logger } = this.options;
		const poller: EndpointPoller = { dueAt: Number.POSITIVE_INFINITY };
		this.pollers.set(endpoint, poller);
		try {
			for (;;) {
				const entries = this.followed(endpoint);
				if (this.stopping.signal.aborted || entries.length === 0) return;
				poller.dueAt = clock.now() + this.pollDelayMs(entries);
				while (
					clock.now() < poller.dueAt &&
					this.followed(endpoint).length > 0 &&
					!this.stopping.signal.aborted
				) {
					poller.wake = new AbortController();
					await clock
						.sleep(
							poller.dueAt - clock.now(),
							AbortSignal.any([poller.wake.signal, this.stopping.signal]),
						)
						.catch(() => undefined);
				}
				if (this.stopping.signal.aborted || this.followed(endpoint).length === 0) return;
				poller.dueAt = Number.POSITIVE_INFINITY;
				await this.pollEndpoint(endpoint);
			}
		} catch (error) {
			logger.error(`Following the jobs of ${endpoint} stopped: ${errorSummary(error)}`);
		} finally {
			this.pollers.delete(endpoint);
		}
	}

	/** One read of the endpoint's newest jobs settles every followed job on it; the rest are read one by one. */
	private async pollEndpoint(endpoint: string): Promise<void> {
		const { management, logger } = this.options;
		let unseen = this.followed(endpoint);
		try {
			const page = await management.jobs.list(endpoint, { page: 1, page_size: LIMITS.pageSizeMax });
			for (const job of page.items) {
				const entry = this.jobs.get(job.id);
				if (entry?.endpoint === endpoint) this.observe(entry, job);
			}
			const listed = new Set(page.items.map((job) => job.id));
			unseen = unseen.filter((entry) => !listed.has(entry.jobId));
		} catch (error) {
			// A passing failure: try again next round. Otherwise (endpoint gone, key revoked) each job's own read decides.
			if (isPassing(error)) {
				logger.warn(`Could not read the jobs of ${endpoint}: ${errorSummary(error)}`);
				return;
			}
		}
		for (const entry of unseen) {
			if (this.stopping.signal.aborted) return;
			if (entry.phase.name !== 'following') continue;
			try {
				this.observe(entry, await management.jobs.get(endpoint, entry.jobId));
			} catch (error) {
				if (isPassing(error)) continue;
				logger.warn(`Stopped following job ${entry.jobId}: ${errorSummary(error)}`);
				await this.giveUp(entry, describeError(error));
			}
		}
	}

	private observe(entry: TrackedJob, job: Job): void {
		const phase = entry.phase;
		if (phase.name !== 'following') return;
		if (isTerminalStatus(job.status)) {
			void this.complete(job);
		} else if (job.status !== phase.job.status) {
			this.enter(entry, { ...phase, job });
			this.editParent(entry);
		}
	}

	/** The job cannot be followed any more (deleted, key revoked): say so in the thread. */
	private async giveUp(entry: TrackedJob, detail: string): Promise<void> {
		if (entry.phase.name !== 'following') return;
		this.enter(entry, { name: 'abandoned', reason: detail });
		try {
			await this.options.posted.deliver(`${entry.jobId}:error`, entry.origin.thread, {
				parts: errorParts(entry.jobId, 'Following the job', detail),
			});
		} catch (error) {
			this.options.logger.error(
				`Could not report job ${entry.jobId} in Slack: ${errorSummary(error)}`,
			);
		}
	}

	/** Shows the followed job's status; edits of one parent run one after another. */
	private editParent(entry: TrackedJob): void {
		const { threads, posted, clock, logger } = this.options;
		const thread = entry.origin.thread;
		entry.lastEdit = entry.lastEdit.then(async () => {
			const phase = entry.phase;
			if (phase.name !== 'following') return;
			try {
				// Another replica may be delivering it or have delivered it (a webhook reached it first, or
				// it took the job up while Redis was away): its final edit stands.
				await posted.editUnlessDelivered(entry.jobId, () =>
					threads.update(
						thread.channel,
						thread.threadTs,
						jobParentMessage(phase.job, entry.origin, clock.now()),
					),
				);
			} catch (error) {
				logger.warn(`Could not update the status of job ${entry.jobId}: ${errorSummary(error)}`);
			}
		});
	}

	/** Posts the result and shows the end on the parent, through the one record of what was delivered. */
	private async deliver(entry: TrackedJob, job: Job, cancelledBy?: string): Promise<void> {
		const { threads, posted, clock, logger } = this.options;
		const thread = entry.origin.thread;
		try {
			// The status edit under way ends first: it may hold the delivery lease, which is this replica's too.
			await entry.lastEdit;
			await posted.deliver(job.id, thread, {
				parts: jobResultParts(job, cancelledBy),
				finish: () =>
					threads.update(
						thread.channel,
						thread.threadTs,
						jobParentMessage(job, entry.origin, clock.now()),
					),
			});
			this.enter(entry, { name: 'delivered' });
		} catch (error) {
			logger.error(
				`Could not post the result of job ${job.id}; it will be retried when the app restarts: ${errorSummary(error)}`,
			);
			this.enter(entry, { name: 'abandoned', reason: 'Slack refused the result' });
		}
	}
}

function followLease(jobId: string): string {
	return `follow:${jobId}`;
}

/** An error a later read may not meet (the client already retried it). */
function isPassing(error: unknown): boolean {
	return error instanceof GpuCloudError && error.retryable;
}
