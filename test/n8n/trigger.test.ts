import { randomUUID } from 'node:crypto';
import type { INodeParameters } from 'n8n-workflow';
import { signWebhook, type Job } from '../../shared';
import { eventually } from '../support/eventually';
import { byName, gpuCloudWorkflow, startRig, triggerNode, type Rig } from './fixtures';
import {
	NODE_TYPE,
	outputOf,
	type Execution,
	type Harness,
	type WorkflowSpec,
	processedDataCollisions,
} from './harness';

let rig: Rig;

beforeAll(async () => {
	rig = await startRig();
});

afterAll(async () => {
	await rig.close();
});

afterEach(async () => {
	await rig.emulator.deliveriesSettled();
	expect(rig.harness.webhookErrors).toEqual([]);
});

let triggers = 0;

/** An active workflow made of one GPU Cloud Trigger; returns it with its production URL. */
function activeTrigger(parameters: INodeParameters = {}): { spec: WorkflowSpec; url: string } {
	const id = `trigger-workflow-${++triggers}`;
	const spec: WorkflowSpec = {
		id,
		nodes: [triggerNode(parameters)],
		connections: [],
	};
	rig.harness.activate(spec);
	return { spec, url: rig.harness.webhookUrl(spec, 'GPU Cloud Trigger') };
}

/**
 * Another n8n process with the workflow active: its own copy of every module (so nothing in memory
 * is shared, n8n-core included), the same database.
 */
async function anotherProcess(spec: WorkflowSpec): Promise<Harness> {
	let other: typeof import('./harness') | undefined;
	jest.isolateModules(() => {
		// eslint-disable-next-line @typescript-eslint/no-require-imports -- a second, isolated copy of the modules
		other = require('./harness') as typeof import('./harness');
	});
	if (!other) throw new Error('the harness did not load');
	const harness = await other.Harness.start({
		staticData: rig.staticData,
		processedData: rig.processedData,
	});
	harness.setCredentials('management', 'gpuCloudApi', {
		apiKey: rig.emulator.apiKey,
		baseUrl: rig.emulator.baseUrl,
		organizationName: rig.emulator.organization,
	});
	harness.activate(spec);
	return harness;
}

function executionsOf(spec: WorkflowSpec): Execution[] {
	return [...rig.harness.executions.values()].filter(
		(execution) => execution.workflowId === spec.id,
	);
}

/** A finished job of the emulator, to build deliveries from. */
async function finishedJob(): Promise<Job> {
	const created = await rig.harness.run(
		gpuCloudWorkflow({
			resource: 'job',
			operation: 'createAndWait',
			endpoint: byName('sentiment'),
			input: '{"text": "great service"}',
		}),
	);
	const id = String(outputOf(created, 'GPU Cloud')[0].json.id);
	const job = rig.emulator.getJob(id);
	if (!job) throw new Error('the job is missing');
	return job;
}

function delivery(
	job: Job,
	options: { secret?: string; id?: string; timestampSeconds?: number; type?: string } = {},
) {
	const body = JSON.stringify({
		type: options.type ?? 'inference_endpoint.job.succeeded',
		timestamp: new Date().toISOString(),
		data: job,
	});
	return signWebhook(options.secret ?? rig.emulator.webhookSecret, body, {
		id: options.id,
		timestampSeconds: options.timestampSeconds ?? Date.now() / 1000,
	});
}

