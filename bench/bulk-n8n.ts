/**
 * Scenario 2: many input items into the GPU Cloud node's Create Job, through n8n's own engine (the
 * test harness: WorkflowExecute, n8n's HTTP helper and credential authentication). n8n runs in its
 * own process, as it would in production; the emulator runs in this one, answers every management
 * request after a fixed delay standing in for the round trip to the service, and enforces its
 * sliding-window rate limit. The node's credential is set to the same limit.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import Module from 'node:module';
import { z } from 'zod/v4';
import { startEmulator } from '../emulator';
import { median, type Figure, type Scenario, type ScenarioResult } from './lib';

type HarnessModule = typeof import('../test/n8n/harness');

/**
 * Loads the n8n test harness under tsx. tsx resolves an extensionless require in Node's order
 * (.js, .json, .node, then .ts), so `nodes/GpuCloud/GpuCloud.node` would load the node's codex
 * file GpuCloud.node.json instead of the class: .json goes last while the harness loads.
 */
export function loadN8nHarness(): HarnessModule {
	const extensions = (Module as unknown as { _extensions: Record<string, unknown> })._extensions;
	const original = Object.entries(extensions);
	const reorder = (entries: Array<[string, unknown]>) => {
		for (const [extension] of entries) delete extensions[extension];
		for (const [extension, handler] of entries) extensions[extension] = handler;
	};
	reorder([
		...original.filter(([extension]) => extension !== '.json'),
		...original.filter(([extension]) => extension === '.json'),
	]);
	try {
		// eslint-disable-next-line @typescript-eslint/no-require-imports -- must run after the reordering above
		return require('../test/n8n/harness') as HarnessModule;
	} finally {
		reorder(original);
	}
}

/**
 * The child's next message, or `onExit` if it exits first; the listeners of the one that did not
 * happen are removed (a sender asked thousands of times would otherwise collect thousands).
 */
async function nextMessage(child: ChildProcess, onExit: unknown): Promise<unknown> {
	const settled = new AbortController();
	try {
		const [message] = (await Promise.race([
			once(child, 'message', { signal: settled.signal }),
			once(child, 'exit', { signal: settled.signal }).then(() => [onExit]),
		])) as unknown[];
		return message;
	} finally {
		settled.abort();
	}
}

/**
 * Starts `file` (a bench module) in a child Node process with tsx, talking over IPC. The child's
 * stdout is dropped (n8n prints a line about its encryption key); its stderr is kept.
 */
export async function forkBenchChild(file: string, execArgv: string[] = []): Promise<ChildProcess> {
	const child = fork(file, [CHILD_FLAG], {
		execArgv: ['--import', 'tsx', ...execArgv],
		stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
	});
	const message = await nextMessage(child, undefined);
	if (message !== 'ready') throw new Error(`The bench child ${file} did not start`);
	return child;
}

/** Sends one request to a bench child and resolves with its reply, parsed. */
export async function askChild<T>(
	child: ChildProcess,
	request: unknown,
	schema: z.ZodType<T>,
): Promise<T> {
	child.send(request as object);
	const message = await nextMessage(child, { error: 'the bench child exited' });
	const failed = z.object({ error: z.string() }).safeParse(message);
	if (failed.success) throw new Error(failed.data.error);
	return schema.parse(message);
}

export async function stopChild(child: ChildProcess): Promise<void> {
	if (child.exitCode !== null) return;
	const exited = once(child, 'exit');
	child.disconnect();
	await exited;
}

/** The argument that makes a bench module run as a child. */
export const CHILD_FLAG = '--bench-child';

/** Stands in for the network round trip plus the service's own time to accept a job. */
const LATENCY_MS = 100;
const WINDOW_MS = 60_000;
const ENDPOINT = 'echo';

const runRequestSchema = z.object({
	items: z.number().int().min(1),
	concurrency: z.number().int().min(1),
	credential: z.object({
		apiKey: z.string(),
		baseUrl: z.string(),
		organizationName: z.string(),
		requestsPerMinute: z.number().int(),
	}),
});
type RunRequest = z.infer<typeof runRequestSchema>;

const runReplySchema = z.object({
	seconds: z.number(),
	created: z.number().int(),
	/** The error message of every item the node output as failed. */
	errors: z.array(z.string()),
});

