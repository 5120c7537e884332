import type { Logger } from '@slack/bolt';
import type { ManagementClient } from '../../shared/client';
import type { Clock } from '../../shared/clock';
import { GpuCloudError, NotFoundError } from '../../shared/errors';
import { isTerminalStatus, LIMITS, TRANSCRIPTION_ENDPOINT, type Job } from '../../shared/schemas';
import { nextPollDelayMs } from '../../shared/wait';
import { withLogContext } from '../log';
import { jobParentMessage } from '../messages/parent';
import { errorParts, jobResultParts } from '../messages/results';
import type { AccessPolicy } from './access';
import { describeError, errorSummary } from './errors';
import type { JobOrigin, JobOriginSeal } from './job-metadata';
import type { SlackThreads } from './slack-thread';
import type { StateStore } from './state-store';

/**
 * Follows every job the app started until its result is in the thread, exactly once. Completion
 * arrives by webhook (`complete`) or by polling, whichever is first; the parent message shows the
 * status as it changes. Polling is one loop per endpoint reading the newest page of its jobs, so
 * its cost does not grow with the number of jobs (the service allows 240 requests a minute). After
 * a restart `resume` finds the app's jobs again from their metadata.
 */

export interface JobTrackerOptions {
  management: ManagementClient;
  threads: SlackThreads;
  state: StateStore;
  access: AccessPolicy;
  clock: Clock;
  logger: Logger;
  /** Tells the app's own jobs (and where they post) from anyone else's. */
  seal: JobOriginSeal;
  /** With webhooks, polling is a safety net at `pollIntervalMs`; without, it starts fast and backs off to it. */
  webhooks: boolean;
  /** Longest pause between two reads of an endpoint's jobs. */
  pollIntervalMs: number;
  /** How often a running job's parent refreshes its elapsed time. */
  statusRefreshMs?: number;
  resumeWindowHours: number;
}

interface TrackedJob {
  endpoint: string;
  jobId: string;
  origin: JobOrigin;
  /** Polled until it ends, is given up or the tracker stops. */
  followed: boolean;
  trackedAt: number;
  ticker?: NodeJS.Timeout;
  lastJob?: Job;
  /** Parent edits run one after another so a late "running" never overwrites "succeeded". */
  edits: Promise<void>;
  delivery?: Promise<void>;
  done: boolean;
  cancelledBy?: string;
}

const DELIVERY_ATTEMPTS = 3;
const RESUME_MAX_PAGES = 10;
/** Without webhooks: the first reads after a job starts, then a quarter of the youngest job's age. */
const FIRST_POLL_MS = 1000;

interface EndpointPoller {
  timer?: NodeJS.Timeout;
  dueAt: number;
  busy: boolean;
}

export class JobTracker {
  private readonly jobs = new Map<string, TrackedJob>();
  private readonly pollers = new Map<string, EndpointPoller>();
  private stopped = false;

  constructor(private readonly options: JobTrackerOptions) {}

  /** Starts following a job the app just created. */
  watch(job: Job, origin: JobOrigin): void {
    // Every line about the job (its status edits, its delivery) carries its id.
    withLogContext({ job: job.id }, () => this.follow(job, origin));
  }

  private follow(job: Job, origin: JobOrigin): void {
    if (this.stopped || this.jobs.has(job.id)) return;
    const entry: TrackedJob = {
      endpoint: job.inference_endpoint_name,
      jobId: job.id,
      origin,
      followed: true,
      trackedAt: this.options.clock.now(),
      lastJob: job,
      edits: Promise.resolve(),
      done: false,
    };
    this.jobs.set(job.id, entry);
    this.options.access.adopt(origin.user, job.id);
    if (isTerminalStatus(job.status)) {
      void this.complete(job);
      return;
    }
    // Shows the job id and the Cancel button at once, then keeps the elapsed time fresh.
    void this.editParent(entry);
    const refresh = this.options.statusRefreshMs ?? 15_000;
    entry.ticker = setInterval(() => void this.editParent(entry), refresh);
    entry.ticker.unref();
    this.schedulePoll(entry.endpoint);
  }

  /** The endpoint of a job this process knows, for `/gpu status|cancel <id>`. */
  endpointOf(jobId: string): string | undefined {
    return this.jobs.get(jobId)?.endpoint;
  }

  /** Endpoints worth searching for a job id: the ones this app has created jobs on. */
  knownEndpoints(): string[] {
    return [...new Set([TRANSCRIPTION_ENDPOINT, ...this.options.state.endpoints, ...[...this.jobs.values()].map((entry) => entry.endpoint)])];
  }

