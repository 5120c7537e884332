/**
 * Scenario: several processes share one API key's rate limit with no store in common, as n8n
 * workers in queue mode do. Each child process runs the shared client (its own rate limiter, the
 * credential's limit as its ceiling) and creates its share of the jobs at the n8n node's default
 * concurrency; the emulator in this process enforces the service's limit on the key and counts its
 * 429s. Time can run faster than the wall clock (a scaled clock in every process) for CI.
 */
import type { ChildProcess } from 'node:child_process';
import { z } from 'zod/v4';
import { startEmulator } from '../emulator';
import type { Clock } from '../shared/clock';
import { mapWithConcurrency } from '../shared/concurrency';
import { createManagementClient, systemClock } from '../shared/runtime';
import { CHILD_FLAG, askChild, forkBenchChild, stopChild } from './bulk-n8n';
import { median, type Figure, type Scenario } from './lib';

const ENDPOINT = 'echo';
/** Stands in for the round trip to the service, as in the bulk-n8n scenario. */
const LATENCY_MS = 100;

/** Virtual time running `scale` times faster than the wall clock, the same in every process given the same origin. */
export function scaledClock(scale: number, origin: number): Clock {
	if (scale === 1) return systemClock;
	return {
		now: () => origin + (Date.now() - origin) * scale,
		sleep: (ms, signal) => systemClock.sleep(ms / scale, signal),
	};
}

const workRequestSchema = z.object({
	baseUrl: z.string(),
	apiKey: z.string(),
	organization: z.string(),
	requestsPerMinute: z.number().int(),
	creates: z.number().int().min(0),
	concurrency: z.number().int().min(1),
	scale: z.number().positive(),
	origin: z.number(),
});
type WorkRequest = z.infer<typeof workRequestSchema>;

const workReplySchema = z.object({ created: z.number().int(), errors: z.array(z.string()) });

/** The child: one client per request, as one n8n worker running one bulk execution. */
function serveWork(): void {
	process.on('message', (message) => {
		void (async () => {
			try {
				const request = workRequestSchema.parse(message);
				const client = createManagementClient({
					baseUrl: request.baseUrl,
					organization: request.organization,
					apiKey: request.apiKey,
					requestsPerMinute: request.requestsPerMinute,
					clock: scaledClock(request.scale, request.origin),
				});
				const settled = await mapWithConcurrency(
					Array.from({ length: request.creates }, (_, n) => n),
					request.concurrency,
					(n) => client.jobs.create(ENDPOINT, { input: { n } }),
				);
				process.send?.({
					created: settled.filter((result) => result.ok).length,
					errors: settled.flatMap((result) =>
						result.ok
							? []
							: [result.error instanceof Error ? result.error.message : String(result.error)],
					),
				} satisfies z.infer<typeof workReplySchema>);
			} catch (error) {
				process.send?.({ error: error instanceof Error ? error.message : String(error) });
			}
		})();
	});
	process.once('disconnect', () => process.exit(0));
	process.send?.('ready');
}

export interface SharedLimitOptions {
	processes: number;
	/** Creates in all, split evenly between the processes. */
	creates: number;
	limitPerMinute: number;
	/** In flight per process. Default 8, the node's. */
	concurrency?: number;
	/** How much faster than the wall clock time runs. Default 1. */
	timeScale?: number;
}

export interface SharedLimitRun {
	created: number;
	failed: number;
	errors: string[];
	/** 429 answers the emulator sent (each waited out and retried by the client). */
	answered429: number;
	/** Every management request the emulator answered, 429s included. */
	requests: number;
	/** From the first request to the last answer, in (virtual) minutes. */
	minutes: number;
	/** Creates answered per minute. */
	perMinute: number;
	/** Creates answered per minute from the second minute on, when the first window's burst is spent. */
	steadyPerMinute: number;
}

