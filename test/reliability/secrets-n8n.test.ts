import type { INodeParameters } from 'n8n-workflow';
import { signWebhook } from '../../shared';
import { byName, gpuCloudWorkflow, startRig, triggerNode, type Rig } from '../n8n/fixtures';
import { errorOf, outputOf, type Execution, type WorkflowSpec } from '../n8n/harness';
import { send } from './raw-http';
import {
	API_KEY,
	WEBHOOK_SECRET,
	WRONG_API_KEY,
	captureOutput,
	leaks,
	secretForms,
} from './secrets';

/**
 * A representative run of the n8n nodes, failures included (a key the service refuses, 5xx until the
 * retries run out, forged webhooks), with distinctive secrets. Everything that comes out of it (node
 * output and errors as stored in each execution, webhook replies, credential-test and list-search
 * messages, every console line and stdout/stderr write) must not contain the API keys or the webhook
 * secret in any encoding.
 */

let rig: Rig;

beforeAll(async () => {
	rig = await startRig({
		apiKey: API_KEY,
		webhookSecret: WEBHOOK_SECRET,
		workloadAuth: true,
		jobDurationMs: 300,
		webhookRetryDelaysMs: [100, 200],
	});
	const base = {
		baseUrl: rig.emulator.baseUrl,
		organizationName: rig.emulator.organization,
		defaultProject: rig.emulator.project,
	};
	rig.harness.setCredentials('wrong-key', 'gpuCloudApi', { ...base, apiKey: WRONG_API_KEY });
	rig.harness.setCredentials('images-wrong-key', 'gpuCloudWorkloadApi', {
		serviceUrl: rig.emulator.imageUrl,
		apiKey: WRONG_API_KEY,
	});
	rig.harness.setCredentials('chat-with-key', 'gpuCloudWorkloadApi', {
		serviceUrl: rig.emulator.chatUrl,
		apiKey: API_KEY,
	});
});

afterAll(async () => {
	await rig.close();
});

function withCredential(spec: WorkflowSpec, type: string, id: string): WorkflowSpec {
	spec.nodes[1].credentials = { [type]: id };
	return spec;
}