  /** Remembers who pressed Cancel, for the note in the thread. */
  noteCancelledBy(jobId: string, user: string): void {
    const entry = this.jobs.get(jobId);
    if (entry) entry.cancelledBy = user;
  }

  /**
   * A job reached its end (a webhook said so, or polling saw it). Jobs this app did not start are
   * ignored. Each job is delivered once however many times this is called.
   */
  complete(job: Job): Promise<void> {
    return withLogContext({ job: job.id }, () => this.settle(job));
  }

  private settle(job: Job): Promise<void> {
    if (!isTerminalStatus(job.status)) return Promise.resolve();
    let entry = this.jobs.get(job.id);
    if (!entry) {
      const origin = this.options.seal.origin(job);
      if (!origin) return Promise.resolve();
      entry = { endpoint: job.inference_endpoint_name, jobId: job.id, origin, followed: false, trackedAt: this.options.clock.now(), edits: Promise.resolve(), done: false };
      this.jobs.set(job.id, entry);
    }
    if (entry.done) return Promise.resolve();
    entry.delivery ??= this.deliver(entry, job);
    return entry.delivery;
  }

  /** Finds the app's jobs of the last hours again and follows or delivers each. */
  async resume(): Promise<{ watching: number; delivered: number }> {
    const { management, clock, seal, logger } = this.options;
    const cutoff = clock.now() - this.options.resumeWindowHours * 3600_000;
    let watching = 0;
    let delivered = 0;
    const deliveries: Promise<void>[] = [];
    for (const endpoint of this.knownEndpoints()) {
      for (let page = 1; page <= RESUME_MAX_PAGES; page++) {
        let result;
        try {
          result = await management.jobs.list(endpoint, { page, page_size: LIMITS.pageSizeMax });
        } catch (error) {
          if (!(error instanceof NotFoundError)) logger.warn(`Could not list jobs of ${endpoint} to resume them: ${errorSummary(error)}`);
          break;
        }
        for (const job of result.items) {
          if (Date.parse(job.create_time) < cutoff || this.jobs.has(job.id)) continue;
          const origin = seal.origin(job);
          if (!origin) continue;
          if (!isTerminalStatus(job.status)) {
            this.watch(job, origin);
            watching++;
          } else if (!this.options.state.isPosted(job.id)) {
            deliveries.push(this.complete(job));
            delivered++;
          }
        }
        if (page * result.page_size >= result.total_size || result.items.length === 0) break;
      }
    }
    await Promise.all(deliveries);
    return { watching, delivered };
  }

  /** Stops watching (on shutdown). Results not yet posted are found again by `resume`. */
  stop(): void {
    this.stopped = true;
    for (const poller of this.pollers.values()) clearTimeout(poller.timer);
    this.pollers.clear();
    for (const entry of this.jobs.values()) this.release(entry);
  }

  /** Resolves when every delivery under way has finished (graceful shutdown, tests). */
  async idle(): Promise<void> {
    await Promise.all([...this.jobs.values()].map((entry) => entry.delivery?.catch(() => undefined)));
  }

  private followed(endpoint: string): TrackedJob[] {
    return [...this.jobs.values()].filter((entry) => entry.followed && entry.endpoint === endpoint);
  }

  /** When to read the endpoint next: by the youngest job's age, so a new job is seen within seconds. */
  private pollDelayMs(entries: TrackedJob[]): number {
    const { pollIntervalMs, webhooks, clock } = this.options;
    if (webhooks) return pollIntervalMs;
    const youngestAgeMs = clock.now() - Math.max(...entries.map((entry) => entry.trackedAt));
    const minDelayMs = Math.min(FIRST_POLL_MS, pollIntervalMs);
    return nextPollDelayMs(youngestAgeMs, { minDelayMs, maxDelayMs: pollIntervalMs, growth: 0.25 });
  }

  /** (Re)arms the endpoint's loop; an earlier read already due is kept. */
  private schedulePoll(endpoint: string): void {
    if (this.stopped) return;
    const entries = this.followed(endpoint);
    const poller = this.pollers.get(endpoint) ?? { dueAt: Number.POSITIVE_INFINITY, busy: false };
    if (entries.length === 0) {
      clearTimeout(poller.timer);
      if (!poller.busy) this.pollers.delete(endpoint);
      return;
    }
    this.pollers.set(endpoint, poller);
    if (poller.busy) return;
    const delay = this.pollDelayMs(entries);
    const now = this.options.clock.now();
    if (poller.timer && poller.dueAt <= now + delay) return;
    clearTimeout(poller.timer);
    poller.dueAt = now + delay;
    // The loop serves every job on the endpoint: not the context of the job that happened to arm it.
    poller.timer = setTimeout(() => withLogContext({ job: undefined, request: undefined }, () => void this.pollEndpoint(endpoint, poller)), delay);
    poller.timer.unref();
  }