export async function runSharedLimit(options: SharedLimitOptions): Promise<SharedLimitRun> {
	const scale = options.timeScale ?? 1;
	const origin = Date.now();
	const clock = scaledClock(scale, origin);
	const emulator = await startEmulator({
		clock,
		rateLimitPerMinute: options.limitPerMinute,
		jobDurationMs: 600_000,
		faults: { latencyMs: LATENCY_MS, surfaces: ['management'] },
	});
	const children: ChildProcess[] = [];
	try {
		for (let n = 0; n < options.processes; n++) children.push(await forkBenchChild(__filename));
		const started = clock.now();
		const replies = await Promise.all(
			children.map((child, n) =>
				askChild(
					child,
					{
						baseUrl: emulator.baseUrl,
						apiKey: emulator.apiKey,
						organization: emulator.organization,
						requestsPerMinute: options.limitPerMinute,
						creates:
							Math.floor(options.creates / options.processes) +
							(n < options.creates % options.processes ? 1 : 0),
						concurrency: options.concurrency ?? 8,
						scale,
						origin,
					} satisfies WorkRequest,
					workReplySchema,
				),
			),
		);
		const management = emulator.requests.filter((request) => request.surface === 'management');
		const createTimes = management
			.filter((request) => request.method === 'POST' && request.status < 300)
			.map((request) => request.time);
		const finished = Math.max(started, ...createTimes);
		const minutes = (finished - started) / 60_000;
		const afterFirstMinute = createTimes.filter((time) => time >= started + 60_000).length;
		const errors = replies.flatMap((reply) => reply.errors);
		return {
			created: replies.reduce((sum, reply) => sum + reply.created, 0),
			failed: errors.length,
			errors,
			answered429: management.filter((request) => request.status === 429).length,
			requests: management.length,
			minutes,
			perMinute: createTimes.length / minutes,
			steadyPerMinute: minutes > 1 ? afterFirstMinute / (minutes - 1) : Number.NaN,
		};
	} finally {
		await Promise.all(children.map(stopChild));
		await emulator.close();
	}
}

const LIMIT = 240;

export const sharedLimit: Scenario = async ({ smoke }) => {
	const creates = smoke ? 300 : 1_200;
	// Smoke runs at 20x: the shape of the run in a few seconds.
	const timeScale = smoke ? 20 : 1;
	const figures: Figure[] = [];
	const checks: Array<{
		label: string;
		value: number;
		unit: string;
		op: '>=' | '<=' | '<';
		target: number;
	}> = [];
	const notes: string[] = [];
	// One run per row: each takes about five minutes of wall-clock time.
	const rounds = 1;
	for (const processes of [1, 2, 3]) {
		const samples: SharedLimitRun[] = [];
		for (let round = 0; round < rounds; round++)
			samples.push(await runSharedLimit({ processes, creates, limitPerMinute: LIMIT, timeScale }));
		const label = processes === 1 ? '1 process' : `${processes} processes`;
		figures.push(
			{
				name: `${label}: creates answered per minute`,
				unit: '/min',
				samples: samples.map((run) => run.perMinute),
				better: 'higher',
			},
			{
				name: `${label}: after the first minute, per minute`,
				unit: '/min',
				samples: samples.map((run) => run.steadyPerMinute),
				better: 'higher',
			},
			{
				name: `${label}: 429s answered`,
				unit: '% of requests',
				samples: samples.map((run) => (100 * run.answered429) / run.requests),
				better: 'lower',
			},
			{
				name: `${label}: failed creates`,
				unit: 'items',
				samples: samples.map((run) => run.failed),
				better: 'lower',
			},
		);
		const steady = median(samples.map((run) => run.steadyPerMinute));
		checks.push(
			{
				label: `${label}: after the first minute, share of the limit`,
				value: (100 * steady) / LIMIT,
				unit: '%',
				op: '>=',
				target: 90,
			},
			{
				label: `${label}: 429s`,
				value: median(samples.map((run) => (100 * run.answered429) / run.requests)),
				unit: '% of requests',
				op: '<',
				target: 2,
			},
			{
				label: `${label}: failed creates, all runs`,
				value: samples.reduce((sum, run) => sum + run.failed, 0),
				unit: 'items',
				op: '<=',
				target: 0,
			},
		);
		const errors = samples.flatMap((run) => run.errors);
		if (errors.length) notes.push(`${label}: first error: ${errors[0]}`);
	}
	return {
		title: 'Several processes sharing one rate limit',
		description: `${creates.toLocaleString('en-US')} job creates split between 1, 2 and 3 processes (each the shared client at the n8n node's default concurrency of 8, credential limit ${LIMIT}/min, like n8n workers in queue mode) against one emulator that limits the key to ${LIMIT} requests in any 60 s window and answers after ${LATENCY_MS} ms. Nothing is shared between the processes but the service's 429s. "Per minute" counts creates the emulator accepted from the first request to the last answer; the first minute holds a burst of a whole window (the service's limit is a sliding window, so an idle key starts with ${LIMIT} at once), so "after the first minute" is the steady rate to compare with the limit. ${rounds} run(s) per row.`,
		figures,
		comparisons: [],
		checks,
		notes: [
			...notes,
			"Each process starts believing it has the whole budget (the credential says 240): an eighth of it at once, the rest at four times its pace. The first 429 makes every call of the key in that process wait out Retry-After and lowers the process's rate to 85 %, paced evenly; t minutes without a 429 give back 0.03 x t x (1 + t) of the ceiling. Setting Requests per Minute to the limit divided by the number of workers avoids 429s entirely, at the price of idle budget when some workers are idle.",
		],
	};
};

if (process.argv.includes(CHILD_FLAG)) serveWork();
