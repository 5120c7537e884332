import type { AgentSessions } from '../slack/agent-sessions';
import type { Logger } from '@slack/bolt';
import type { ManagementClient } from '../../shared/client';
import type { Clock } from '../../shared/clock';
import { GpuCloudError } from '../../shared/errors';
import { isTerminalStatus, LIMITS, TRANSCRIPTION_ENDPOINT, type Job } from '../../shared/schemas';
import { CALL_SKIPPED, withCallPriority } from '../slack/call-budget';
import { withLogContext } from '../slack/log';
import type { WorkflowSteps } from '../slack/workflow-steps';
import { jobParentMessage } from '../messages/parent';
import { errorParts, jobResultParts } from '../messages/results';
import { EndpointPolls } from './endpoint-polls';
import { describeError, errorSummary, slackErrorCode } from '../slack/errors';
import type { JobOrigin, JobOrigins } from '../state/job-metadata';
import { JobPhases, type JobPhaseName, type TrackedJob } from './job-phases';
import { oneProcessLeases } from '../state/local-state';
import { ParentRefresh } from './parent-refresh';
import type { DeliveryRecord } from './delivery-record';
import { followLease, rediscoverJobs, type RunningJob } from './restart-discovery';
import type { SharedState } from '../state/shared-state';
import type { SlackThreads } from '../slack/slack-thread';
import type { StateFile } from '../state/state-file';

/**
 * Follows every job the app started until its result is in the thread, exactly once. Completion
 * arrives by webhook (`complete`) or by polling (EndpointPolls), whichever is first; the parent
 * message shows the status as it changes (ParentRefresh keeps its elapsed time fresh). Each job
 * moves through JobPhases. After a restart `rediscover` finds the app's jobs again from their
 * metadata (restart discovery). Every wait is on the injected Clock.
 */

export interface JobTrackerOptions {
	management: ManagementClient;
	threads: SlackThreads;
	state: StateFile;
	/** The one record of what was delivered. */
	deliveries: DeliveryRecord;
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
	 * A replica follows a job while it holds the job's `follow:<id>` lease; `rediscover` (run by
	 * every replica now and then) takes up only jobs whose lease is free, so the jobs of a replica
	 * that died are followed again by another once its leases expire. The app passes its
	 * SharedState; alone (tests), one process's leases.
	 */
	leases?: Pick<SharedState, 'lease' | 'releaseLease' | 'leaseMs'>;
	/** Told each phase a job enters, with the job's status where the phase has one (metrics). */
	onPhase?: (phase: JobPhaseName, status?: string) => void;
	/** The job's thread is an agent session: closed once its end is posted. */
	sessions?: AgentSessions;
	/** A job run for a Workflow Builder step completes the step with its end. */
	steps?: WorkflowSteps;
}

export class JobTracker {
	private readonly stopping = new AbortController();
	private readonly leases: NonNullable<JobTrackerOptions['leases']>;
	private readonly phases: JobPhases;
	private readonly polls: EndpointPolls;
	private readonly refresh: ParentRefresh<TrackedJob>;
	/** Edits of each job's parent queued or under way. */
	private readonly editsPending = new Map<string, number>();
	/** Jobs whose parent has an edit queued that has not started: it will show the newest status. */
	private readonly editsQueued = new Set<string>();

	constructor(private readonly options: JobTrackerOptions) {
		const { clock, logger } = options;
		this.leases = options.leases ?? oneProcessLeases;
		this.phases = new JobPhases({
			clock,
			onPhase: options.onPhase,
			onUnfollowed: (entry) => {
				// Ends with the shutdown at the latest; the lease then expires by itself.
				this.leases.releaseLease(followLease(entry.jobId)).catch(() => undefined);
				// The endpoint's loop may have nothing left to read, the refresh loop nothing to refresh.
				this.polls.schedule(entry.endpoint);
				this.refresh.stopWhenIdle();
			},
		});
		this.polls = new EndpointPolls({
			clock,
			logger,
			webhooks: options.webhooks,
			pollIntervalMs: options.pollIntervalMs,
			stopping: this.stopping.signal,
			followed: (endpoint) => this.phases.followed(endpoint),
			read: (endpoint) => this.pollEndpoint(endpoint),
		});
		this.refresh = new ParentRefresh({
			clock,
			refreshMs: options.statusRefreshMs ?? 15_000,
			stopping: this.stopping.signal,
			followed: () => this.phases.followed(),
			// Only the elapsed time changes: skipped when Slack's budget for edits has no room now.
			refresh: (entry) => withCallPriority('skip', () => this.editParent(entry, true)),
		});
	}