/** The child: one harness for its life, one workflow execution per request. */
async function serveRuns(): Promise<void> {
	const n8n = loadN8nHarness();
	const harness = await n8n.Harness.start();
	let count = 0;
	process.on('message', (message) => {
		void (async () => {
			try {
				const request = runRequestSchema.parse(message);
				const id = `bulk-${++count}`;
				harness.setCredentials(id, 'gpuCloudApi', request.credential);
				const started = process.hrtime.bigint();
				const execution = await harness.run(
					n8n.itemsIntoGpuCloud(
						id,
						Array.from({ length: request.items }, (_, index) => ({ index })),
						{
							parameters: {
								resource: 'job',
								operation: 'create',
								endpoint: { __rl: true, mode: 'name', value: ENDPOINT },
								input: '={{ { "n": $json.index } }}',
								options: { concurrency: request.concurrency },
							},
							credentials: { gpuCloudApi: id },
							// Every failed item is counted instead of the first one stopping the run.
							onError: 'continueRegularOutput',
						},
					),
				);
				const seconds = Number(process.hrtime.bigint() - started) / 1e9;
				if (execution.status !== 'success')
					throw new Error(`The bulk workflow ended as ${execution.status}`);
				const output = n8n.outputOf(execution, 'GPU Cloud');
				process.send?.({
					seconds,
					created: output.filter((item) => typeof item.json.id === 'string').length,
					errors: output.flatMap((item) =>
						item.json.error === undefined ? [] : [String(item.json.error)],
					),
				} satisfies z.infer<typeof runReplySchema>);
			} catch (error) {
				process.send?.({ error: error instanceof Error ? error.message : String(error) });
			}
		})();
	});
	process.once('disconnect', () => void harness.close().finally(() => process.exit(0)));
	process.send?.('ready');
}

interface BulkRun {
	itemsPerSecond: number;
	/** Items the node output as errors. */
	failed: number;
	/** Failed items whose error is the service's rate limit: what the user would see. */
	surfaced429: number;
	/** 429 answers the emulator sent; the client waited and retried them. */
	answered429: number;
	/** When each accepted create was answered, in order. */
	createTimes: number[];
}

async function runBulk(
	child: ChildProcess,
	options: Omit<RunRequest, 'credential'> & { limitPerMinute: number },
): Promise<BulkRun> {
	const emulator = await startEmulator({
		rateLimitPerMinute: options.limitPerMinute,
		// Nothing finishes during the run: only the creates are measured.
		jobDurationMs: 600_000,
		faults: { latencyMs: LATENCY_MS, surfaces: ['management'] },
	});
	try {
		// A new emulator port is a new base URL, so each run has its own client-side budget too.
		const reply = await askChild(
			child,
			{
				items: options.items,
				concurrency: options.concurrency,
				credential: {
					apiKey: emulator.apiKey,
					baseUrl: emulator.baseUrl,
					organizationName: emulator.organization,
					requestsPerMinute: options.limitPerMinute,
				},
			} satisfies RunRequest,
			runReplySchema,
		);
		if (reply.created + reply.errors.length !== options.items)
			throw new Error(
				`${options.items} items went in, ${reply.created + reply.errors.length} came out`,
			);
		const creates = emulator.requests.filter(
			(request) => request.surface === 'management' && request.method === 'POST',
		);
		return {
			itemsPerSecond: options.items / reply.seconds,
			failed: reply.errors.length,
			surfaced429: reply.errors.filter((error) => /rate limit|429/i.test(error)).length,
			answered429: emulator.requests.filter((request) => request.status === 429).length,
			createTimes: creates.filter((request) => request.status < 300).map((request) => request.time),
		};
	} finally {
		await emulator.close();
	}
}

/** The most creates answered in any 60 s window. */
function busiestWindow(times: number[]): number {
	let best = 0;
	let start = 0;
	for (let end = 0; end < times.length; end++) {
		while (times[end] - times[start] >= WINDOW_MS) start++;
		best = Math.max(best, end - start + 1);
	}
	return best;
}

/**
 * How long after the window allowed it each create past the limit was answered: create k+limit
 * may follow create k by 60 s and no sooner. Near zero means the budget is used as soon as it frees.
 */
function waitsBeyondWindow(times: number[], limit: number): number[] {
	return times.slice(limit).map((time, k) => time - times[k] - WINDOW_MS);
}

