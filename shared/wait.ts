import type { Clock } from './clock';
import {
	AbortedError,
	GpuCloudError,
	JobCancelledError,
	JobFailedError,
	WaitTimeoutError,
} from './errors';
import { isTerminalStatus, type Job } from './schemas';

/**
 * How often to look at a job: every `minDelayMs` at first, then a fixed share of the time already
 * waited, capped. A 3-second job is noticed within about half a second in ~9 requests; a 2-hour
 * transcription costs about 110 requests and is noticed within 90 s.
 */
export interface PollSchedule {
	minDelayMs: number;
	maxDelayMs: number;
	/** Next delay as a share of the time waited so far. */
	growth: number;
}

export const DEFAULT_POLL_SCHEDULE: PollSchedule = {
	minDelayMs: 250,
	maxDelayMs: 90_000,
	growth: 0.25,
};

export function nextPollDelayMs(
	elapsedMs: number,
	schedule: PollSchedule = DEFAULT_POLL_SCHEDULE,
): number {
	return Math.round(
		Math.min(schedule.maxDelayMs, Math.max(schedule.minDelayMs, elapsedMs * schedule.growth)),
	);
}

export interface WaitOptions {
	/** Give up after this long (the job keeps running on the service). Default: wait indefinitely. */
	timeoutMs?: number;
	signal?: AbortSignal;
	/** Called with the first state seen and on every status change. */
	onProgress?: (job: Job) => void;
	/** Delay before the first look, e.g. right after creating the job. Default 0. */
	initialDelayMs?: number;
	schedule?: Partial<PollSchedule>;
}

/** Polls `read` until the job reaches `succeeded`, `failed` or `cancelled`; passing errors are waited out. */
export async function waitForJob(
	read: () => Promise<Job>,
	clock: Clock,
	jobId: string,
	options: WaitOptions = {},
): Promise<Job> {
	const schedule = { ...DEFAULT_POLL_SCHEDULE, ...options.schedule };
	const start = clock.now();
	const deadline =
		options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : start + options.timeoutMs;
	let lastStatus: string | undefined;
	let delay = options.initialDelayMs ?? 0;

	for (;;) {
		if (delay > 0) {
			try {
				await clock.sleep(delay, options.signal);
			} catch (error) {
				// Only a cancelled wait is reported as one; a broken sleep must not pass for a cancel.
				if (!options.signal?.aborted) throw error;
				throw new AbortedError(
					`Waiting for job ${jobId} was cancelled; the job itself keeps running on GPU Cloud.`,
					{ cause: error },
				);
			}
		}
		try {
			const job = await read();
			if (job.status !== lastStatus) {
				lastStatus = job.status;
				options.onProgress?.(job);
			}
			if (isTerminalStatus(job.status)) return job;
		} catch (error) {
			// A read that still failed after its own retries is not a reason to abandon a running job.
			if (!(error instanceof GpuCloudError && error.retryable) || clock.now() >= deadline)
				throw error;
		}
		const now = clock.now();
		if (now >= deadline) {
			throw new WaitTimeoutError(
				`Job ${jobId} did not finish within ${Math.round((options.timeoutMs ?? 0) / 1000)} s (last status: ${lastStatus ?? 'unknown'}). It may still finish; read it again later.`,
				jobId,
				lastStatus ?? 'unknown',
			);
		}
		delay = Math.min(nextPollDelayMs(now - start, schedule), deadline - now);
	}
}

function failureText(output: unknown): string | undefined {
	if (output && typeof output === 'object' && 'error' in output) {
		const { error } = output;
		if (typeof error === 'string') return error;
		if (
			error &&
			typeof error === 'object' &&
			'message' in error &&
			typeof error.message === 'string'
		)
			return error.message;
	}
	return undefined;
}

/** Returns a succeeded job; throws JobFailedError or JobCancelledError for the other endings. */
export function requireSucceeded(job: Job): Job {
	if (job.status === 'failed') {
		const reason = failureText(job.output);
		throw new JobFailedError(
			`Job ${job.id} on "${job.inference_endpoint_name}" failed${reason ? `: ${reason}` : '.'}`,
			job.id,
			job.output,
		);
	}
	if (job.status === 'cancelled') {
		throw new JobCancelledError(
			`Job ${job.id} on "${job.inference_endpoint_name}" was cancelled.`,
			job.id,
		);
	}
	return job;
}