	/** Starts following a job the app just created; resolves when it stops following it (the job no longer uses a GPU). */
	watch(job: Job, origin: JobOrigin): Promise<void> {
		// Every line about the job (its status edits, its delivery) carries its id.
		return withLogContext({ job: job.id }, () => this.follow(job, origin));
	}

	private follow(job: Job, origin: JobOrigin): Promise<void> {
		if (this.stopping.signal.aborted || this.phases.get(job.id)) return Promise.resolve();
		return new Promise<void>((end) => {
			const entry = this.phases.track(job, origin, { name: 'following', job, end });
			this.leases.lease(followLease(job.id)).catch(() => undefined);
			if (isTerminalStatus(job.status)) {
				void this.complete(job);
				return;
			}
			// Shows the job id and the Cancel button at once; the refresh loop keeps the elapsed time fresh.
			this.editParent(entry);
			this.refresh.start();
			this.polls.schedule(entry.endpoint);
		});
	}

	/** Where a job stands in this process, if it knows the job. */
	phaseOf(jobId: string): JobPhaseName | undefined {
		return this.phases.get(jobId)?.phase.name;
	}

	/** The endpoint of a job this process knows, for `/gpu status|cancel <id>`. */
	endpointOf(jobId: string): string | undefined {
		return this.phases.get(jobId)?.endpoint;
	}

	/** Endpoints worth searching for a job id: the ones this app has created jobs on. */
	knownEndpoints(): string[] {
		return [
			...new Set([
				TRANSCRIPTION_ENDPOINT,
				...this.options.state.endpoints,
				...this.phases.all().map((entry) => entry.endpoint),
			]),
		];
	}

	/** Remembers who pressed Cancel, for the note in the thread. */
	noteCancelledBy(jobId: string, user: string): void {
		const entry = this.phases.get(jobId);
		if (entry?.phase.name === 'following')
			this.phases.enter(entry, { ...entry.phase, cancelledBy: user });
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
		let entry = this.phases.get(job.id);
		if (!entry) {
			const origin = await this.options.origins.origin(job);
			if (!origin) return;
			// Another call may have taken it up while the record was read.
			entry = this.phases.get(job.id);
			if (!entry) {
				// Not followed here (a webhook after a restart): it starts at delivering.
				const delivery = Promise.resolve().then(() => this.deliver(adopted, job));
				const adopted = this.phases.track(job, origin, { name: 'delivering', job, delivery });
				return delivery;
			}
		}
		const phase = entry.phase;
		if (phase.name === 'delivering') return phase.delivery;
		if (phase.name !== 'following') return;
		const following = entry;
		const delivery = Promise.resolve().then(() => this.deliver(following, job, phase.cancelledBy));
		this.phases.enter(entry, { name: 'delivering', job, delivery });
		return delivery;
	}

	/**
	 * Restart discovery (see `rediscoverJobs`): delivers the app's jobs of the last hours that ended
	 * and returns those still running, for the caller to follow again.
	 */
	rediscover(): Promise<{ running: RunningJob[]; delivered: number }> {
		const { deliveries } = this.options;
		return rediscoverJobs({
			...this.options,
			leases: this.leases,
			endpoints: this.knownEndpoints(),
			isKnown: (jobId) => this.phases.get(jobId) !== undefined,
			isDelivered: (jobId) => deliveries.isDelivered(jobId),
			complete: (job) => this.complete(job),
		});
	}

	/**
	 * A restart resuming one recorded request: its job (the app's, checked by the caller), read again
	 * from the service. An ended job is delivered (once, whoever delivers); a running one is returned for the caller to follow, unless
	 * another replica follows it (its lease is held) or it is younger than a lease (its creator may
	 * be between the create and the lease).
	 */
	async resumeJob(job: Job): Promise<'running' | 'ended' | 'held'> {
		if (isTerminalStatus(job.status)) {
			await this.complete(job);
			return 'ended';
		}
		const ageMs = Math.max(0, this.options.clock.now() - Date.parse(job.create_time));
		if (ageMs < this.leases.leaseMs || !(await this.leases.lease(followLease(job.id))))
			return 'held';
		return 'running';
	}

	/** How many jobs this tracker follows or delivers now (a workspace with none may be released). */
	tracking(): number {
		return this.phases
			.all()
			.filter((entry) => entry.phase.name === 'following' || entry.phase.name === 'delivering')
			.length;
	}

	/** Stops following (on shutdown): every watch ends; results not yet posted are found again by `rediscover`. */
	stop(): void {
		this.stopping.abort();
		this.options.deliveries.close();
		for (const entry of this.phases.all()) {
			if (entry.phase.name === 'following')
				this.phases.enter(entry, { name: 'abandoned', reason: 'the app stopped' });
		}
	}

