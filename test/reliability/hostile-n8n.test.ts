import { randomUUID } from 'node:crypto';
import { signWebhook, type Job } from '../../shared';
import { byName, gpuCloudWorkflow, startRig, triggerNode, type Rig } from '../n8n/fixtures';
import { outputOf, type WorkflowSpec } from '../n8n/harness';
import { send, type RawRequest } from './raw-http';

/**
 * Crafted requests against the GPU Cloud Trigger's production webhook (the harness's
 * POST /webhook/<webhookId>/job-events, as n8n serves it) and against a paused execution's resume
 * URL. Each is refused with the right status, starts or resumes nothing, sends nothing to GPU Cloud,
 * and a genuine delivery still works afterwards.
 */

let rig: Rig;
let trigger: WorkflowSpec;
let path: string;
let job: Job;

const MB = 1024 * 1024;
const now = () => Date.now() / 1000;

function report(data: unknown, type = 'inference_endpoint.job.succeeded'): string {
	return JSON.stringify({ type, timestamp: new Date().toISOString(), data });
}

function signed(
	body: string,
	options: { secret?: string; id?: string; timestampSeconds?: number } = {},
): Record<string, string> {
	return {
		...signWebhook(options.secret ?? rig.emulator.webhookSecret, body, {
			id: options.id,
			timestampSeconds: options.timestampSeconds ?? now(),
		}).headers,
	};
}

const JSON_TYPE = { 'content-type': 'application/json' };
const OTHER_SECRET = Buffer.from('an attacker guessing the secret').toString('base64');

function executionsOf(spec: WorkflowSpec) {
	return [...rig.harness.executions.values()].filter(
		(execution) => execution.workflowId === spec.id,
	);
}

beforeAll(async () => {
	// Jobs whose input mentions "slow" run for a minute (to keep an execution paused); the rest 200 ms.
	rig = await startRig({
		jobDurationMs: (_endpoint, input) => (JSON.stringify(input).includes('slow') ? 60_000 : 200),
	});
	trigger = {
		id: 'hostile-trigger',
		nodes: [triggerNode()],
		connections: [],
	};
	rig.harness.activate(trigger);
	path = new URL(rig.harness.webhookUrl(trigger, 'GPU Cloud Trigger')).pathname;
	const created = await rig.harness.run(
		gpuCloudWorkflow({
			resource: 'job',
			operation: 'createAndWait',
			endpoint: byName('sentiment'),
			input: '{"text": "fine"}',
		}),
	);
	const found = rig.emulator.getJob(String(outputOf(created, 'GPU Cloud')[0].json.id));
	if (!found) throw new Error('the job is missing');
	job = found;
});

afterAll(async () => {
	await rig.close();
});

