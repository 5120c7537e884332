import type { Logger } from '@slack/bolt';
import type { Clock } from '../../shared/clock';
import { nextPollDelayMs } from '../../shared/wait';
import { withLogContext } from '../slack/log';
import { errorSummary } from '../slack/errors';

/**
 * The JobTracker's poll scheduler: one loop per endpoint, reading the newest page of its jobs, so
 * the cost does not grow with the number of jobs followed (the service allows 240 requests a
 * minute). A loop runs while its endpoint has followed jobs; a new job wakes it sooner.
 */

/** Without webhooks: the first reads after a job starts, then a quarter of the youngest job's age. */
const FIRST_POLL_MS = 1000;

interface EndpointPoller {
	dueAt: number;
	/** Aborted to read sooner (a new job) or to stop. */
	wake?: AbortController;
}

export interface EndpointPollsOptions {
	clock: Clock;
	logger: Logger;
	/** With webhooks, polling is a safety net at `pollIntervalMs`; without, it starts fast and backs off to it. */
	webhooks: boolean;
	/** Longest pause between two reads of an endpoint's jobs. */
	pollIntervalMs: number;
	/** Aborted when the tracker stops: every loop ends. */
	stopping: AbortSignal;
	/** The jobs followed on `endpoint` now, with when each was first tracked. */
	followed: (endpoint: string) => readonly { trackedAt: number }[];
	/** One read of the endpoint's jobs. */
	read: (endpoint: string) => Promise<void>;
}

export class EndpointPolls {
	private readonly pollers = new Map<string, EndpointPoller>();

	constructor(private readonly options: EndpointPollsOptions) {}

	/** Starts the endpoint's loop, or wakes it sooner; an earlier read already due is kept. */
	schedule(endpoint: string): void {
		const { stopping, followed, clock } = this.options;
		if (stopping.aborted) return;
		const entries = followed(endpoint);
		const poller = this.pollers.get(endpoint);
		if (!poller) {
			// The loop serves every job on the endpoint: not the log context of the job that started it.
			if (entries.length > 0)
				withLogContext({ job: undefined, request: undefined }, () => void this.loop(endpoint));
			return;
		}
		if (entries.length === 0) {
			poller.wake?.abort();
			return;
		}
		const dueAt = clock.now() + this.delayMs(entries);
		if (dueAt < poller.dueAt) {
			poller.dueAt = dueAt;
			poller.wake?.abort();
		}
	}

	/** When to read the endpoint next: by the youngest job's age, so a new job is seen within seconds. */
	private delayMs(entries: readonly { trackedAt: number }[]): number {
		const { pollIntervalMs, webhooks, clock } = this.options;
		if (webhooks) return pollIntervalMs;
		const youngestAgeMs = clock.now() - Math.max(...entries.map((entry) => entry.trackedAt));
		const minDelayMs = Math.min(FIRST_POLL_MS, pollIntervalMs);
		return nextPollDelayMs(youngestAgeMs, { minDelayMs, maxDelayMs: pollIntervalMs, growth: 0.25 });
	}

	/** One loop per endpoint: wait until due, read, repeat while it has followed jobs. */
	private async loop(endpoint: string): Promise<void> {
		const { clock, logger, stopping, followed, read } = this.options;
		const poller: EndpointPoller = { dueAt: Number.POSITIVE_INFINITY };
		this.pollers.set(endpoint, poller);
		try {
			for (;;) {
				const entries = followed(endpoint);
				if (stopping.aborted || entries.length === 0) return;
				poller.dueAt = clock.now() + this.delayMs(entries);
				while (clock.now() < poller.dueAt && followed(endpoint).length > 0 && !stopping.aborted) {
					poller.wake = new AbortController();
					await clock
						.sleep(poller.dueAt - clock.now(), AbortSignal.any([poller.wake.signal, stopping]))
						.catch(() => undefined);
				}
				if (stopping.aborted || followed(endpoint).length === 0) return;
				poller.dueAt = Number.POSITIVE_INFINITY;
				await read(endpoint);
			}
		} catch (error) {
			logger.error(`Following the jobs of ${endpoint} stopped: ${errorSummary(error)}`);
		} finally {
			this.pollers.delete(endpoint);
		}
	}
}