	/** Resolves when every delivery under way has finished (graceful shutdown, tests). */
	async idle(): Promise<void> {
		await Promise.all(
			this.phases
				.all()
				.map((entry) =>
					entry.phase.name === 'delivering'
						? entry.phase.delivery.catch(() => undefined)
						: undefined,
				),
		);
	}

	/** One read of the endpoint's newest jobs settles every followed job on it; the rest are read one by one. */
	private async pollEndpoint(endpoint: string): Promise<void> {
		const { management, logger } = this.options;
		let unseen = this.phases.followed(endpoint);
		try {
			const page = await management.jobs.list(endpoint, { page: 1, page_size: LIMITS.pageSizeMax });
			for (const job of page.items) {
				const entry = this.phases.get(job.id);
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
			this.phases.enter(entry, { ...phase, job });
			this.editParent(entry);
		}
	}

	/** The job cannot be followed any more (deleted, key revoked): say so in the thread. */
	private async giveUp(entry: TrackedJob, detail: string): Promise<void> {
		if (entry.phase.name !== 'following') return;
		this.phases.enter(entry, { name: 'abandoned', reason: detail });
		try {
			await this.options.deliveries.deliver(`${entry.jobId}:error`, entry.origin.thread, {
				parts: errorParts(entry.jobId, 'Following the job', detail),
			});
		} catch (error) {
			this.options.logger.error(
				`Could not report job ${entry.jobId} in Slack: ${errorSummary(error)}`,
			);
		}
	}

	/** Shows the followed job's status; edits of one parent run one after another. */
	private editParent(entry: TrackedJob, refresh = false): void {
		const { threads, deliveries, clock, logger } = this.options;
		const thread = entry.origin.thread;
		// Coalesced: an edit not started yet shows the status as it is when it starts (under Slack's
		// 50 edits a minute it may wait); a refresh is not worth one while any edit is under way.
		if (this.editsQueued.has(entry.jobId)) return;
		if (refresh && (this.editsPending.get(entry.jobId) ?? 0) > 0) return;
		this.editsPending.set(entry.jobId, (this.editsPending.get(entry.jobId) ?? 0) + 1);
		this.editsQueued.add(entry.jobId);
		entry.lastEdit = entry.lastEdit.then(async () => {
			this.editsQueued.delete(entry.jobId);
			const phase = entry.phase;
			if (phase.name !== 'following') return;
			try {
				// Another replica may be delivering it or have delivered it (a webhook reached it first, or
				// it took the job up while Redis was away): its final edit stands.
				await deliveries.editUnlessDelivered(entry.jobId, () =>
					threads.update(
						thread.channel,
						thread.parentTs ?? thread.threadTs,
						jobParentMessage(phase.job, entry.origin, clock.now()),
					),
				);
			} catch (error) {
				if (slackErrorCode(error) === CALL_SKIPPED) return;
				logger.warn(`Could not update the status of job ${entry.jobId}: ${errorSummary(error)}`);
			} finally {
				const pending = (this.editsPending.get(entry.jobId) ?? 1) - 1;
				if (pending > 0) this.editsPending.set(entry.jobId, pending);
				else this.editsPending.delete(entry.jobId);
			}
		});
	}

	/** Posts the result and shows the end on the parent, through the one record of what was delivered. */
	private async deliver(entry: TrackedJob, job: Job, cancelledBy?: string): Promise<void> {
		const { threads, deliveries, clock, logger, sessions, steps } = this.options;
		const { thread, step } = entry.origin;
		try {
			// The status edit under way ends first: it may hold the delivery lease, which is this replica's too.
			await entry.lastEdit;
			// The result and the parent's final status go first in Slack's call budget.
			await withCallPriority('first', () =>
				deliveries.deliver(job.id, thread, {
					parts: jobResultParts(job, cancelledBy),
					finish: async () => {
						await threads.update(
							thread.channel,
							thread.parentTs ?? thread.threadTs,
							jobParentMessage(job, entry.origin, clock.now()),
						);
						// Part of the one delivery: the step is completed once, after the thread shows the end.
						if (step) await steps?.jobEnded(step, job, entry.origin.kind);
					},
				}),
			);
			this.phases.enter(entry, { name: 'delivered' });
			// A restart no longer looks at its request.
			await this.options.origins
				.finished(job)
				.catch((error: unknown) =>
					logger.warn(`Could not record job ${job.id} as delivered: ${errorSummary(error)}`),
				);
			await sessions?.settle(thread, 'closed');
		} catch (error) {
			logger.error(
				`Could not post the result of job ${job.id}; it will be retried when the app restarts: ${errorSummary(error)}`,
			);
			this.phases.enter(entry, { name: 'abandoned', reason: 'Slack refused the result' });
		}
	}
}

/** An error a later read may not meet (the client already retried it). */
function isPassing(error: unknown): boolean {
	return error instanceof GpuCloudError && error.retryable;
}