async function post(url: string, signed: { headers: Record<string, string>; body: string }) {
	const response = await fetch(url, {
		method: 'POST',
		headers: { 'content-type': 'application/json', ...signed.headers },
		body: signed.body,
	});
	return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('GPU Cloud Trigger', () => {
	test('starts the workflow with the ended job as one flat item when GPU Cloud reports it', async () => {
		const { spec, url } = activeTrigger();
		const created = await rig.harness.run(
			gpuCloudWorkflow({
				resource: 'job',
				operation: 'create',
				endpoint: byName('summarize-text'),
				input: '{"text": "reported by webhook"}',
				options: { webhookUrl: url, metadata: '{"order": 7}' },
			}),
		);
		const jobId = outputOf(created, 'GPU Cloud')[0].json.id;

		const started = await rig.harness.until(() =>
			executionsOf(spec).find((execution) => execution.status === 'success'),
		);
		expect(outputOf(started, 'GPU Cloud Trigger').map((item) => item.json)).toEqual([
			expect.objectContaining({
				event: 'inference_endpoint.job.succeeded',
				id: jobId,
				status: 'succeeded',
				endpoint: 'summarize-text',
				output: { summary: 'reported by webhook', word_count: 3 },
				metadata: expect.objectContaining({ order: 7 }),
				createTime: expect.any(String),
				startTime: expect.any(String),
				endTime: expect.any(String),
				runSeconds: expect.any(Number),
				webhookId: expect.stringMatching(/^msg_/),
			}),
		]);
	});

	test('refuses a tampered body with 401 and starts nothing', async () => {
		const { spec, url } = activeTrigger();
		const signed = delivery(await finishedJob());
		const response = await post(url, {
			headers: signed.headers,
			body: signed.body.replace('succeeded', 'failed'),
		});
		expect(response).toEqual({
			status: 401,
			body: { error: 'The webhook signature does not match.' },
		});
		expect(executionsOf(spec)).toHaveLength(0);
	});

	test('refuses a delivery signed more than 5 minutes ago and one with no signature', async () => {
		const { spec, url } = activeTrigger();
		const job = await finishedJob();
		const stale = await post(url, delivery(job, { timestampSeconds: Date.now() / 1000 - 10 * 60 }));
		expect(stale.status).toBe(401);
		expect(stale.body.error).toMatch(/too old/);
		const unsigned = await post(url, { headers: {}, body: delivery(job).body });
		expect(unsigned.status).toBe(401);
		expect(executionsOf(spec)).toHaveLength(0);
	});

	test('starts the workflow once for a delivery that arrives twice', async () => {
		const { spec, url } = activeTrigger();
		const signed = delivery(await finishedJob(), { id: `msg_${randomUUID()}` });
		expect((await post(url, signed)).status).toBe(200);
		const again = await post(url, signed);
		expect(again).toEqual({ status: 200, body: { received: true, duplicate: true } });
		await rig.harness.until(() =>
			executionsOf(spec).find((execution) => execution.status === 'success'),
		);
		expect(executionsOf(spec)).toHaveLength(1);
	});

	test('starts the workflow once for a delivery repeated to another n8n process, or after a restart', async () => {
		const { spec, url } = activeTrigger();
		const signed = delivery(await finishedJob(), { id: `msg_${randomUUID()}` });
		expect((await post(url, signed)).status).toBe(200);
		await rig.harness.until(() =>
			executionsOf(spec).find((execution) => execution.status === 'success'),
		);

		const processTwo = await anotherProcess(spec);
		try {
			const again = await post(processTwo.webhookUrl(spec, 'GPU Cloud Trigger'), signed);
			expect(again).toEqual({ status: 200, body: { received: true, duplicate: true } });
			expect(processTwo.executions.size).toBe(0);
			expect(processTwo.webhookErrors).toEqual([]);
		} finally {
			await processTwo.close();
		}
		expect(executionsOf(spec)).toHaveLength(1);
	});

	test('runs what follows the trigger once when a concurrent save of another process lost the id from the workflow', async () => {
		const spec: WorkflowSpec = {
			id: `trigger-workflow-${++triggers}`,
			nodes: [
				triggerNode(),
				{
					name: 'Read Job',
					type: NODE_TYPE,
					parameters: {
						resource: 'job',
						operation: 'get',
						endpoint: byName('={{ $json.endpoint }}'),
						jobId: '={{ $json.id }}',
					},
					credentials: { gpuCloudApi: 'management' },
				},
			],
			connections: [['GPU Cloud Trigger', 'Read Job']],
		};
		rig.harness.activate(spec);
		const signed = delivery(await finishedJob(), { id: `msg_${randomUUID()}` });
		const savedBefore = rig.staticData.get(spec.id);
		expect((await post(rig.harness.webhookUrl(spec, 'GPU Cloud Trigger'), signed)).status).toBe(
			200,
		);
		const first = await rig.harness.until(() =>
			executionsOf(spec).find((execution) => execution.status === 'success'),
		);
		expect(outputOf(first, 'Read Job')).toHaveLength(1);

		// n8n saves static data whole after each request: a request another process read the workflow
		// for before this delivery, and saved after it, puts back the record without its id.
		if (savedBefore === undefined) rig.staticData.delete(spec.id);
		else rig.staticData.set(spec.id, savedBefore);
		const processTwo = await anotherProcess(spec);
		try {
			expect((await post(processTwo.webhookUrl(spec, 'GPU Cloud Trigger'), signed)).status).toBe(
				200,
			);
			const second = await processTwo.until(() =>
				[...processTwo.executions.values()].find((execution) => execution.status === 'success'),
			);
			expect(outputOf(second, 'GPU Cloud Trigger')).toEqual([]);
			expect(second.run?.data.resultData.runData['Read Job']).toBeUndefined();
			expect(processTwo.webhookErrors).toEqual([]);
		} finally {
			await processTwo.close();
		}
	});

	test("records each delivery in n8n's processed data even when executions write it at the same time", async () => {
		const { spec } = activeTrigger();
		const started = (webhookId: string) =>
			rig.harness.run(spec, { mode: 'webhook', items: [{ json: { webhookId } }] });
		const passed = (execution: Execution) => outputOf(execution, 'GPU Cloud Trigger').length;
		const collided = processedDataCollisions(rig.processedData);
		const before = { ...collided };
		// The first two executions both create the node's row; the next two read the same row and
		// write it back, each without the other's id.
		expect((await Promise.all([started('msg_1'), started('msg_2')])).map(passed)).toEqual([1, 1]);
		expect((await Promise.all([started('msg_3'), started('msg_4')])).map(passed)).toEqual([1, 1]);
		// The executions really overlapped: the row's creation conflicted and a write-back overwrote.
		expect(collided.keyConflicts).toBeGreaterThan(before.keyConflicts);
		expect(collided.overwrites).toBeGreaterThan(before.overwrites);
		const repeats = await Promise.all(['msg_1', 'msg_2', 'msg_3', 'msg_4'].map(started));
		expect(repeats.map(passed)).toEqual([0, 0, 0, 0]);
		expect(repeats.map((execution) => execution.status)).toEqual([
			'success',
			'success',
			'success',
			'success',
		]);
		// Executions the editor starts are not recorded.
		expect(
			passed(
				await rig.harness.run(spec, { mode: 'manual', items: [{ json: { webhookId: 'msg_1' } }] }),
			),
		).toBe(1);
	});

	test('ignores events and endpoints it was not asked for', async () => {
		const { spec, url } = activeTrigger({
			events: ['failed', 'cancelled'],
			options: { endpoints: 'transcribe, sentiment' },
		});
		const job = await finishedJob();
		const succeeded = await post(url, delivery(job));
		expect(succeeded.body).toMatchObject({
			received: true,
			ignored: expect.stringMatching(/not selected/),
		});
		const failed = await post(
			url,
			delivery({ ...job, status: 'failed' }, { type: 'inference_endpoint.job.failed' }),
		);
		expect(failed.status).toBe(200);
		const otherEndpoint = await post(
			url,
			delivery(
				{ ...job, status: 'failed', inference_endpoint_name: 'summarize-text' },
				{ type: 'inference_endpoint.job.failed' },
			),
		);
		expect(otherEndpoint.body).toMatchObject({
			ignored: 'endpoint summarize-text is not selected',
		});
		const started = await rig.harness.until(() =>
			executionsOf(spec).find((execution) => execution.status === 'success'),
		);
		expect(outputOf(started, 'GPU Cloud Trigger')[0].json).toMatchObject({
			status: 'failed',
			endpoint: 'sentiment',
		});
		expect(executionsOf(spec)).toHaveLength(1);
	});

	test('checks signatures with a pasted secret, or accepts anything only when checking is turned off', async () => {
		const job = await finishedJob();
		const pasted = activeTrigger({
			verification: 'secret',
			webhookSecret: `whsec_${rig.emulator.webhookSecret}`,
		});
		expect((await post(pasted.url, delivery(job))).status).toBe(200);
		expect(
			(
				await post(
					pasted.url,
					delivery(job, { secret: Buffer.from('someone else').toString('base64') }),
				)
			).status,
		).toBe(401);

		const open = activeTrigger({ verification: 'off' });
		expect((await post(open.url, { headers: {}, body: delivery(job).body })).status).toBe(200);
		await eventually(
			'one execution of each workflow',
			() => executionsOf(pasted.spec).length === 1 && executionsOf(open.spec).length === 1,
		);
	});
});
