import {
	AbortedError,
	JobCancelledError,
	JobFailedError,
	WaitTimeoutError,
	ServerError,
} from '../../shared/errors';
import {
	DEFAULT_POLL_SCHEDULE,
	nextPollDelayMs,
	requireSucceeded,
	waitForJob,
} from '../../shared/wait';
import type { Job, JobStatus } from '../../shared/schemas';
import { FakeClock } from '../support/fake-clock';
import { jobFixture } from '../support/fixtures';

/** A job that reaches `finalStatus` once `durationMs` of virtual time has passed. */
function jobThatFinishesAfter(
	clock: FakeClock,
	durationMs: number,
	finalStatus: JobStatus = 'succeeded',
) {
	const start = clock.now();
	const job = jobFixture();
	let reads = 0;
	const read = async (): Promise<Job> => {
		reads++;
		const elapsed = clock.now() - start;
		const status: JobStatus =
			elapsed >= durationMs ? finalStatus : elapsed > 0 ? 'running' : 'pending';
		return {
			...job,
			status,
			output: status === 'failed' ? { error: 'audio file could not be downloaded' } : undefined,
		};
	};
	return { read, job, reads: () => reads, finishedAt: start + durationMs };
}

describe('poll schedule', () => {
	it('starts at 250 ms, grows with the time waited and caps at 90 s', () => {
		expect(nextPollDelayMs(0)).toBe(250);
		expect(nextPollDelayMs(4_000)).toBe(1_000);
		expect(nextPollDelayMs(10 * 60_000)).toBe(DEFAULT_POLL_SCHEDULE.maxDelayMs);
	});

	it('notices a 3-second job within a second using at most 10 reads', async () => {
		const clock = new FakeClock();
		const job = jobThatFinishesAfter(clock, 3_000);
		await expect(waitForJob(job.read, clock, job.job.id)).resolves.toMatchObject({
			status: 'succeeded',
		});
		expect(clock.now() - job.finishedAt).toBeLessThan(1_000);
		expect(job.reads()).toBeLessThanOrEqual(10);
	});

	it('follows a 2-hour job with at most 150 reads', async () => {
		const clock = new FakeClock();
		const job = jobThatFinishesAfter(clock, 2 * 3600_000);
		await waitForJob(job.read, clock, job.job.id);
		expect(job.reads()).toBeLessThanOrEqual(150);
		expect(clock.now() - job.finishedAt).toBeLessThanOrEqual(DEFAULT_POLL_SCHEDULE.maxDelayMs);
	});
});

describe('waitForJob', () => {
	it('reports each status change once', async () => {
		const clock = new FakeClock();
		const job = jobThatFinishesAfter(clock, 2_000);
		const seen: string[] = [];
		await waitForJob(job.read, clock, job.job.id, { onProgress: (j) => seen.push(j.status) });
		expect(seen).toEqual(['pending', 'running', 'succeeded']);
	});

	it.each(['failed', 'cancelled'] as const)('stops at %s without throwing', async (status) => {
		const clock = new FakeClock();
		const job = jobThatFinishesAfter(clock, 1_000, status);
		await expect(waitForJob(job.read, clock, job.job.id)).resolves.toMatchObject({ status });
	});

	it('times out with the last status, checking once more at the deadline', async () => {
		const clock = new FakeClock();
		const job = jobThatFinishesAfter(clock, 60_000);
		const error = await waitForJob(job.read, clock, job.job.id, { timeoutMs: 5_000 }).catch(
			(e: unknown) => e,
		);
		expect(error).toBeInstanceOf(WaitTimeoutError);
		expect(error).toMatchObject({ lastStatus: 'running', jobId: job.job.id });
		expect((error as Error).message).toContain('did not finish within 5 s (last status: running)');
	});

	it('keeps waiting through passing read failures', async () => {
		const clock = new FakeClock();
		const job = jobThatFinishesAfter(clock, 1_000);
		let calls = 0;
		const flaky = async () => {
			calls++;
			if (calls === 2) throw new ServerError('GPU Cloud: HTTP 503', { status: 503 });
			return job.read();
		};
		await expect(waitForJob(flaky, clock, job.job.id)).resolves.toMatchObject({
			status: 'succeeded',
		});
	});

	it('stops when aborted', async () => {
		const clock = new FakeClock();
		const job = jobThatFinishesAfter(clock, 60_000);
		const controller = new AbortController();
		controller.abort();
		await expect(
			waitForJob(job.read, clock, job.job.id, { signal: controller.signal, initialDelayMs: 10 }),
		).rejects.toBeInstanceOf(AbortedError);
	});
});

describe('requireSucceeded', () => {
	it('passes a succeeded job through', () => {
		const job = jobFixture({ status: 'succeeded', output: { text: 'hi' } });
		expect(requireSucceeded(job)).toBe(job);
	});

	it('explains a failed job with the service error', () => {
		const job = jobFixture({ status: 'failed', output: { error: 'file too long', duration: 0 } });
		expect(() => requireSucceeded(job)).toThrow(JobFailedError);
		expect(() => requireSucceeded(job)).toThrow(
			`Job ${job.id} on "transcribe" failed: file too long`,
		);
	});

	it('reports a cancelled job', () => {
		expect(() => requireSucceeded(jobFixture({ status: 'cancelled' }))).toThrow(JobCancelledError);
	});
});
