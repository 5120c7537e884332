/**
 * The GPU Cloud Poll Trigger in a real n8n, across restarts: its workflow (Poll Trigger -> report
 * to the receiver) polls an emulator of its own. Activation polls at once (n8n does, and at every
 * start), so each restart is a poll; the minute schedule is checked once. Used by test/e2e (one n8n
 * process) and test/scale (queue mode: the main instance polls, workers run the executions).
 */
import { jobSchema, type Job } from '../../shared/schemas';
import type { RunningEmulator } from '../../emulator';
import type { Receiver } from './receiver';
import { chain, report, type WorkflowJson } from './workflows';

export const POLL_WORKFLOW_ID = 'e2ePollTrigger';
const POLL_CREDENTIAL = { id: 'e2ePollEmulator1', name: 'GPU Cloud (poll trigger emulator)' };
const REPORT_PATH = '/polled';
/** Jobs whose input holds `held: true` run this long: they end when the check cancels them. */
export const POLL_HELD_JOB_MS = 60 * 60_000;
/** A poll and the execution it starts take a few seconds; n8n's schedule adds up to a minute. */
const REPORT_TIMEOUT_MS = 60_000;
const SCHEDULED_TIMEOUT_MS = 150_000;
/** How long a restart is watched for reports that must not come. */
const QUIET_MS = 15_000;

export function pollCredential(emulator: RunningEmulator): unknown {
	return {
		...POLL_CREDENTIAL,
		type: 'gpuCloudApi',
		data: {
			apiKey: emulator.apiKey,
			baseUrl: emulator.baseUrl,
			organizationName: emulator.organization,
			defaultProject: emulator.project,
		},
	};
}

export function pollWorkflow(prefix: string, receiver: Receiver): WorkflowJson {
	return chain(POLL_WORKFLOW_ID, 'e2e: GPU Cloud Poll Trigger', [
		{
			name: 'GPU Cloud Poll Trigger',
			type: `${prefix}.gpuCloudPollTrigger`,
			credentials: { gpuCloudApi: POLL_CREDENTIAL },
			parameters: {
				pollTimes: { item: [{ mode: 'everyMinute' }] },
				endpoints: ['echo'],
				events: ['succeeded', 'failed', 'cancelled'],
			},
		},
		report(receiver.url(REPORT_PATH)),
	]);
}

export function holdsForPolling(input: unknown): boolean {
	return typeof input === 'object' && input !== null && 'held' in input && input.held === true;
}

export interface PollingContext {
	/** Activates the poll workflow (n8n polls at once). */
	activate: () => Promise<void>;
	/** Stops n8n (the instance that polls), runs `whileDown`, starts it again. */
	restart: (whileDown: () => Promise<void>) => Promise<void>;
	emulator: RunningEmulator;
	receiver: Receiver;
	check: (name: string, body: () => Promise<void>) => Promise<void>;
	expect: (condition: unknown, message: string) => void;
	log: (line: string) => void;
}

async function createJob(emulator: RunningEmulator, held: boolean): Promise<Job> {
	const reply = await fetch(
		`${emulator.baseUrl}/organizations/${emulator.organization}/inference-endpoints/echo/jobs`,
		{
			method: 'POST',
			headers: { 'content-type': 'application/json', 'service-api-key': emulator.apiKey },
			body: JSON.stringify({ input: { held } }),
		},
	);
	return jobSchema.parse(await reply.json());
}

async function cancelJob(emulator: RunningEmulator, job: Job): Promise<void> {
	await fetch(
		`${emulator.baseUrl}/organizations/${emulator.organization}/inference-endpoints/echo/jobs/${job.id}`,
		{ method: 'DELETE', headers: { 'service-api-key': emulator.apiKey } },
	);
}

async function ended(emulator: RunningEmulator, job: Job): Promise<void> {
	const deadline = Date.now() + 30_000;
	while (!['succeeded', 'failed', 'cancelled'].includes(emulator.getJob(job.id)?.status ?? '')) {
		if (Date.now() > deadline) throw new Error(`job ${job.id} did not end`);
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
}

/** Runs with n8n up and the poll workflow imported but not active; leaves it active and n8n up. */
export async function pollingChecks(ctx: PollingContext): Promise<void> {
	const { activate, restart, emulator, receiver, check, expect, log } = ctx;
	const reportedIds = () =>
		receiver.all(REPORT_PATH).map((entry) => {
			const body = entry.body as { item?: { id?: unknown } };
			return String(body.item?.id);
		});

	const before = await createJob(emulator, false);
	const slow = await createJob(emulator, true);
	await ended(emulator, before);
	// The first poll (at activation; n8n 2.41 may run it a moment after answering) learns what is under
	// way: a job that ended before it is not news, so the next job is created only once it has read.
	const listings = () =>
		emulator.requests.filter(
			(request) => request.method === 'GET' && request.path.endsWith('/echo/jobs'),
		).length;
	await activate();
	const firstPollBy = Date.now() + REPORT_TIMEOUT_MS;
	while (listings() === 0) {
		if (Date.now() > firstPollBy) throw new Error('the poll workflow did not poll on activation');
		await new Promise((resolve) => setTimeout(resolve, 200));
	}
	log('poll trigger: workflow activated and polled once (it learns the jobs under way)');
	const quick = await createJob(emulator, false);
	await ended(emulator, quick);

	await check(
		'the Poll Trigger emits jobs that ended while n8n was down, after a restart',
		async () => {
			let whileDown: Job | undefined;
			await restart(async () => {
				await cancelJob(emulator, slow);
				whileDown = await createJob(emulator, false);
				await ended(emulator, whileDown);
			});
			const expected = [quick.id, slow.id, whileDown?.id ?? ''];
			const reports = await receiver.waitForAll(REPORT_PATH, 3, () => true, REPORT_TIMEOUT_MS);
			const ids = reports.map((entry) => (entry.body as { item?: { id?: unknown } }).item?.id);
			expect(
				[...ids].sort().join() === [...expected].sort().join(),
				`reported ${JSON.stringify(ids)}, expected ${JSON.stringify(expected)} (not ${before.id}, which ended before activation)`,
			);
		},
	);

	await check('the Poll Trigger emits no job twice across another restart', async () => {
		const count = reportedIds().length;
		await restart(async () => undefined);
		await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
		expect(
			reportedIds().length === count,
			`after the restart ${reportedIds().length - count} more report(s): ${JSON.stringify(reportedIds().slice(count))}`,
		);
	});

	await check(
		'the Poll Trigger emits a job that ended while n8n runs, on its minute schedule',
		async () => {
			const count = reportedIds().length;
			const late = await createJob(emulator, false);
			await ended(emulator, late);
			await receiver.waitFor(
				REPORT_PATH,
				(body) => (body as { item?: { id?: unknown } }).item?.id === late.id,
				SCHEDULED_TIMEOUT_MS,
			);
			expect(
				reportedIds().length === count + 1,
				`expected one more report, got ${JSON.stringify(reportedIds().slice(count))}`,
			);
		},
	);
}
