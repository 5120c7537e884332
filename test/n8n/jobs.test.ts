import { signWebhook } from '../../shared';
import { byName, gpuCloudWorkflow, managementRequests, startRig, type Rig } from './fixtures';
import { errorOf, outputOf } from './harness';

/** Jobs whose input mentions "slow" run for a minute; the rest take 300 ms. */
const SLOW = 'slow';
/** Ends a little after the others: long enough to be still running when they are reported. */
const LATER = 'later';
let rig: Rig;

beforeAll(async () => {
	rig = await startRig({
		jobDurationMs: (_endpoint, input) =>
			JSON.stringify(input).includes(SLOW)
				? 60_000
				: JSON.stringify(input).includes(LATER)
					? 2_000
					: 300,
	});
});

afterAll(async () => {
	await rig.close();
});

afterEach(async () => {
	await rig.emulator.deliveriesSettled();
	expect(rig.harness.webhookErrors).toEqual([]);
	rig.emulator.resetLogs();
});

const summarize = (text: string) => JSON.stringify({ text });
/**
 * Fits the input_schema translate-text publishes (the node checks that before creating the job), but
 * the endpoint knows no such language, so the job fails.
 */
const UNKNOWN_LANGUAGE = JSON.stringify({ text: 'hello', target_language: 'Klingon' });

describe('Job operations', () => {
	test('creates a job and outputs it at once, pending', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow({
				resource: 'job',
				operation: 'create',
				endpoint: byName('summarize-text'),
				input: summarize('a b c'),
				options: { metadata: '{"ticket": 42}' },
			}),
		);
		expect(errorOf(execution)).toBeUndefined();
		const [item] = outputOf(execution, 'GPU Cloud');
		expect(item.json).toMatchObject({
			inference_endpoint_name: 'summarize-text',
			status: 'pending',
			input: { text: 'a b c' },
			metadata: { ticket: 42 },
		});
		expect(item.pairedItem).toEqual({ item: 0 });
	});

	test('gets, waits for and cancels jobs by id', async () => {
		const created = await rig.harness.run(
			gpuCloudWorkflow(
				{
					resource: 'job',
					operation: 'create',
					endpoint: byName('summarize-text'),
					input: '={{ JSON.stringify({ text: $json.text }) }}',
				},
				{ items: [{ text: 'quick one' }, { text: `${SLOW} one` }] },
			),
		);
		const [quick, slow] = outputOf(created, 'GPU Cloud').map((item) => String(item.json.id));

		const waited = await rig.harness.run(
			gpuCloudWorkflow({
				resource: 'job',
				operation: 'waitForCompletion',
				endpoint: byName('summarize-text'),
				jobId: quick,
				timeoutMinutes: 1,
			}),
		);
		expect(outputOf(waited, 'GPU Cloud')[0].json).toMatchObject({
			id: quick,
			status: 'succeeded',
			output: { summary: 'quick one' },
		});

		const cancelled = await rig.harness.run(
			gpuCloudWorkflow({
				resource: 'job',
				operation: 'cancel',
				endpoint: byName('summarize-text'),
				jobId: slow,
			}),
		);
		expect(outputOf(cancelled, 'GPU Cloud')[0].json).toEqual({
			id: slow,
			inference_endpoint_name: 'summarize-text',
			cancelRequested: true,
		});

		const read = await rig.harness.run(
			gpuCloudWorkflow({
				resource: 'job',
				operation: 'get',
				endpoint: byName('summarize-text'),
				jobId: slow,
			}),
		);
		expect(outputOf(read, 'GPU Cloud')[0].json).toMatchObject({ id: slow, status: 'cancelled' });
	});

	test('creates and waits by polling, one output per item in input order', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				{
					resource: 'job',
					operation: 'createAndWait',
					endpoint: { __rl: true, mode: 'list', value: 'summarize-text' },
					input: '={{ { "text": $json.text, "max_words": 2 } }}',
				},
				{
					items: [
						{ text: 'alpha beta gamma' },
						{ text: 'delta epsilon zeta' },
						{ text: 'eta theta iota' },
					],
				},
			),
		);
		expect(errorOf(execution)).toBeUndefined();
		const output = outputOf(execution, 'GPU Cloud');
		expect(output.map((item) => item.json.output)).toEqual([
			{ summary: 'alpha beta', word_count: 2 },
			{ summary: 'delta epsilon', word_count: 2 },
			{ summary: 'eta theta', word_count: 2 },
		]);
		expect(output.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
	});

	test('stops with an error naming the job when a job fails', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow({
				resource: 'job',
				operation: 'createAndWait',
				endpoint: byName('translate-text'),
				input: UNKNOWN_LANGUAGE,
			}),
		);
		expect(execution.status).toBe('error');
		expect(errorOf(execution)?.message).toMatch(
			/^Job [0-9a-f-]{36} on "translate-text" failed: Invalid input/,
		);
	});

	test('outputs a failed job with its status when asked to', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow({
				resource: 'job',
				operation: 'createAndWait',
				endpoint: byName('translate-text'),
				input: UNKNOWN_LANGUAGE,
				onJobFailure: 'output',
			}),
		);
		expect(errorOf(execution)).toBeUndefined();
		expect(outputOf(execution, 'GPU Cloud')[0].json).toMatchObject({
			status: 'failed',
			output: { error: expect.stringMatching(/Invalid input/) },
		});
	});

	test('with "Continue On Fail" a bad item becomes an error item in its place and the others still run', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				{
					resource: 'job',
					operation: 'create',
					endpoint: { __rl: true, mode: 'name', value: '={{ $json.endpoint }}' },
					input: summarize('x y'),
				},
				{
					items: [
						{ endpoint: 'summarize-text' },
						{ endpoint: 'Summarize_Text' },
						{ endpoint: 'sentiment' },
					],
					node: { onError: 'continueRegularOutput' },
				},
			),
		);
		const output = outputOf(execution, 'GPU Cloud');
		expect(output).toHaveLength(3);
		expect(output[0].json).toMatchObject({ inference_endpoint_name: 'summarize-text' });
		expect(output[1]).toEqual({
			json: {
				error: expect.stringMatching(
					/^Inference Endpoint "Summarize_Text" must be 2-63 lower-case/,
				),
			},
			pairedItem: { item: 1 },
		});
		expect(output[2].json).toMatchObject({ inference_endpoint_name: 'sentiment' });
		expect(
			managementRequests(rig.emulator).filter((request) => request.method === 'POST'),
		).toHaveLength(2);
	});
});

