/**
 * The GPU Cloud Poll Trigger, for an n8n the service cannot reach: polls run through n8n-core's
 * PollContext as n8n's ActiveWorkflows runs them (the workflow kept between polls, static data saved
 * when a poll emits and at activation), against the emulator's job listings. Each job that ended is
 * emitted once, across polls and restarts, and each poll sends a bounded number of requests.
 */
import type { INodeParameters } from 'n8n-workflow';
import type { Job } from '../../shared/schemas';
import { managementRequests, startRig, type Rig } from './fixtures';
import { errorOf, outputOf, POLL_TRIGGER_TYPE, type Execution, type WorkflowSpec } from './harness';
import { cancelJobAt, createJobAt, createJobsAt } from './job-seed';

const NODE = 'GPU Cloud Poll Trigger';
/** Jobs run for `input.ms` (10 minutes unless given), so a test decides when each one ends. */
const LONG = 10 * 60_000;

let rig: Rig;
let workflowCount = 0;

beforeAll(async () => {
	rig = await startRig({
		rateLimitPerMinute: false,
		jobDurationMs: (_endpoint, input) =>
			typeof input === 'object' && input !== null && 'ms' in input && typeof input.ms === 'number'
				? input.ms
				: LONG,
	});
});
afterAll(async () => {
	await rig.close();
});
beforeEach(() => rig.emulator.resetLogs());

function pollWorkflow(parameters: INodeParameters): WorkflowSpec {
	return {
		id: `poll-workflow-${++workflowCount}`,
		nodes: [
			{
				name: NODE,
				type: POLL_TRIGGER_TYPE,
				parameters: { events: ['succeeded', 'failed', 'cancelled'], ...parameters },
				credentials: { gpuCloudApi: 'management' },
			},
		],
		connections: [],
	};
}

const emitted = (execution: Execution | undefined) =>
	execution ? outputOf(execution, NODE).map((item) => item.json.id) : [];

async function ended(job: Job): Promise<void> {
	while (!['succeeded', 'failed', 'cancelled'].includes(rig.emulator.getJob(job.id)?.status ?? ''))
		await new Promise((resolve) => setTimeout(resolve, 20));
}

const queries = () => managementRequests(rig.emulator).map((request) => request.query ?? '');

