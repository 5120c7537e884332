import type { Clock } from '../../shared/clock';
import type { Job } from '../../shared/schemas';
import type { JobOrigin } from '../state/job-metadata';

/**
 * The phase machine of the jobs a JobTracker knows. Each job is a small state machine:
 *
 *   following ──(terminal status seen)──▶ delivering ──▶ delivered
 *       │                                     │
 *       └──(cannot be read, app stops)──▶ abandoned ◀──(Slack kept refusing)
 *
 * A job leaves `following` once, which ends its watch (the owner's slot is freed then, before the
 * result is posted); `delivered` and `abandoned` are final. A job the app did not follow (a webhook
 * after a restart) starts in `delivering`.
 */

export type JobPhase =
	| { name: 'following'; job: Job; cancelledBy?: string; end: () => void }
	| { name: 'delivering'; job: Job; delivery: Promise<void> }
	| { name: 'delivered' }
	| { name: 'abandoned'; reason: string };

export type JobPhaseName = JobPhase['name'];

const NEXT: Record<JobPhaseName, readonly JobPhaseName[]> = {
	following: ['following', 'delivering', 'abandoned'],
	delivering: ['delivered', 'abandoned'],
	delivered: [],
	abandoned: [],
};

export interface TrackedJob {
	readonly jobId: string;
	readonly endpoint: string;
	readonly origin: JobOrigin;
	readonly trackedAt: number;
	phase: JobPhase;
	/** The parent edit under way: a delivery waits for it, so a late "running" never overwrites the end. */
	lastEdit: Promise<void>;
}

export interface JobPhasesOptions {
	clock: Pick<Clock, 'now'>;
	/** Told each phase a job enters, with the job's status where the phase has one (metrics). */
	onPhase?: (phase: JobPhaseName, status?: string) => void;
	/** A job left `following`, after its watch ended: what follows it may stop. */
	onUnfollowed: (entry: TrackedJob) => void;
}

export class JobPhases {
	private readonly jobs = new Map<string, TrackedJob>();

	constructor(private readonly options: JobPhasesOptions) {}

	get(jobId: string): TrackedJob | undefined {
		return this.jobs.get(jobId);
	}

	all(): TrackedJob[] {
		return [...this.jobs.values()];
	}

	/** The jobs in `following`, on `endpoint` or on any. */
	followed(endpoint?: string): TrackedJob[] {
		return this.all().filter(
			(entry) =>
				entry.phase.name === 'following' && (endpoint === undefined || entry.endpoint === endpoint),
		);
	}

	/** Starts knowing a job, in its first phase. */
	track(job: Job, origin: JobOrigin, phase: JobPhase): TrackedJob {
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
	enter(entry: TrackedJob, next: JobPhase): void {
		const previous = entry.phase;
		if (!NEXT[previous.name].includes(next.name))
			throw new Error(`Job ${entry.jobId} cannot go from ${previous.name} to ${next.name}.`);
		entry.phase = next;
		this.options.onPhase?.(next.name, 'job' in next ? next.job.status : undefined);
		if (previous.name === 'following' && next.name !== 'following') {
			previous.end();
			this.options.onUnfollowed(entry);
		}
	}
}
