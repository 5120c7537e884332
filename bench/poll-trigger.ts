/**
 * Scenario 11: what one poll of the GPU Cloud Poll Trigger costs, counted at the emulator: requests
 * per poll when nothing changed, when 10,000 jobs were created and ended since the last poll, when
 * one old job is still under way beneath them, and when 10,000 jobs are under way at once. The node
 * runs through n8n's own engine (the test harness: PollContext, static data saved as n8n saves it).
 */
import { startEmulator, type RunningEmulator } from '../emulator';
import { ManagementClient } from '../shared/client';
import { mapWithConcurrency } from '../shared/concurrency';
import { systemClock, UndiciTransport } from '../shared/runtime';
import type { Job } from '../shared/schemas';
import { loadN8nHarness } from './bulk-n8n';
import { median, type Figure, type Scenario } from './lib';

const NODE = 'GPU Cloud Poll Trigger';
const HELD = 24 * 3600_000;

/** Through the shared client: its retries ride out a loaded machine's dropped connections without creating twice. */
async function createJobs(client: ManagementClient, count: number, held: boolean): Promise<Job[]> {
	const created = await mapWithConcurrency(
		Array.from({ length: count }, (_, index) => index),
		50,
		() => client.jobs.create('echo', { input: { held } }),
	);
	return created.map((result) => {
		if (!result.ok) throw result.error;
		return result.value;
	});
}

async function allEnded(emulator: RunningEmulator, jobs: Job[]): Promise<void> {
	const done = (job: Job) =>
		['succeeded', 'failed', 'cancelled'].includes(emulator.getJob(job.id)?.status ?? '');
	while (!jobs.every(done)) await new Promise((resolve) => setTimeout(resolve, 50));
}

interface RunFigures {
	quiet: number;
	burstRequests: number;
	burstEmitted: number;
	burstMs: number;
	oldOpenQuiet: number;
	manyOpenQuiet: number;
	manyOpenStateKb: number;
	catalogueQuiet: number;
	endpoints: number;
}

async function oneRun(jobs: number): Promise<RunFigures> {
	const { Harness, POLL_TRIGGER_TYPE, outputOf } = loadN8nHarness();
	const emulator = await startEmulator({
		rateLimitPerMinute: 0,
		jobDurationMs: (_endpoint, input) =>
			typeof input === 'object' && input !== null && 'held' in input && input.held ? HELD : 20,
	});
	const transport = new UndiciTransport();
	const client = new ManagementClient({
		baseUrl: emulator.baseUrl,
		organization: emulator.organization,
		apiKey: emulator.apiKey,
		transport,
		clock: systemClock,
		rateLimit: false,
	});
	const staticData = new Map<string, string>();
	const harness = await Harness.start({ staticData });
	harness.setCredentials('management', 'gpuCloudApi', {
		apiKey: emulator.apiKey,
		baseUrl: emulator.baseUrl,
		organizationName: emulator.organization,
	});
	const spec = (id: string, endpoints: string[]) => ({
		id,
		nodes: [
			{
				name: NODE,
				type: POLL_TRIGGER_TYPE,
				parameters: { endpoints, events: ['succeeded', 'failed', 'cancelled'] },
				credentials: { gpuCloudApi: 'management' },
			},
		],
		connections: [],
	});
	const requestsOf = async <T>(poll: () => Promise<T>) => {
		emulator.resetLogs();
		const started = performance.now();
		const result = await poll();
		return { requests: emulator.requests.length, ms: performance.now() - started, result };
	};
	try {
		const echo = spec('echo-only', ['echo']);
		await createJobs(client, 1, true);
		await harness.activatePolling(echo, NODE);
		const quiet = await requestsOf(() => harness.poll(echo, NODE));

		const burst = await createJobs(client, jobs, false);
		await allEnded(emulator, burst);
		const burstPoll = await requestsOf(() => harness.poll(echo, NODE));
		const burstEmitted = burstPoll.result ? outputOf(burstPoll.result, NODE).length : 0;
		const oldOpen = await requestsOf(() => harness.poll(echo, NODE));

		// As many jobs under way at once: each is followed until it ends.
		const held = await createJobs(client, jobs, true);
		await harness.poll(echo, NODE);
		const manyOpen = await requestsOf(() => harness.poll(echo, NODE));
		harness.stopPolling(echo, NODE);
		// The static data n8n would save now, read from a poll that emits: one held job ends.
		await client.jobs.cancel('echo', held[0].id);
		await harness.activatePolling(echo, NODE);
		const stateKb = Buffer.byteLength(staticData.get('echo-only') ?? '') / 1024;
		harness.stopPolling(echo, NODE);

		const all = spec('catalogue', []);
		await harness.activatePolling(all, NODE);
		const catalogueQuiet = await requestsOf(() => harness.poll(all, NODE));
		harness.stopPolling(all, NODE);

		return {
			quiet: quiet.requests,
			burstRequests: burstPoll.requests,
			burstEmitted,
			burstMs: burstPoll.ms,
			oldOpenQuiet: oldOpen.requests,
			manyOpenQuiet: manyOpen.requests,
			manyOpenStateKb: stateKb,
			catalogueQuiet: catalogueQuiet.requests,
			endpoints: emulator.endpoints.length,
		};
	} finally {
		await transport.close();
		await harness.close();
		await emulator.close();
	}
}