describe('Create and Wait in webhook mode', () => {
	const webhookJob = (input: string, extra: Record<string, unknown> = {}) =>
		gpuCloudWorkflow(
			{
				resource: 'job',
				operation: 'createAndWait',
				endpoint: byName('summarize-text'),
				input,
				waitMode: 'webhook',
				...extra,
			},
			{ items: [{ text: 'one two' }, { text: 'three four' }] },
		);

	test('pauses the execution without polling and resumes when GPU Cloud has reported every job', async () => {
		const execution = await rig.harness.run(webhookJob('={{ { "text": $json.text } }}'));
		expect(execution.status).toBe('waiting');

		const finished = await rig.harness.finished(execution.id);
		expect(errorOf(finished)).toBeUndefined();
		expect(finished.resumes).toBe(1);
		const output = outputOf(finished, 'GPU Cloud');
		expect(output.map((item) => [item.json.status, item.json.output, item.pairedItem])).toEqual([
			['succeeded', { summary: 'one two', word_count: 2 }, { item: 0 }],
			['succeeded', { summary: 'three four', word_count: 2 }, { item: 1 }],
		]);
		// Two creates, one look before pausing, then reports: no polling loop.
		const reads = managementRequests(rig.emulator).filter((request) => request.method === 'GET');
		expect(reads.length).toBeLessThanOrEqual(4);
		expect(
			rig.emulator.deliveries.every((delivery) => delivery.signed && delivery.status === 200),
		).toBe(true);
	});

	test('six jobs ending together resume the execution once, and GPU Cloud records no failed delivery', async () => {
		rig.emulator.resetLogs();
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				{
					resource: 'job',
					operation: 'createAndWait',
					endpoint: byName('summarize-text'),
					input: '={{ { "text": $json.text } }}',
					waitMode: 'webhook',
				},
				{ items: Array.from({ length: 6 }, (_, n) => ({ text: `${LATER} item ${n}` })) },
			),
		);
		expect(execution.status).toBe('waiting');
		const finished = await rig.harness.finished(execution.id);
		expect(errorOf(finished)).toBeUndefined();
		expect(finished.resumes).toBe(1);
		expect(
			outputOf(finished, 'GPU Cloud').map((item) => [
				item.json.status,
				item.json.output,
				item.pairedItem,
			]),
		).toEqual(
			Array.from({ length: 6 }, (_, n) => [
				'succeeded',
				{ summary: `${LATER} item ${n}`, word_count: 3 },
				{ item: n },
			]),
		);
		await rig.emulator.deliveriesSettled();
		expect(rig.emulator.deliveries.length).toBeGreaterThan(0);
		expect(rig.emulator.deliveries.filter((delivery) => delivery.status !== 200)).toEqual([]);
	});

	test('when the job carrying the resume URL ends first, the report is answered at once and the execution resumes when the others end', async () => {
		rig.emulator.resetLogs();
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				{
					resource: 'job',
					operation: 'createAndWait',
					endpoint: byName('summarize-text'),
					input: '={{ { "text": $json.text } }}',
					waitMode: 'webhook',
				},
				{ items: [{ text: `${LATER} first` }, { text: 'last and quick' }] },
			),
		);
		expect(execution.status).toBe('waiting');
		const finished = await rig.harness.finished(execution.id);
		expect(finished.resumes).toBe(1);
		expect(outputOf(finished, 'GPU Cloud').map((item) => item.json.status)).toEqual([
			'succeeded',
			'succeeded',
		]);
		await rig.emulator.deliveriesSettled();
		expect(rig.emulator.deliveries.map((delivery) => delivery.status)).toEqual([200]);
	});

	test('refuses a report with a forged signature and keeps waiting; the workflow goes on when the job is cancelled', async () => {
		const execution = await rig.harness.run(
			webhookJob(`={{ { "text": "${SLOW} " + $json.text } }}`),
		);
		expect(execution.status).toBe('waiting');
		const [first, second] = outputOf(execution, 'GPU Cloud').map((item) => String(item.json.id));

		const job = rig.emulator.getJob(first);
		const forged = signWebhook(
			Buffer.from('not the organization secret').toString('base64'),
			JSON.stringify({
				type: 'inference_endpoint.job.succeeded',
				timestamp: new Date().toISOString(),
				data: { ...job, status: 'succeeded', output: { summary: 'forged' } },
			}),
			{ timestampSeconds: Date.now() / 1000 },
		);
		const response = await fetch(`${rig.harness.baseUrl}/webhook-waiting/${execution.id}`, {
			method: 'POST',
			headers: { 'content-type': 'application/json', ...forged.headers },
			body: forged.body,
		});
		expect(response.status).toBe(401);
		expect(rig.harness.executions.get(execution.id)?.status).toBe('waiting');

		for (const id of [first, second]) {
			await rig.harness.run(
				gpuCloudWorkflow({
					resource: 'job',
					operation: 'cancel',
					endpoint: byName('summarize-text'),
					jobId: id,
				}),
			);
		}
		const finished = await rig.harness.finished(execution.id);
		expect(outputOf(finished, 'GPU Cloud').map((item) => [item.json.id, item.json.status])).toEqual(
			[
				[first, 'cancelled'],
				[second, 'cancelled'],
			],
		);
	});

	test('when GPU Cloud does not report back before the timeout, the workflow goes on with the jobs marked as timed out', async () => {
		const execution = await rig.harness.run(
			webhookJob(`={{ { "text": "${SLOW} " + $json.text } }}`, { timeoutMinutes: 0.02 }),
		);
		expect(execution.status).toBe('waiting');
		const finished = await rig.harness.finished(execution.id);
		expect(finished.resumes).toBe(1);
		const output = outputOf(finished, 'GPU Cloud');
		expect(output.map((item) => item.json)).toEqual([
			expect.objectContaining({
				status: 'pending',
				waitTimedOut: true,
				inference_endpoint_name: 'summarize-text',
			}),
			expect.objectContaining({
				status: 'pending',
				waitTimedOut: true,
				inference_endpoint_name: 'summarize-text',
			}),
		]);
		expect(output[0].json.message).toMatch(/had not reported the end of this job/);
	});
});
