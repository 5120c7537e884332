import { byName, gpuCloudWorkflow, managementRequests, startRig, type Rig } from '../n8n/fixtures';
import { errorOf, outputOf } from '../n8n/harness';

/**
 * An n8n execution parked in webhook-resume mode whose callback never arrives: every delivery the
 * service attempts fails (webhookFailureRate 1), so only the deadline can resume it. n8n resumes a
 * paused node at its deadline without running it again: the node's input (the list of jobs it left)
 * passes through. What the workflow then receives is checked here.
 */

let rig: Rig;

beforeAll(async () => {
	rig = await startRig({
		jobDurationMs: 300,
		webhookRetryDelaysMs: [100, 200],
		faults: { webhookFailureRate: 1 },
	});
});

afterAll(async () => {
	await rig.close();
});

afterEach(() => {
	expect(rig.harness.webhookErrors).toEqual([]);
});

/** Create and Wait in webhook mode, two items, a deadline of 1.8 s. */
const parkedWorkflow = () =>
	gpuCloudWorkflow(
		{
			resource: 'job',
			operation: 'createAndWait',
			endpoint: byName('summarize-text'),
			input: '={{ { "text": $json.text } }}',
			waitMode: 'webhook',
			timeoutMinutes: 0.03,
		},
		{ items: [{ text: 'alpha beta' }, { text: 'gamma delta' }] },
	);

describe('webhook-mode wait whose report never arrives', () => {
	test('the deadline resumes the execution once and the workflow goes on with each job marked as timed out', async () => {
		const execution = await rig.harness.run(parkedWorkflow());
		expect(execution.status).toBe('waiting');
		const ids = outputOf(execution, 'GPU Cloud').map((item) => String(item.json.id));
		const jobReads = () =>
			managementRequests(rig.emulator).filter(
				(request) => request.method === 'GET' && ids.some((id) => request.path.endsWith(id)),
			).length;
		const readsWhenPaused = jobReads();

		const finished = await rig.harness.finished(execution.id);
		await rig.emulator.deliveriesSettled();
		expect(errorOf(finished)).toBeUndefined();
		expect(finished.resumes).toBe(1);
		// Every report was attempted and failed; the jobs themselves had succeeded long before the deadline.
		// Only the last job created carries the resume URL: one report, tried three times.
		const attempts = rig.emulator.deliveries.filter(
			(delivery) => delivery.jobId && ids.includes(delivery.jobId),
		);
		expect(attempts.map((delivery) => delivery.jobId)).toEqual([ids[1], ids[1], ids[1]]);
		expect(
			attempts.every((delivery) => !delivery.ok && delivery.error === 'injected webhook failure'),
		).toBe(true);
		expect(ids.map((id) => rig.emulator.getJob(id)?.status)).toEqual(['succeeded', 'succeeded']);

		const output = outputOf(finished, 'GPU Cloud');
		expect(output.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }]);
		expect(output.map((item) => item.json)).toEqual(
			ids.map((id) => ({
				id,
				inference_endpoint_name: 'summarize-text',
				// What the node saw when it paused, not the job's final state: the node does not run at the deadline.
				status: 'pending',
				waitDeadline: expect.any(String),
				waitTimedOut: true,
				message: expect.stringMatching(
					/had not reported the end of this job by .+ It may still finish: read it with the "Get" operation\./,
				),
			})),
		);
		// No request is made at the deadline: the result is not fetched.
		expect(jobReads()).toBe(readsWhenPaused);
	});

	// Known gap, reported: "the deadline fallback still delivers the result" does not hold. n8n passes
	// the paused node's input on at the deadline without running the node, so the succeeded jobs come
	// out as `status: "pending"` without their output. Flip to `test` when the node delivers results.
	test.failing("the deadline fallback delivers each job's final result", async () => {
		const execution = await rig.harness.run(parkedWorkflow());
		const finished = await rig.harness.finished(execution.id);
		expect(
			outputOf(finished, 'GPU Cloud').map((item) => [item.json.status, item.json.output]),
		).toEqual([
			['succeeded', { summary: 'alpha beta', word_count: 2 }],
			['succeeded', { summary: 'gamma delta', word_count: 2 }],
		]);
	});

	test('a Job > Get after the timed-out items recovers every result (the workaround the message points to)', async () => {
		const spec = parkedWorkflow();
		spec.nodes.push({
			name: 'Get',
			type: spec.nodes[1].type,
			parameters: {
				resource: 'job',
				operation: 'get',
				endpoint: byName('={{ $json.inference_endpoint_name }}'),
				jobId: '={{ $json.id }}',
			},
			credentials: { gpuCloudApi: 'management' },
		});
		spec.connections.push(['GPU Cloud', 'Get']);
		const execution = await rig.harness.run(spec);
		const finished = await rig.harness.finished(execution.id);
		expect(errorOf(finished)).toBeUndefined();
		expect(outputOf(finished, 'Get').map((item) => [item.json.status, item.json.output])).toEqual([
			['succeeded', { summary: 'alpha beta', word_count: 2 }],
			['succeeded', { summary: 'gamma delta', word_count: 2 }],
		]);
	});
});
