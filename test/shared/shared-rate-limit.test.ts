import { startEmulator, type RunningEmulator } from '../../emulator';
import { mapWithConcurrency } from '../../shared/concurrency';
import { rateLimitKeyFor } from '../../shared/rate-limiter';
import { createManagementClient, sharedTransport } from '../../shared/runtime';
import type { Transport } from '../../shared/transport';
import { ManualClock, settle } from '../support/manual-clock';

/**
 * Clients that share one API key and nothing else (n8n workers in queue mode: each its own rate
 * limiter, each sure it has the whole budget), against the emulator's limit of 240 per 60 s. Every
 * timer of the clients and the emulator runs on one manual clock, moved to the next timer only
 * when no request is on the wire: the schedule is the same on any machine, however busy. The same
 * run across real processes and the wall clock is the shared-limit benchmark (docs/benchmarks.md).
 */

const LIMIT = 240;
const PROCESSES = 3;
const CREATES = 600;
/** The n8n node's default concurrency. */
const CONCURRENCY = 8;

let emulator: RunningEmulator;
let clock: ManualClock;

beforeEach(async () => {
	clock = new ManualClock(Date.now());
	emulator = await startEmulator({ clock, rateLimitPerMinute: LIMIT, jobDurationMs: 600_000 });
});

afterEach(async () => {
	await emulator.close();
});

/** Stands in for the round trip to the service, as in the benchmark: half each way, in virtual time. */
const LATENCY_MS = 100;

/**
 * The clients' transport: the round trip's latency on the clock, and a count of the requests on the
 * wire, so the test knows when everyone waits on the clock.
 */
function slowTransport(inner: Transport, onWire: { count: number }): Transport {
	return {
		send: async (request) => {
			await clock.sleep(LATENCY_MS / 2);
			onWire.count++;
			try {
				return await inner.send(request);
			} finally {
				onWire.count--;
				await clock.sleep(LATENCY_MS / 2);
			}
		},
	};
}

/**
 * Runs `work` to its end: lets every request on the wire finish, and when none is, moves the clock
 * to the next timer (a rate-limit pause, a Retry-After, a job's end).
 */
async function runOnClock<T>(work: Promise<T>, onWire: { count: number }): Promise<T> {
	let done = false;
	const finished = work.finally(() => {
		done = true;
	});
	while (!done) {
		await settle();
		if (done || onWire.count > 0) continue;
		const next = clock.nextTimerAt;
		if (next === undefined) throw new Error('Nothing on the wire and no timer pending: stuck');
		await clock.advance(Math.max(0, next - clock.now()));
	}
	return await finished;
}

describe('one rate limit shared by clients that share nothing else', () => {
	it('converges on the limit: no create fails, and 429s stay a small share of requests', async () => {
		const onWire = { count: 0 };
		const transport = slowTransport(sharedTransport(), onWire);
		const started = clock.now();
		const perProcess = await runOnClock(
			Promise.all(
				Array.from({ length: PROCESSES }, async (_, process) => {
					const client = createManagementClient({
						baseUrl: emulator.baseUrl,
						organization: emulator.organization,
						apiKey: emulator.apiKey,
						clock,
						transport,
						// Each its own limiter, as in separate processes.
						rateLimit: {
							requestsPerMinute: LIMIT,
							key: `${rateLimitKeyFor(emulator.apiKey, emulator.baseUrl)}#${process}`,
						},
					});
					return await mapWithConcurrency(
						Array.from({ length: CREATES / PROCESSES }, (_, n) => n),
						CONCURRENCY,
						(n) => client.jobs.create(emulator.genericEndpoint, { input: { process, n } }),
					);
				}),
			),
			onWire,
		);
		const settled = perProcess.flat();
		expect(settled.filter((result) => !result.ok)).toEqual([]);
		expect(emulator.jobsOf(emulator.organization)).toHaveLength(CREATES);

		const requests = emulator.requests.filter((request) => request.surface === 'management');
		const answered429 = requests.filter((request) => request.status === 429).length;
		// Each client learns of the others from a few 429s (9 of 609 requests). A client whose 429 did
		// not hold every call of its key: 960 of 1,560.
		expect(answered429 / requests.length).toBeLessThan(0.1);
		// 600 creates at 240 a minute: the last answered after two minutes, not much later.
		const minutes = (Math.max(...requests.map((request) => request.time)) - started) / 60_000;
		expect(minutes).toBeGreaterThanOrEqual((CREATES - LIMIT) / LIMIT);
		expect(minutes).toBeLessThan(3);
	}, 120_000);
});