test('no API key or webhook secret appears in any output, error, reply or log line', async () => {
	const capture = captureOutput();
	const texts: string[] = [];
	const executions: Execution[] = [];
	const run = async (spec: WorkflowSpec) => {
		const execution = await rig.harness.run(spec);
		executions.push(
			execution.status === 'waiting' ? await rig.harness.finished(execution.id) : execution,
		);
		return executions[executions.length - 1];
	};
	const job = (parameters: INodeParameters) =>
		gpuCloudWorkflow({
			resource: 'job',
			endpoint: byName('summarize-text'),
			input: '{"text": "secrets stay secret"}',
			...parameters,
		});
	try {
		// Successes: poll and webhook-mode waits (the node reads the webhook secret), images, chat.
		const polled = await run(job({ operation: 'createAndWait' }));
		expect(outputOf(polled, 'GPU Cloud')[0].json).toMatchObject({ status: 'succeeded' });
		const resumed = await run(job({ operation: 'createAndWait', waitMode: 'webhook' }));
		expect(resumed.resumes).toBe(1);
		const images = await run(
			gpuCloudWorkflow(
				{ resource: 'image', operation: 'generate', prompt: 'a lighthouse' },
				{ credential: 'images' },
			),
		);
		expect(errorOf(images)).toBeUndefined();
		const chat = await run(
			withCredential(
				gpuCloudWorkflow(
					{ resource: 'chat', operation: 'message', prompt: 'hello' },
					{ credential: 'chat' },
				),
				'gpuCloudWorkloadApi',
				'chat-with-key',
			),
		);
		expect(errorOf(chat)).toBeUndefined();

		// A key the service refuses: management, workload, and a workload with no key at all.
		const refused = await run(
			withCredential(job({ operation: 'create' }), 'gpuCloudApi', 'wrong-key'),
		);
		expect(errorOf(refused)?.message).toMatch(/HTTP 401/);
		const refusedImages = await run(
			withCredential(
				gpuCloudWorkflow(
					{ resource: 'image', operation: 'generate', prompt: 'a fox' },
					{ credential: 'images' },
				),
				'gpuCloudWorkloadApi',
				'images-wrong-key',
			),
		);
		expect(errorOf(refusedImages)?.message).toMatch(/401/);
		const keyless = await run(
			gpuCloudWorkflow(
				{ resource: 'chat', operation: 'message', prompt: 'hello' },
				{ credential: 'chat' },
			),
		);
		expect(errorOf(keyless)?.message).toMatch(/401/);
		const tested = await rig.harness.testCredentials('gpuCloudApi', {
			baseUrl: rig.emulator.baseUrl,
			organizationName: rig.emulator.organization,
			apiKey: WRONG_API_KEY,
		});
		expect(tested.status).toBe('Error');
		texts.push(JSON.stringify(tested));
		const listed = await rig.harness
			.listSearch(
				withCredential(job({ operation: 'create' }), 'gpuCloudApi', 'wrong-key'),
				'GPU Cloud',
				'searchEndpoints',
			)
			.then(
				(result) => JSON.stringify(result),
				(error: unknown) =>
					error instanceof Error
						? `${error.message}\n${JSON.stringify(error)}\n${error.stack}`
						: String(error),
			);
		expect(listed).toMatch(/401/);
		texts.push(listed);

		// 5xx until the retries run out, as an error and as an error item ("Continue On Fail").
		rig.emulator.setFaults({ errorRate: 1, surfaces: ['management'] });
		const broken = await run(
			gpuCloudWorkflow(
				{ resource: 'inferenceEndpoint', operation: 'getAll', returnAll: true },
				{ node: { onError: 'continueRegularOutput' } },
			),
		);
		rig.emulator.setFaults({ errorRate: 0 });
		expect(outputOf(broken, 'GPU Cloud')[0].json.error).toMatch(/5\d\d/);

		// Webhooks refused: forged, stale and unsigned reports to a trigger and to a paused execution.
		const trigger: WorkflowSpec = {
			id: 'secrets-trigger',
			nodes: [triggerNode()],
			connections: [],
		};
		rig.harness.activate(trigger);
		const path = new URL(rig.harness.webhookUrl(trigger, 'GPU Cloud Trigger')).pathname;
		const report = JSON.stringify({
			type: 'inference_endpoint.job.succeeded',
			timestamp: new Date().toISOString(),
			data: rig.emulator.getJob(String(outputOf(polled, 'GPU Cloud')[0].json.id)),
		});
		const forger = Buffer.from('not the secret').toString('base64');
		const now = Date.now() / 1000;
		for (const headers of [
			{},
			signWebhook(forger, report, { timestampSeconds: now }).headers,
			signWebhook(WEBHOOK_SECRET, report, { timestampSeconds: now - 600 }).headers,
			signWebhook(WEBHOOK_SECRET, report, { timestampSeconds: now }).headers,
		]) {
			for (const target of [path, `/webhook-waiting/${resumed.id}`]) {
				const reply = await send(rig.harness.baseUrl, {
					path: target,
					headers: { 'content-type': 'application/json', ...headers },
					body: report,
				});
				texts.push(`${reply.status} ${reply.body}`);
			}
		}
		await rig.harness.until(() =>
			[...rig.harness.executions.values()].find(
				(execution) => execution.workflowId === trigger.id && execution.status === 'success',
			),
		);
		executions.push(
			...[...rig.harness.executions.values()].filter(
				(execution) => execution.workflowId === trigger.id,
			),
		);
		await rig.emulator.deliveriesSettled();
	} finally {
		capture.stop();
	}

	texts.push(
		...executions.flatMap((execution) => [
			JSON.stringify(execution.run),
			JSON.stringify(errorOf(execution) ?? {}),
		]),
		...capture.lines,
		...rig.harness.webhookErrors.map(String),
	);
	// What the node sent the service (bodies) belongs to the run too: no secret travels in a body.
	texts.push(...rig.emulator.requests.map((request) => request.body ?? ''));
	// The capture holds the failures it is meant to check.
	const corpus = texts.join('\n');
	for (const expected of [
		'401',
		'did not accept the API key',
		'succeeded',
		'The webhook signature does not match',
		'too old',
	])
		expect(corpus).toContain(expected);
	expect(
		leaks(
			texts,
			secretForms({ 'API key': API_KEY, 'wrong API key': WRONG_API_KEY }, WEBHOOK_SECRET),
		),
	).toEqual([]);
});