  /** One read of the endpoint's newest jobs settles every followed job on it; the rest are read one by one. */
  private async pollEndpoint(endpoint: string, poller: EndpointPoller): Promise<void> {
    const { management, logger } = this.options;
    poller.timer = undefined;
    poller.busy = true;
    try {
      let unseen = this.followed(endpoint);
      try {
        const page = await management.jobs.list(endpoint, { page: 1, page_size: LIMITS.pageSizeMax });
        for (const job of page.items) {
          const entry = this.jobs.get(job.id);
          if (entry?.followed && entry.endpoint === endpoint) this.observe(entry, job);
        }
        const listed = new Set(page.items.map((job) => job.id));
        unseen = unseen.filter((entry) => entry.followed && !listed.has(entry.jobId));
      } catch (error) {
        // A passing failure: try again next round. Otherwise (endpoint gone, key revoked) each job's own read decides.
        if (isPassing(error)) {
          logger.warn(`Could not read the jobs of ${endpoint}: ${errorSummary(error)}`);
          return;
        }
      }
      for (const entry of unseen) {
        if (this.stopped) return;
        if (!entry.followed) continue;
        try {
          this.observe(entry, await management.jobs.get(endpoint, entry.jobId));
        } catch (error) {
          if (isPassing(error)) continue;
          logger.warn(`Stopped following job ${entry.jobId}: ${errorSummary(error)}`);
          await this.giveUp(entry, describeError(error));
        }
      }
    } finally {
      poller.busy = false;
      if (this.pollers.get(endpoint) === poller) this.schedulePoll(endpoint);
    }
  }

  private observe(entry: TrackedJob, job: Job): void {
    if (isTerminalStatus(job.status)) {
      void this.complete(job);
    } else if (job.status !== entry.lastJob?.status) {
      entry.lastJob = job;
      void this.editParent(entry);
    }
  }

  /** The job cannot be followed any more (deleted, key revoked): say so in the thread. */
  private async giveUp(entry: TrackedJob, detail: string): Promise<void> {
    if (entry.done) return;
    entry.done = true;
    this.release(entry);
    const { threads, logger } = this.options;
    try {
      await threads.postParts(entry.origin.thread, errorParts(entry.jobId, 'Following the job', detail));
    } catch (error) {
      logger.error(`Could not report job ${entry.jobId} in Slack: ${errorSummary(error)}`);
    }
  }

  private editParent(entry: TrackedJob, job = entry.lastJob): Promise<void> {
    if (!job) return entry.edits;
    const { threads, clock, logger } = this.options;
    const thread = entry.origin.thread;
    entry.edits = entry.edits.then(async () => {
      if (entry.done && !isTerminalStatus(job.status)) return;
      try {
        await threads.update(thread.channel, thread.threadTs, jobParentMessage(job, entry.origin, clock.now()));
      } catch (error) {
        logger.warn(`Could not update the status of job ${entry.jobId}: ${errorSummary(error)}`);
        if (isTerminalStatus(job.status)) throw error;
      }
    });
    return entry.edits;
  }

  private async deliver(entry: TrackedJob, job: Job): Promise<void> {
    const { threads, state, clock, logger } = this.options;
    // The job no longer uses a GPU: its owner's slot is free even before the result is posted.
    this.release(entry);
    for (let attempt = 1; ; attempt++) {
      try {
        if (!state.isPosted(job.id)) await threads.postParts(entry.origin.thread, jobResultParts(job, entry.cancelledBy));
        entry.lastJob = job;
        await this.editParent(entry, job);
        await state.markPosted(job.id);
        entry.done = true;
        return;
      } catch (error) {
        if (attempt >= DELIVERY_ATTEMPTS || this.stopped) {
          logger.error(`Could not post the result of job ${job.id}; it will be retried when the app restarts: ${errorSummary(error)}`);
          entry.delivery = undefined;
          entry.edits = Promise.resolve();
          return;
        }
        await clock.sleep(attempt * 2000).catch(() => undefined);
      }
    }
  }

  private release(entry: TrackedJob): void {
    entry.followed = false;
    if (entry.ticker) clearInterval(entry.ticker);
    entry.ticker = undefined;
    this.options.access.release(entry.origin.user, entry.jobId);
  }
}

/** An error a later read may not meet (the client already retried it). */
function isPassing(error: unknown): boolean {
  return error instanceof GpuCloudError && error.retryable;
}