describe('GPU Cloud Poll Trigger', () => {
	test('emits each job that ended since the last poll, once', async () => {
		const spec = pollWorkflow({ endpoints: ['echo'] });
		const [before] = await createJobsAt(rig.emulator, 'echo', 1);
		await cancelJobAt(rig.emulator, before);
		// Activation learns what is under way; jobs that ended before it are not news.
		expect(await rig.harness.activatePolling(spec, NODE)).toBeUndefined();

		const slow = await createJobAt(rig.emulator, 'echo', { ms: LONG });
		const quick = await createJobAt(rig.emulator, 'echo', { ms: 100 });
		await ended(quick);
		const first = await rig.harness.poll(spec, NODE);
		expect(errorOf(first!)).toBeUndefined();
		expect(emitted(first)).toEqual([quick.id]);
		expect(outputOf(first!, NODE)[0].json).toMatchObject({
			event: 'inference_endpoint.job.succeeded',
			status: 'succeeded',
			endpoint: 'echo',
			createTime: quick.create_time,
		});
		expect(await rig.harness.poll(spec, NODE)).toBeUndefined();

		// Created long before, ended now: found although it is older than the newest job seen.
		await cancelJobAt(rig.emulator, slow);
		expect(emitted(await rig.harness.poll(spec, NODE))).toEqual([slow.id]);
		expect(await rig.harness.poll(spec, NODE)).toBeUndefined();
		rig.harness.stopPolling(spec, NODE);
	});

	test('after a restart, emits the jobs that ended while n8n was down and none twice', async () => {
		const spec = pollWorkflow({ endpoints: ['summarize-text'] });
		// This endpoint's jobs take no `ms`: they run 10 minutes unless cancelled.
		const input = { text: 'x' };
		const a = await createJobAt(rig.emulator, 'summarize-text', input);
		await rig.harness.activatePolling(spec, NODE);
		const b = await createJobAt(rig.emulator, 'summarize-text', input);
		await cancelJobAt(rig.emulator, a);
		expect(emitted(await rig.harness.poll(spec, NODE))).toEqual([a.id]);
		// A poll that emits nothing is not saved: the restart resumes from the emission above.
		const c = await createJobAt(rig.emulator, 'summarize-text', input);
		expect(await rig.harness.poll(spec, NODE)).toBeUndefined();

		rig.harness.stopPolling(spec, NODE);
		await cancelJobAt(rig.emulator, b);
		await cancelJobAt(rig.emulator, c);
		const d = await createJobAt(rig.emulator, 'summarize-text', input);
		await cancelJobAt(rig.emulator, d);

		// The restarted n8n polls at activation, from the static data saved before the restart.
		const afterRestart = await rig.harness.activatePolling(spec, NODE);
		expect(emitted(afterRestart).sort()).toEqual([b.id, c.id, d.id].sort());
		expect(await rig.harness.poll(spec, NODE)).toBeUndefined();
		rig.harness.stopPolling(spec, NODE);
		await rig.harness.activatePolling(spec, NODE);
		expect(await rig.harness.poll(spec, NODE)).toBeUndefined();
		rig.harness.stopPolling(spec, NODE);
	});

	test('watches every endpoint of the catalogue when none is chosen, and only the chosen events', async () => {
		const spec = pollWorkflow({ events: ['cancelled'] });
		await rig.harness.activatePolling(spec, NODE);
		const onEcho = await createJobAt(rig.emulator, 'echo', { ms: LONG });
		const onBatch = await createJobAt(rig.emulator, 'batch-echo', { ms: LONG });
		const succeeds = await createJobAt(rig.emulator, 'echo', { ms: 50 });
		await ended(succeeds);
		await cancelJobAt(rig.emulator, onEcho);
		await cancelJobAt(rig.emulator, onBatch);
		expect(emitted(await rig.harness.poll(spec, NODE)).sort()).toEqual(
			[onEcho.id, onBatch.id].sort(),
		);

		rig.emulator.resetLogs();
		expect(await rig.harness.poll(spec, NODE)).toBeUndefined();
		// Nothing changed: one catalogue page, then one page of each endpoint.
		const endpoints = rig.emulator.endpoints.length;
		expect(managementRequests(rig.emulator)).toHaveLength(1 + endpoints);
		rig.harness.stopPolling(spec, NODE);
	});

	test('reads one page per poll when nothing changed, and only the pages that can hold news', async () => {
		const spec = pollWorkflow({ endpoints: ['translate-text'] });
		const input = () => ({ text: 'x', target_language: 'German' });
		const old = await createJobAt(rig.emulator, 'translate-text', input());
		await rig.harness.activatePolling(spec, NODE);

		rig.emulator.resetLogs();
		expect(await rig.harness.poll(spec, NODE)).toBeUndefined();
		expect(queries()).toEqual(['page=1&page_size=100']);

		// 250 jobs created and ended between two polls: the old unfinished job is now 251st.
		const burst = await createJobsAt(rig.emulator, 'translate-text', 250, input);
		for (const job of burst) await cancelJobAt(rig.emulator, job);
		rig.emulator.resetLogs();
		const execution = await rig.harness.poll(spec, NODE);
		expect(emitted(execution)).toHaveLength(250);
		expect(new Set(emitted(execution))).toEqual(new Set(burst.map((job) => job.id)));
		expect(queries()).toEqual([
			'page=1&page_size=100',
			'page=2&page_size=100',
			'page=3&page_size=100',
		]);

		// Nothing new: page 1, and page 3 where the old unfinished job is, not page 2.
		rig.emulator.resetLogs();
		expect(await rig.harness.poll(spec, NODE)).toBeUndefined();
		expect(queries()).toEqual(['page=1&page_size=100', 'page=3&page_size=100']);

		await cancelJobAt(rig.emulator, old);
		expect(emitted(await rig.harness.poll(spec, NODE))).toEqual([old.id]);
		rig.emulator.resetLogs();
		expect(await rig.harness.poll(spec, NODE)).toBeUndefined();
		expect(queries()).toEqual(['page=1&page_size=100']);
		rig.harness.stopPolling(spec, NODE);
	});

	test('"Fetch Test Event" returns the latest ended job and leaves the cursor alone', async () => {
		const spec = pollWorkflow({ endpoints: ['echo', 'batch-echo'], events: ['succeeded'] });
		const earlier = await createJobAt(rig.emulator, 'batch-echo', { ms: 50 });
		await ended(earlier);
		const latest = await createJobAt(rig.emulator, 'echo', { ms: 50 });
		await ended(latest);
		await createJobAt(rig.emulator, 'echo', { ms: LONG });
		const execution = await rig.harness.run(spec, { mode: 'manual' });
		expect(errorOf(execution)).toBeUndefined();
		expect(outputOf(execution, NODE).map((item) => item.json.id)).toEqual([latest.id]);
		expect(rig.staticData.get(spec.id)).toBeUndefined();
	});

	test('"Fetch Test Event" says so when no job has ended as chosen', async () => {
		const spec = pollWorkflow({ endpoints: ['batch-echo'], events: ['failed'] });
		const execution = await rig.harness.run(spec, { mode: 'manual' });
		expect(execution.status).toBe('error');
		expect(errorOf(execution)?.message).toMatch(/No job of batch-echo has ended as chosen/);
	});
});