describe('the trigger webhook', () => {
	const genuine = () => report(job);
	/** Sent first and repeated by the replay cases below; it also puts the organization's secret in memory. */
	const first = { id: `msg_${randomUUID()}`, body: '', headers: {} as Record<string, string> };

	beforeAll(async () => {
		first.body = genuine();
		first.headers = signed(first.body, { id: first.id });
		const reply = await send(rig.harness.baseUrl, {
			path,
			headers: { ...JSON_TYPE, ...first.headers },
			body: first.body,
		});
		expect(reply.status).toBe(200);
		await rig.harness.until(() =>
			executionsOf(trigger).find((execution) => execution.status === 'success'),
		);
		rig.emulator.resetLogs();
	});

	/** The genuine report, correctly signed, then some of its signature headers replaced. */
	const genuineWith =
		(
			replaced:
				| Record<string, string>
				| ((headers: Record<string, string>) => Record<string, string>),
		) =>
		(): RawRequest => {
			const body = genuine();
			const headers = signed(body);
			const replacing = typeof replaced === 'function' ? replaced(headers) : replaced;
			return { path, headers: { ...JSON_TYPE, ...headers, ...replacing }, body };
		};

	const cases: Array<[string, number, RegExp | undefined, () => RawRequest]> = [
		[
			'no signature headers at all',
			401,
			/lacks the webhook-id/,
			() => ({ path, headers: JSON_TYPE, body: genuine() }),
		],
		[
			'webhook-id missing',
			401,
			/lacks/,
			() => {
				const { 'webhook-id': _, ...rest } = signed(genuine());
				return { path, headers: { ...JSON_TYPE, ...rest }, body: genuine() };
			},
		],
		[
			'webhook-timestamp missing',
			401,
			/lacks/,
			() => {
				const body = genuine();
				const { 'webhook-timestamp': _, ...rest } = signed(body);
				return { path, headers: { ...JSON_TYPE, ...rest }, body };
			},
		],
		[
			'webhook-signature missing',
			401,
			/lacks/,
			() => {
				const body = genuine();
				const { 'webhook-signature': _, ...rest } = signed(body);
				return { path, headers: { ...JSON_TYPE, ...rest }, body };
			},
		],
		['an empty webhook-signature', 401, /lacks/, genuineWith({ 'webhook-signature': '' })],
		[
			'signature "v1," with no value',
			401,
			/does not match/,
			genuineWith({ 'webhook-signature': 'v1,' }),
		],
		[
			'a valid signature under version v2',
			401,
			/does not match/,
			genuineWith((headers) => ({
				'webhook-signature': headers['webhook-signature'].replace('v1,', 'v2,'),
			})),
		],
		[
			'a signature that is not base64',
			401,
			/does not match/,
			genuineWith({ 'webhook-signature': 'v1,!!not*base64!!' }),
		],
		[
			'signed with another secret',
			401,
			/does not match/,
			() => {
				const body = genuine();
				return { path, headers: { ...JSON_TYPE, ...signed(body, { secret: OTHER_SECRET }) }, body };
			},
		],
		[
			'the signature of another body',
			401,
			/does not match/,
			() => ({
				path,
				headers: { ...JSON_TYPE, ...signed(report({ ...job, output: { label: 'other' } })) },
				body: genuine(),
			}),
		],
		[
			'the body changed after signing (output rewritten)',
			401,
			/does not match/,
			() => {
				const body = genuine();
				return {
					path,
					headers: { ...JSON_TYPE, ...signed(body) },
					body: body.replace('"succeeded"', '"failed"'),
				};
			},
		],
		[
			'a trailing newline added after signing',
			401,
			/does not match/,
			() => {
				const body = genuine();
				return { path, headers: { ...JSON_TYPE, ...signed(body) }, body: `${body}\n` };
			},
		],
		[
			'the webhook-id swapped after signing',
			401,
			/does not match/,
			genuineWith(() => ({ 'webhook-id': `msg_${randomUUID()}` })),
		],
		[
			'the timestamp moved one second after signing',
			401,
			/does not match/,
			genuineWith((headers) => ({
				'webhook-timestamp': String(Number(headers['webhook-timestamp']) + 1),
			})),
		],
		[
			'stale: signed 10 minutes ago',
			401,
			/too old/,
			() => {
				const body = genuine();
				return {
					path,
					headers: { ...JSON_TYPE, ...signed(body, { timestampSeconds: now() - 600 }) },
					body,
				};
			},
		],
		[
			'future: signed 10 minutes ahead',
			401,
			/in the future/,
			() => {
				const body = genuine();
				return {
					path,
					headers: { ...JSON_TYPE, ...signed(body, { timestampSeconds: now() + 600 }) },
					body,
				};
			},
		],
		[
			'a timestamp in milliseconds',
			401,
			/not a Unix time/,
			genuineWith(() => ({ 'webhook-timestamp': String(Date.now()) })),
		],
		[
			'a timestamp that is not a number',
			401,
			/not a Unix time/,
			genuineWith({ 'webhook-timestamp': 'yesterday' }),
		],
		['a negative timestamp', 401, /not a Unix time/, genuineWith({ 'webhook-timestamp': '-1' })],
		[
			'several signatures, none valid',
			401,
			/does not match/,
			() => {
				const body = genuine();
				const wrong = signed(body, { secret: OTHER_SECRET })['webhook-signature'];
				return {
					path,
					headers: {
						...JSON_TYPE,
						...signed(body),
						'webhook-signature': `${wrong} v1,AAAA v2,${wrong.slice(3)}`,
					},
					body,
				};
			},
		],
		[
			'Slack-style signature headers instead',
			401,
			/lacks/,
			() => ({
				path,
				headers: {
					...JSON_TYPE,
					'x-slack-signature': 'v0=00',
					'x-slack-request-timestamp': String(Math.floor(now())),
				},
				body: genuine(),
			}),
		],
		[
			'10 MB body, unsigned',
			401,
			/lacks/,
			() => ({ path, headers: JSON_TYPE, body: JSON.stringify({ pad: 'x'.repeat(10 * MB) }) }),
		],
		[
			'10 MB body, signed with another secret',
			401,
			/does not match/,
			() => {
				const body = JSON.stringify({ pad: 'x'.repeat(10 * MB) });
				return { path, headers: { ...JSON_TYPE, ...signed(body, { secret: OTHER_SECRET }) }, body };
			},
		],
		[
			'invalid JSON, unsigned',
			401,
			/lacks/,
			() => ({
				path,
				headers: { 'content-type': 'text/plain' },
				body: '{"type": "inference_endpoint.job.succeeded", ',
			}),
		],
		// Signed with the real secret, so only GPU Cloud itself could send it; 400 would fit better than 401 (reported).
		[
			'invalid JSON, correctly signed',
			400,
			/not valid JSON/,
			() => {
				const body = '{"type": ';
				return { path, headers: { 'content-type': 'text/plain', ...signed(body) }, body };
			},
		],
		[
			'JSON that is not a job report, correctly signed',
			400,
			/webhook payload/,
			() => {
				const body = '{"hello": "world"}';
				return { path, headers: { ...JSON_TYPE, ...signed(body) }, body };
			},
		],
		[
			'a job report whose job id is not a UUID, correctly signed',
			400,
			/data\.id/,
			() => {
				const body = report({ ...job, id: '../../etc/passwd' });
				return { path, headers: { ...JSON_TYPE, ...signed(body) }, body };
			},
		],
		[
			'a form-encoded body, unsigned',
			401,
			/lacks/,
			() => ({
				path,
				headers: { 'content-type': 'application/x-www-form-urlencoded' },
				body: `payload=${encodeURIComponent(genuine())}`,
			}),
		],
		['an empty body, unsigned', 401, /lacks/, () => ({ path, headers: JSON_TYPE, body: '' })],
		[
			'a query string asking to turn checking off',
			401,
			/lacks/,
			() => ({
				path: `${path}?verification=off&events=succeeded`,
				headers: JSON_TYPE,
				body: genuine(),
			}),
		],
		[
			'the signature headers put in the query string',
			401,
			/lacks/,
			() => {
				const body = genuine();
				return {
					path: `${path}?${new URLSearchParams(signed(body)).toString()}`,
					headers: JSON_TYPE,
					body,
				};
			},
		],
		[
			'the first delivery replayed (same webhook-id): acknowledged, not started again',
			200,
			/"duplicate":true/,
			() => ({ path, headers: { ...JSON_TYPE, ...first.headers }, body: first.body }),
		],
		[
			'the first delivery replayed under a new webhook-id',
			401,
			/does not match/,
			() => ({
				path,
				headers: { ...JSON_TYPE, ...first.headers, 'webhook-id': `msg_${randomUUID()}` },
				body: first.body,
			}),
		],
		[
			'a path with ../ segments',
			404,
			undefined,
			() => {
				const body = genuine();
				return { path: `${path}/../job-events`, headers: { ...JSON_TYPE, ...signed(body) }, body };
			},
		],
		[
			'an encoded slash in the path',
			404,
			undefined,
			() => {
				const body = genuine();
				return {
					path: path.replace(/\/job-events$/, '%2Fjob-events'),
					headers: { ...JSON_TYPE, ...signed(body) },
					body,
				};
			},
		],
		[
			'an extra path segment',
			404,
			undefined,
			() => {
				const body = genuine();
				return { path: `${path}/extra`, headers: { ...JSON_TYPE, ...signed(body) }, body };
			},
		],
		[
			'another (unregistered) webhook id',
			404,
			undefined,
			() => {
				const body = genuine();
				return {
					path: path.replace(/[0-9a-f-]{36}/, randomUUID()),
					headers: { ...JSON_TYPE, ...signed(body) },
					body,
				};
			},
		],
		['GET', 404, undefined, () => ({ method: 'GET', path })],
		[
			'PUT, correctly signed',
			404,
			undefined,
			() => {
				const body = genuine();
				return { method: 'PUT', path, headers: { ...JSON_TYPE, ...signed(body) }, body };
			},
		],
		['DELETE', 404, undefined, () => ({ method: 'DELETE', path })],
	];

	test.each(cases)(
		'%s: %i, nothing started, nothing sent to GPU Cloud',
		async (_name, status, body, build) => {
			const executions = rig.harness.executions.size;
			const handled = rig.harness.webhookRequestsHandled;
			const request = build();
			const reply = await send(rig.harness.baseUrl, request);
			expect(reply.status).toBe(status);
			if (body) expect(reply.body).toMatch(body);
			// n8n routes only POSTs to a webhook (others get its 404 unhandled): wait until the trigger's
			// handling of this one has ended, execution included, before saying it started nothing.
			if ((request.method ?? 'POST') === 'POST')
				await rig.harness.until(() =>
					rig.harness.webhookRequestsHandled > handled ? true : undefined,
				);
			expect(rig.harness.executions.size).toBe(executions);
			expect(rig.emulator.requests).toEqual([]);
			expect(rig.harness.webhookErrors).toEqual([]);
		},
	);

	test(`after ${cases.length} crafted requests a genuine delivery still starts the workflow`, async () => {
		const before = executionsOf(trigger).length;
		const body = genuine();
		const reply = await send(rig.harness.baseUrl, {
			path,
			headers: { ...JSON_TYPE, ...signed(body) },
			body,
		});
		expect(reply).toEqual({ status: 200, body: '{"received":true}' });
		const started = await rig.harness.until(() =>
			executionsOf(trigger).length > before ? executionsOf(trigger).at(-1) : undefined,
		);
		const finished = await rig.harness.finished(started.id);
		expect(outputOf(finished, 'GPU Cloud Trigger')[0].json).toMatchObject({
			id: job.id,
			status: 'succeeded',
		});
	});
});