export const pollTrigger: Scenario = async ({ smoke, runs }) => {
	const jobs = smoke ? 300 : 10_000;
	const results: RunFigures[] = [];
	for (let run = 0; run < (smoke ? 1 : runs); run++) results.push(await oneRun(jobs));
	const figure = (name: string, unit: string, pick: (r: RunFigures) => number): Figure => ({
		name,
		unit,
		samples: results.map(pick),
		better: 'lower',
	});
	const pages = Math.ceil(jobs / 100);
	return {
		title: '11. Poll trigger: requests per poll',
		description: `The GPU Cloud Poll Trigger through n8n's engine (PollContext) against the emulator, one endpoint unless stated; requests counted at the emulator. ${jobs.toLocaleString('en-US')} jobs are created and ended between two polls; one job created before them is still under way; then ${jobs.toLocaleString('en-US')} jobs are under way at once.`,
		figures: [
			figure('requests, nothing changed', 'requests', (r) => r.quiet),
			figure(
				`requests, ${jobs.toLocaleString('en-US')} jobs ended since the last poll`,
				'requests',
				(r) => r.burstRequests,
			),
			figure(`jobs emitted by that poll`, 'jobs', (r) => r.burstEmitted),
			figure('time of that poll', 'ms', (r) => r.burstMs),
			figure(
				'requests, nothing changed, one old job under way beneath them',
				'requests',
				(r) => r.oldOpenQuiet,
			),
			figure(
				`requests, nothing changed, ${jobs.toLocaleString('en-US')} jobs under way`,
				'requests',
				(r) => r.manyOpenQuiet,
			),
			figure(
				`static data with ${jobs.toLocaleString('en-US')} jobs under way`,
				'KiB',
				(r) => r.manyOpenStateKb,
			),
			figure(
				`requests, nothing changed, every endpoint of the catalogue (${results[0]?.endpoints ?? 0}): 1 catalogue page, 1 page per endpoint, plus the other pages holding the jobs under way it follows (from its first poll: those among each endpoint's newest 1,000)`,
				'requests',
				(r) => r.catalogueQuiet,
			),
		],
		comparisons: [],
		checks: [
			{
				label: 'requests per poll when nothing changed',
				value: median(results.map((r) => r.quiet)),
				unit: 'requests',
				op: '<=',
				target: 1,
			},
			{
				label: `requests per poll after ${jobs} jobs ended`,
				value: median(results.map((r) => r.burstRequests)),
				unit: 'requests',
				op: '<=',
				target: pages + 1,
			},
			{
				label: 'jobs emitted by that poll',
				value: median(results.map((r) => r.burstEmitted)),
				unit: 'jobs',
				op: '>=',
				target: jobs,
			},
			{
				label: 'requests with one old job under way',
				value: median(results.map((r) => r.oldOpenQuiet)),
				unit: 'requests',
				op: '<=',
				target: 2,
			},
		],
		notes: [
			"Bound per endpoint and poll: ceil((jobs created since the last poll + 1) / 100) pages, plus one page for each page holding an older job still under way (read directly: its place counted from the oldest job fixes its page), plus a read by id for one the listing moved; catalogue mode adds ceil(endpoints / 100). At the service's 240 requests a minute, the 10,000-job poll takes about 25 s of the rate limit.",
		],
	};
};