export const bulkN8n: Scenario = async ({ smoke, runs }) => {
	const items = smoke ? 40 : 1_000;
	const sequentialItems = smoke ? 5 : 100;
	const fast = 16;
	const limit = 6_000;
	const pacedLimit = 600;
	const samples = {
		fast: [] as number[],
		defaults: [] as number[],
		one: [] as number[],
		limit: [] as number[],
	};
	const totals = { failed: 0, surfaced429: 0, answered429: 0 };
	let paced: BulkRun | undefined;
	const child = await forkBenchChild(__filename);
	try {
		for (let run = 0; run < runs; run++) {
			for (const [key, concurrency, count] of [
				['fast', fast, items],
				['defaults', 8, items],
				['one', 1, sequentialItems],
			] as const) {
				const result = await runBulk(child, { items: count, concurrency, limitPerMinute: limit });
				samples[key].push(result.itemsPerSecond);
				totals.failed += result.failed;
				totals.surfaced429 += result.surfaced429;
				totals.answered429 += result.answered429;
			}
			samples.limit.push(limit / 60);
		}
		// Over a minute long, so once per bench (and not in smoke runs): a limit the run really hits.
		if (!smoke)
			paced = await runBulk(child, { items, concurrency: fast, limitPerMinute: pacedLimit });
	} finally {
		await stopChild(child);
	}

	const figures: Figure[] = [
		{ name: `concurrency ${fast}`, unit: 'items/s', samples: samples.fast, better: 'higher' },
		{
			name: 'concurrency 8 (default)',
			unit: 'items/s',
			samples: samples.defaults,
			better: 'higher',
		},
		{ name: 'concurrency 1', unit: 'items/s', samples: samples.one, better: 'higher' },
		{ name: 'rate limit', unit: 'items/s', samples: samples.limit, better: 'higher' },
	];
	const checks: ScenarioResult['checks'] = [
		{ label: 'failed items, all runs', value: totals.failed, unit: 'items', op: '<=', target: 0 },
		{
			label: '429s surfaced to the user, all runs',
			value: totals.surfaced429,
			unit: 'items',
			op: '<=',
			target: 0,
		},
	];
	const notes = [
		`With ${items.toLocaleString('en-US')} items under ${limit.toLocaleString('en-US')}/min the sliding window never fills: these runs measure how fast the node can go, and the ratio to the limit says whether it can use the whole budget. At the default concurrency of 8, with the 100 ms round trip, the node can send at most 80 requests/s (8 / 0.1 s), below this 100/s limit but 20x the service's default 240/min; the Concurrency option's help says so, and 16 reaches the limit. 429s the service answered (absorbed by the client): ${totals.answered429}.`,
	];
	if (paced) {
		const window = (100 * busiestWindow(paced.createTimes)) / pacedLimit;
		const waits = waitsBeyondWindow(paced.createTimes, pacedLimit);
		figures.push(
			{
				name: `limit ${pacedLimit}/min: creates in the busiest 60 s window`,
				unit: '% of the limit',
				samples: [window],
				better: 'higher',
			},
			{
				name: `limit ${pacedLimit}/min: answered after the window allowed, median`,
				unit: 'ms',
				samples: [waits.length ? median(waits) : 0],
				better: 'lower',
			},
			{
				name: `limit ${pacedLimit}/min: wall time`,
				unit: 's',
				samples: [items / paced.itemsPerSecond],
				better: 'lower',
			},
		);
		checks.push(
			{
				label: `limit ${pacedLimit}/min: busiest 60 s window`,
				value: window,
				unit: '%',
				op: '>=',
				target: 90,
			},
			{
				label: `limit ${pacedLimit}/min: failed items`,
				value: paced.failed,
				unit: 'items',
				op: '<=',
				target: 0,
			},
			{
				label: `limit ${pacedLimit}/min: 429s surfaced to the user`,
				value: paced.surfaced429,
				unit: 'items',
				op: '<=',
				target: 0,
			},
		);
		notes.push(
			`Paced run (once per bench): ${items.toLocaleString('en-US')} items at concurrency ${fast} under ${pacedLimit}/min on both sides. The sliding window lets the first ${pacedLimit} go at once and each later create 60 s after an earlier one; "answered after the window allowed" is how much later than that each later create was answered, which includes the node's own pace (${fast} in flight) as well as the limiter's. 429s the service answered (absorbed by the client): ${paced.answered429}.`,
		);
	}
	return {
		title: '2. Bulk jobs through n8n',
		description:
			`${items.toLocaleString('en-US')} input items into Create Job through the real n8n engine in its own process (concurrency 1: ${sequentialItems} items), ` +
			`the emulator answering each management request after ${LATENCY_MS} ms (a stand-in for the round trip to the service) and limiting to ${limit.toLocaleString('en-US')} requests/min, the node's credential set to the same. ` +
			`Items/s is items over the workflow's wall time in n8n (engine included). "Continue On Fail" is on so that every failed item is counted rather than stopping the run.`,
		figures,
		comparisons: [
			{ subject: `concurrency ${fast}`, baseline: 'rate limit', target: { op: '>=', value: 0.9 } },
			{
				subject: `concurrency ${fast}`,
				baseline: 'concurrency 1',
				target: { op: '>=', value: 10 },
			},
			{ subject: 'concurrency 8 (default)', baseline: 'rate limit' },
		],
		checks,
		notes,
	};
};

if (require.main === module && process.argv.includes(CHILD_FLAG)) void serveRuns();