describe('the resume URL of an execution paused in webhook mode', () => {
	let executionId: string;
	let waitingFor: Job;
	const resumePath = () => `/webhook-waiting/${executionId}`;

	beforeAll(async () => {
		const paused = await rig.harness.run(
			gpuCloudWorkflow({
				resource: 'job',
				operation: 'createAndWait',
				endpoint: byName('summarize-text'),
				input: '{"text": "slow one"}',
				waitMode: 'webhook',
				timeoutMinutes: 5,
			}),
		);
		expect(paused.status).toBe('waiting');
		executionId = paused.id;
		const found = rig.emulator.getJob(String(outputOf(paused, 'GPU Cloud')[0].json.id));
		if (!found) throw new Error('the job is missing');
		waitingFor = found;
		rig.emulator.resetLogs();
	});

	/** What a forger wants the workflow to see: the job it waits for, "succeeded" with their output. */
	const forged = () =>
		report({ ...waitingFor, status: 'succeeded', output: { summary: 'forged' } });

	const cases: Array<[string, number, () => RawRequest]> = [
		['unsigned', 401, () => ({ path: resumePath(), headers: JSON_TYPE, body: forged() })],
		[
			'signed with another secret',
			401,
			() => {
				const body = forged();
				return {
					path: resumePath(),
					headers: { ...JSON_TYPE, ...signed(body, { secret: OTHER_SECRET }) },
					body,
				};
			},
		],
		[
			'stale: signed 10 minutes ago',
			401,
			() => {
				const body = forged();
				return {
					path: resumePath(),
					headers: { ...JSON_TYPE, ...signed(body, { timestampSeconds: now() - 600 }) },
					body,
				};
			},
		],
		[
			'future: signed 10 minutes ahead',
			401,
			() => {
				const body = forged();
				return {
					path: resumePath(),
					headers: { ...JSON_TYPE, ...signed(body, { timestampSeconds: now() + 600 }) },
					body,
				};
			},
		],
		[
			'10 MB body, unsigned',
			401,
			() => ({
				path: resumePath(),
				headers: JSON_TYPE,
				body: JSON.stringify({ pad: 'x'.repeat(10 * MB) }),
			}),
		],
		[
			'an execution that does not exist',
			404,
			() => {
				const body = forged();
				return {
					path: '/webhook-waiting/999999',
					headers: { ...JSON_TYPE, ...signed(body) },
					body,
				};
			},
		],
	];

	test.each(cases)(
		'%s: %i, the execution stays paused, nothing sent to GPU Cloud',
		async (_name, status, build) => {
			const reply = await send(rig.harness.baseUrl, build());
			expect(reply.status).toBe(status);
			expect(rig.harness.executions.get(executionId)).toMatchObject({
				status: 'waiting',
				resumes: 0,
			});
			expect(rig.emulator.requests).toEqual([]);
			expect(rig.harness.webhookErrors).toEqual([]);
		},
	);

	test('a genuine report about another job is acknowledged without resuming', async () => {
		const body = report(job);
		const reply = await send(rig.harness.baseUrl, {
			path: resumePath(),
			headers: { ...JSON_TYPE, ...signed(body) },
			body,
		});
		expect(reply.status).toBe(200);
		expect(JSON.parse(reply.body)).toMatchObject({
			resumed: false,
			reason: 'The job is not one this execution waits for.',
		});
		expect(rig.harness.executions.get(executionId)).toMatchObject({
			status: 'waiting',
			resumes: 0,
		});
	});
});
