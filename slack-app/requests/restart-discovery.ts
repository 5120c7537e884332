import type { Logger } from '@slack/bolt';
import type { ManagementClient } from '../../shared/client';
import type { Clock } from '../../shared/clock';
import { NotFoundError } from '../../shared/errors';
import { isTerminalStatus, type Job } from '../../shared/schemas';
import { errorSummary } from '../slack/errors';
import type { JobOrigin, JobOrigins } from '../state/job-metadata';
import type { SharedState } from '../state/shared-state';

/** A job the app found again after a restart, still running. */
export interface RunningJob {
	job: Job;
	origin: JobOrigin;
}

/** Pages of an endpoint's jobs read at most (newest first, 100 a page). */
const DISCOVERY_MAX_PAGES = 10;

export interface RestartDiscoveryOptions {
	management: ManagementClient;
	clock: Clock;
	logger: Logger;
	origins: JobOrigins;
	/**
	 * A running job is taken up only with its `follow:<id>` lease: held by the replica that follows
	 * it, free once that replica died.
	 */
	leases: Pick<SharedState, 'lease' | 'leaseMs'>;
	resumeWindowHours: number;
	/** Where to look: the endpoints the app created jobs on. */
	endpoints: readonly string[];
	/** Jobs this process knows already (followed or delivered): not looked at again. */
	isKnown: (jobId: string) => boolean;
	isDelivered: (jobId: string) => boolean;
	/** Delivers a job that ended while nobody followed it. */
	complete: (job: Job) => Promise<void>;
}

/**
 * Restart discovery: finds the app's jobs of the last hours again in the service's job lists,
 * delivers those that ended and nobody delivered, and returns those still running for the caller
 * to follow. They are looked at oldest first, so a request whose job was never recorded takes its
 * first job, never a later copy of its metadata.
 */
export async function rediscoverJobs(
	options: RestartDiscoveryOptions,
): Promise<{ running: RunningJob[]; delivered: number }> {
	const { management, clock, origins, logger, leases } = options;
	const cutoff = clock.now() - options.resumeWindowHours * 3600_000;
	const listed = new Map<string, Job>();
	for (const endpoint of options.endpoints) {
		try {
			for await (const job of management.jobs.listAll(endpoint, {
				maxPages: DISCOVERY_MAX_PAGES,
			})) {
				if (Date.parse(job.create_time) < cutoff || options.isKnown(job.id)) continue;
				if (origins.seal.origin(job)) listed.set(job.id, job);
			}
		} catch (error) {
			// What was read before the failure is kept; a missing endpoint has no jobs to find.
			if (!(error instanceof NotFoundError))
				logger.warn(`Could not list jobs of ${endpoint} to resume them: ${errorSummary(error)}`);
		}
	}
	// Jobs created in the same instant (a service may stamp whole seconds) tie on create_time; the
	// listing, newest first, still orders them, so the later one there is the older.
	const oldestFirst = [...listed.values()]
		.reverse()
		.sort((a, b) => Date.parse(a.create_time) - Date.parse(b.create_time));
	const running: RunningJob[] = [];
	const deliveries: Promise<void>[] = [];
	for (const job of oldestFirst) {
		const origin = await origins.origin(job, { claim: true });
		if (!origin) continue;
		if (!isTerminalStatus(job.status)) {
			// Another replica follows it, unless its lease ran out (that replica died). A job younger
			// than a lease may be between its creation and its creator's lease: left to the next look.
			// (Its age counts from 0 when the service's clock is ahead: it is young.)
			const ageMs = Math.max(0, clock.now() - Date.parse(job.create_time));
			if (ageMs < leases.leaseMs || !(await leases.lease(followLease(job.id)))) continue;
			running.push({ job, origin });
		} else if (!options.isDelivered(job.id)) deliveries.push(options.complete(job));
	}
	await Promise.all(deliveries);
	return { running, delivered: deliveries.length };
}

/** Held by the replica that follows the job. */
export function followLease(jobId: string): string {
	return `follow:${jobId}`;
}

/** Held by the replica creating the request's job, until the job is recorded (or none was made). */
export function createLease(requestId: string): string {
	return `create:${requestId}`;
}
