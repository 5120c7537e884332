import { randomUUID } from 'node:crypto';
import { signWebhook } from '../../shared/webhooks';
import { JobOriginSeal } from '../../slack-app/state/job-metadata';
import { BOT, TEAM, slackSignature } from '../../slack-standin';
import { content, Stack } from '../slack/harness';
import { send, type RawRequest } from './raw-http';

/**
 * Crafted requests against the Slack app's two routes: /slack/events (Bolt checks Slack's signature)
 * and the job-webhook route (the app checks GPU Cloud's Standard Webhooks signature). Each is refused
 * with the right status and has no effect: no Slack message or API call, no request to GPU Cloud.
 * The process keeps serving genuine requests afterwards.
 */

const CHANNEL = 'C0HOSTILE';
const USER = 'U0MALLORY';
const MB = 1024 * 1024;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const JSON_TYPE = { 'content-type': 'application/json' };

let stack: Stack;
let origin: string;
let webhookPath: string;

beforeAll(async () => {
	stack = await Stack.start({ webhooks: true, env: { SLACK_POLL_INTERVAL_MS: '600000' } });
	origin = new URL(stack.app.eventsUrl ?? '').origin;
	webhookPath = new URL(stack.app.localWebhookUrl ?? '').pathname;
});

afterAll(() => stack.close());

const seconds = () => Math.floor(Date.now() / 1000);

/** What Slack would send for `/gpu transcribe ...` by USER, signed (or not) as told. */
function command(text = 'transcribe https://files.example/hostile.mp3'): string {
	return stack.standin.app.slashCommandBody({ user: USER, channel: CHANNEL, text });
}

function slackHeaders(
	body: string,
	options: { secret?: string; timestamp?: number } = {},
): Record<string, string> {
	const timestamp = options.timestamp ?? seconds();
	return {
		'x-slack-request-timestamp': String(timestamp),
		'x-slack-signature': slackSignature(
			options.secret ?? stack.credentials.signingSecret,
			timestamp,
			body,
		),
	};
}

function interaction(payload: Record<string, unknown>): string {
	return new URLSearchParams({
		payload: JSON.stringify({
			team: { id: TEAM.id },
			user: { id: USER },
			api_app_id: BOT.appId,
			token: 'x',
			...payload,
		}),
	}).toString();
}

/** Everything a request could have caused, counted. */
function effects() {
	const { workspace, api } = stack.standin;
	return {
		slackCalls: api.calls.length,
		messages: workspace.messages.length,
		ephemerals: workspace.ephemerals.length,
		views: workspace.views.size,
		// A signature mismatch may re-read the organization's secret (it may have been rotated), at
		// most once a minute; that read is not an effect of the request.
		serviceRequests: stack.emulator.requests.filter(
			(request) => !request.path.endsWith('/webhook-secret-key'),
		).length,
	};
}

/** Called once the request's answer is back: whatever it set off is under way by then. */
async function expectNoEffect(before: ReturnType<typeof effects>): Promise<void> {
	// The receiver queues a request's work (afterAck) in the turn it writes the answer, so once the
	// answer has arrived the app's idle() covers it: no fixed wait needed.
	await stack.app.idle();
	expect(effects()).toEqual(before);
}

describe('/slack/events', () => {
	const path = '/slack/events';
	/** A /gpu command, correctly signed, then some of its signature headers replaced. */
	const commandWith =
		(
			replaced:
				| RawRequest['headers']
				| ((headers: Record<string, string>) => RawRequest['headers']),
		) =>
		(): RawRequest => {
			const body = command();
			const headers = slackHeaders(body);
			const replacing = typeof replaced === 'function' ? replaced(headers) : replaced;
			return { path, headers: { ...FORM, ...headers, ...replacing }, body };
		};
	const cases: Array<[string, number, () => RawRequest]> = [
		[
			'a slash command, unsigned',
			401,
			() => ({
				path,
				headers: { ...FORM, 'x-slack-request-timestamp': String(seconds()) },
				body: command(),
			}),
		],
		[
			'signed with another secret',
			401,
			() => {
				const body = command();
				return {
					path,
					headers: { ...FORM, ...slackHeaders(body, { secret: 'not-the-signing-secret' }) },
					body,
				};
			},
		],
		[
			'the signature of another body',
			401,
			() => ({ path, headers: { ...FORM, ...slackHeaders(command('help')) }, body: command() }),
		],
		[
			'the text changed after signing',
			401,
			() => {
				const body = command('help');
				return {
					path,
					headers: { ...FORM, ...slackHeaders(body) },
					body: body.replace('text=help', 'text=cancel+all'),
				};
			},
		],
		[
			'stale: signed 10 minutes ago',
			401,
			() => {
				const body = command();
				return {
					path,
					headers: { ...FORM, ...slackHeaders(body, { timestamp: seconds() - 600 }) },
					body,
				};
			},
		],
		[
			'the timestamp header missing',
			401,
			() => {
				const body = command();
				const { 'x-slack-request-timestamp': _, ...rest } = slackHeaders(body);
				return { path, headers: { ...FORM, ...rest }, body };
			},
		],
		['a timestamp that is not a number', 401, commandWith({ 'x-slack-request-timestamp': 'now' })],
		[
			'the timestamp moved after signing',
			401,
			commandWith(() => ({ 'x-slack-request-timestamp': String(seconds() - 1) })),
		],
		[
			'signature version v1',
			401,
			commandWith((headers) => ({
				'x-slack-signature': headers['x-slack-signature'].replace('v0=', 'v1='),
			})),
		],
		[
			'a truncated signature',
			401,
			commandWith((headers) => ({
				'x-slack-signature': headers['x-slack-signature'].slice(0, 20),
			})),
		],
		['an empty signature', 401, commandWith({ 'x-slack-signature': '' })],
		[
			'two signature headers, one of them valid',
			401,
			commandWith((headers) => ({ 'x-slack-signature': [headers['x-slack-signature'], 'v0=00'] })),
		],
		[
			'10 MB body, correctly signed',
			413,
			() => {
				const body = `${command()}&pad=${'x'.repeat(10 * MB)}`;
				return { path, headers: { ...FORM, ...slackHeaders(body) }, body };
			},
		],
		['10 MB body, unsigned', 413, () => ({ path, headers: FORM, body: 'x'.repeat(10 * MB) })],
		[
			'invalid JSON, correctly signed',
			400,
			() => {
				const body = '{"type": "event_callback", ';
				return { path, headers: { ...JSON_TYPE, ...slackHeaders(body) }, body };
			},
		],
		['invalid JSON, unsigned', 401, () => ({ path, headers: JSON_TYPE, body: '{"type": ' })],
		[
			'the signed command sent as text/plain',
			400,
			() => {
				const body = command();
				return { path, headers: { 'content-type': 'text/plain', ...slackHeaders(body) }, body };
			},
		],
		[
			'an unsigned command smuggled behind ssl_check=1 (answered, not run)',
			200,
			() => ({ path, headers: FORM, body: `ssl_check=1&${command()}` }),
		],
		[
			'a URL verification challenge, unsigned',
			401,
			() => ({
				path,
				headers: JSON_TYPE,
				body: JSON.stringify({ type: 'url_verification', challenge: 'abc', token: 'x' }),
			}),
		],
		[
			'a Cancel button click, unsigned',
			401,
			() => ({
				path,
				headers: FORM,
				body: interaction({
					type: 'block_actions',
					channel: { id: CHANNEL },
					actions: [
						{
							type: 'button',
							action_id: 'gpu.cancel',
							value: JSON.stringify({ endpoint: 'transcribe', jobId: randomUUID() }),
						},
					],
				}),
			}),
		],
		[
			'a job form submission, unsigned',
			401,
			() => ({
				path,
				headers: FORM,
				body: interaction({
					type: 'view_submission',
					view: {
						id: 'V0',
						callback_id: 'gpu.job_form',
						private_metadata: '{}',
						state: { values: {} },
					},
				}),
			}),
		],
		[
			'a thread reply event, unsigned',
			401,
			() => ({
				path,
				headers: JSON_TYPE,
				body: JSON.stringify({
					type: 'event_callback',
					team_id: TEAM.id,
					event_id: 'Ev0',
					event: {
						type: 'message',
						channel: CHANNEL,
						user: USER,
						text: 'hi',
						ts: '2.0',
						thread_ts: '1.0',
					},
				}),
			}),
		],
		[
			'a query string carrying a command, unsigned',
			401,
			() => ({
				path: `${path}?command=%2Fgpu&text=transcribe+https%3A%2F%2Fx%2Fa.mp3`,
				headers: FORM,
				body: '',
			}),
		],
		[
			'a path with ../ segments (normalized to /slack/events), unsigned',
			401,
			() => ({ path: '/slack/x/../events', headers: FORM, body: command() }),
		],
		[
			'an encoded slash in the path, correctly signed',
			404,
			() => {
				const body = command();
				return { path: '/slack%2Fevents', headers: { ...FORM, ...slackHeaders(body) }, body };
			},
		],
		[
			'an extra path segment, correctly signed',
			404,
			() => {
				const body = command();
				return { path: '/slack/events/extra', headers: { ...FORM, ...slackHeaders(body) }, body };
			},
		],
		['GET', 404, () => ({ method: 'GET', path })],
		[
			'PUT, correctly signed',
			404,
			() => {
				const body = command();
				return { method: 'PUT', path, headers: { ...FORM, ...slackHeaders(body) }, body };
			},
		],
	];

	test.each(cases)('%s: %i and no effect', async (_name, status, build) => {
		const before = effects();
		const reply = await send(origin, build());
		expect(reply.status).toBe(status);
		await expectNoEffect(before);
	});

	// Bolt 5.1's verifySlackRequest refuses only timestamps more than 5 minutes in the past; the app
	// refuses those more than 5 minutes ahead itself, before Bolt.
	test('future: correctly signed but dated 10 minutes ahead: 401 and no effect', async () => {
		const before = effects();
		const body = command('help');
		const reply = await send(origin, {
			path,
			headers: { ...FORM, ...slackHeaders(body, { timestamp: seconds() + 600 }) },
			body,
		});
		expect(reply.status).toBe(401);
		await expectNoEffect(before);
	});
});

describe('Slack redelivering an event', () => {
	const channel = 'C0RETRY';

	/** A person's reply in a chat thread, as the Events API sends it, with a fixed event_id. */
	function threadReply(parentTs: string, ts: string): string {
		return JSON.stringify({
			token: 'x',
			team_id: TEAM.id,
			api_app_id: BOT.appId,
			type: 'event_callback',
			event_id: 'Ev0RETRIED',
			event_time: seconds(),
			event: {
				type: 'message',
				channel,
				user: 'U0TALK',
				text: 'and then?',
				ts,
				thread_ts: parentTs,
				channel_type: 'channel',
				event_ts: ts,
				team: TEAM.id,
			},
			authorizations: [
				{ team_id: TEAM.id, user_id: BOT.userId, is_bot: true, is_enterprise_install: false },
			],
		});
	}

	// Slack redelivers an event (same event_id, x-slack-retry-num) when it did not see a 2xx within 3 s;
	// the follow-up must be answered once (one model call, one answer in the thread).
	test('a redelivered thread reply (same event_id) is answered once', async () => {
		await stack.command('chat hello there', 'U0TALK', channel);
		const parent = await stack.waitForParent(1, channel);
		await stack.standin.waitFor(
			() => stack.replies(parent.ts, channel).length === 1,
			10_000,
			'the first answer',
		);
		await stack.app.idle();
		const reply = stack.standin.workspace.post({
			channel,
			user: 'U0TALK',
			text: 'and then?',
			threadTs: parent.ts,
		});
		const body = threadReply(parent.ts, reply.ts);
		expect(
			(
				await send(origin, {
					path: '/slack/events',
					headers: { ...JSON_TYPE, ...slackHeaders(body) },
					body,
				})
			).status,
		).toBe(200);
		const retry = { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' };
		expect(
			(
				await send(origin, {
					path: '/slack/events',
					headers: { ...JSON_TYPE, ...slackHeaders(body), ...retry },
					body,
				})
			).status,
		).toBe(200);
		await stack.standin.waitFor(
			() => stack.replies(parent.ts, channel).length >= 3,
			10_000,
			'the follow-up answer',
		);
		// Both deliveries were answered (their work queued by then) and the first one's answer is in:
		// idle() waits for anything else they set off.
		await stack.app.idle();
		const answers = stack
			.replies(parent.ts, channel)
			.filter((message) => message.user === BOT.userId);
		expect(answers).toHaveLength(2);
	});
});

describe('the job-webhook route', () => {
	let parentTs: string;
	/** A finished job that claims a thread of this app: only a genuine report may post there. */
	let body: string;

	beforeAll(async () => {
		parentTs = stack.standin.workspace.post({
			channel: CHANNEL,
			user: BOT.userId,
			botId: BOT.botId,
			text: 'a parent',
		}).ts;
		const time = new Date().toISOString();
		const job = {
			id: randomUUID(),
			inference_endpoint_name: 'echo',
			organization_name: stack.emulator.organization,
			input: {},
			status: 'succeeded',
			events: [{ action: 'created', time }],
			create_time: time,
			update_time: time,
			output: { forged: true },
			metadata: await stack.container.origins.metadata(
				{
					team: TEAM.id,
					thread: { channel: CHANNEL, threadTs: parentTs },
					user: 'U0VICTIM',
					kind: 'job',
				},
				randomUUID(),
			),
		};
		// Recorded as a job the app created: only the webhook's signature stands between it and the thread.
		await stack.container.origins.created(job);
		body = JSON.stringify({ type: 'inference_endpoint.job.succeeded', timestamp: time, data: job });
	});

	function signed(
		payload: string,
		options: { secret?: string; timestampSeconds?: number; id?: string } = {},
	): Record<string, string> {
		return {
			...signWebhook(options.secret ?? stack.emulator.webhookSecret, payload, {
				id: options.id,
				timestampSeconds: options.timestampSeconds ?? Date.now() / 1000,
			}).headers,
		};
	}
	const otherSecret = Buffer.from('an attacker guessing the secret').toString('base64');

	const cases: Array<[string, number, () => RawRequest]> = [
		['unsigned', 401, () => ({ path: webhookPath, headers: JSON_TYPE, body })],
		[
			'signed with another secret',
			401,
			() => ({
				path: webhookPath,
				headers: { ...JSON_TYPE, ...signed(body, { secret: otherSecret }) },
				body,
			}),
		],
		[
			'the signature of another body',
			401,
			() => ({
				path: webhookPath,
				headers: { ...JSON_TYPE, ...signed(body.replace('"forged":true', '"forged":1')) },
				body,
			}),
		],
		[
			'the body changed after signing',
			401,
			() => ({
				path: webhookPath,
				headers: { ...JSON_TYPE, ...signed(body) },
				body: body.replace('U0VICTIM', 'U0MALLORY'),
			}),
		],
		[
			'stale: signed 10 minutes ago',
			401,
			() => ({
				path: webhookPath,
				headers: { ...JSON_TYPE, ...signed(body, { timestampSeconds: Date.now() / 1000 - 600 }) },
				body,
			}),
		],
		[
			'future: signed 10 minutes ahead',
			401,
			() => ({
				path: webhookPath,
				headers: { ...JSON_TYPE, ...signed(body, { timestampSeconds: Date.now() / 1000 + 600 }) },
				body,
			}),
		],
		[
			'a timestamp that is not a number',
			401,
			() => ({
				path: webhookPath,
				headers: { ...JSON_TYPE, ...signed(body), 'webhook-timestamp': 'soon' },
				body,
			}),
		],
		[
			'the webhook-id swapped after signing',
			401,
			() => ({
				path: webhookPath,
				headers: { ...JSON_TYPE, ...signed(body), 'webhook-id': `msg_${randomUUID()}` },
				body,
			}),
		],
		[
			'a signature that is not base64',
			401,
			() => ({
				path: webhookPath,
				headers: { ...JSON_TYPE, ...signed(body), 'webhook-signature': 'v1,%%%' },
				body,
			}),
		],
		[
			'Slack signature headers instead',
			401,
			() => ({ path: webhookPath, headers: { ...JSON_TYPE, ...slackHeaders(body) }, body }),
		],
		[
			'10 MB body, unsigned',
			401,
			() => ({
				path: webhookPath,
				headers: JSON_TYPE,
				body: JSON.stringify({ pad: 'x'.repeat(10 * MB) }),
			}),
		],
		[
			"25 MB body (over the route's 20 MB cap), unsigned",
			413,
			() => ({ path: webhookPath, headers: JSON_TYPE, body: 'x'.repeat(25 * MB) }),
		],
		[
			'invalid JSON, correctly signed',
			400,
			() => {
				const broken = body.slice(0, 40);
				return { path: webhookPath, headers: { ...JSON_TYPE, ...signed(broken) }, body: broken };
			},
		],
		[
			'JSON that is not a job report, correctly signed',
			400,
			() => {
				const other = '{"type": "prompt.complete", "images": []}';
				return { path: webhookPath, headers: { ...JSON_TYPE, ...signed(other) }, body: other };
			},
		],
		[
			'a form-encoded body, unsigned',
			401,
			() => ({ path: webhookPath, headers: FORM, body: `payload=${encodeURIComponent(body)}` }),
		],
		[
			'a query string carrying a signature, unsigned',
			401,
			() => ({
				path: `${webhookPath}?${new URLSearchParams(signed(body)).toString()}`,
				headers: JSON_TYPE,
				body,
			}),
		],
		[
			'a path with ../ segments (normalized to the route), unsigned',
			401,
			() => ({ path: webhookPath.replace(/\/[^/]+$/, '/x/../webhook'), headers: JSON_TYPE, body }),
		],
		[
			'an encoded slash in the path, correctly signed',
			404,
			() => ({
				path: webhookPath.replace(/\/(?=[^/]+$)/, '%2F'),
				headers: { ...JSON_TYPE, ...signed(body) },
				body,
			}),
		],
		[
			'an extra path segment, correctly signed',
			404,
			() => ({ path: `${webhookPath}/extra`, headers: { ...JSON_TYPE, ...signed(body) }, body }),
		],
		['GET', 404, () => ({ method: 'GET', path: webhookPath })],
		[
			'PUT, correctly signed',
			404,
			() => ({
				method: 'PUT',
				path: webhookPath,
				headers: { ...JSON_TYPE, ...signed(body) },
				body,
			}),
		],
	];

	test.each(cases)('%s: %i and no effect', async (_name, status, build) => {
		const before = effects();
		const reply = await send(origin, build());
		expect(reply.status).toBe(status);
		await expectNoEffect(before);
		expect(stack.replies(parentTs, CHANNEL)).toHaveLength(0);
	});

	test('genuine reports of jobs this app did not start are acknowledged and ignored', async () => {
		const report = JSON.parse(body) as { data: Record<string, unknown> };
		const noSlack = JSON.stringify({
			...report,
			data: { ...report.data, id: randomUUID(), metadata: { order: 1 } },
		});
		const otherTeam = JSON.stringify({
			...report,
			data: {
				...report.data,
				id: randomUUID(),
				metadata: new JobOriginSeal(stack.config.appSecret, 'T0OTHER', () => undefined).metadata(
					{
						team: 'T0OTHER',
						thread: { channel: CHANNEL, threadTs: parentTs },
						user: 'U0VICTIM',
						kind: 'job',
					},
					randomUUID(),
				),
			},
		});
		const before = effects();
		for (const payload of [noSlack, otherTeam])
			expect(
				(
					await send(origin, {
						path: webhookPath,
						headers: { ...JSON_TYPE, ...signed(payload) },
						body: payload,
					})
				).status,
			).toBe(202);
		await expectNoEffect(before);
	});

	test('a genuine report is posted once; the same delivery replayed is acknowledged and dropped', async () => {
		const headers = signed(body, { id: `msg_${randomUUID()}` });
		expect(
			(await send(origin, { path: webhookPath, headers: { ...JSON_TYPE, ...headers }, body }))
				.status,
		).toBe(202);
		await stack.standin.waitFor(
			() => stack.replies(parentTs, CHANNEL).length === 1,
			10_000,
			'the genuine result',
		);
		await stack.app.idle();
		const before = effects();
		const replay = await send(origin, {
			path: webhookPath,
			headers: { ...JSON_TYPE, ...headers },
			body,
		});
		expect(replay).toEqual({ status: 200, body: 'duplicate' });
		await expectNoEffect(before);
		expect(stack.replies(parentTs, CHANNEL)).toHaveLength(1);
	});
});

describe('afterwards', () => {
	test('the app still serves a genuine command end to end', async () => {
		const reply = await stack.command(
			'transcribe https://files.example/after.mp3',
			'U0GENUINE',
			'C0AFTER',
		);
		expect(reply.status).toBe(200);
		const parent = await stack.waitForParent(1, 'C0AFTER');
		await stack.waitForParentText(parent.ts, /Succeeded in/, 15_000, 'C0AFTER');
		await stack.standin.waitFor(
			() => stack.replies(parent.ts, 'C0AFTER').length === 1,
			10_000,
			'the result',
		);
		expect(content(parent)).toContain('<@U0GENUINE>');
		expect(stack.parents(CHANNEL)).toHaveLength(1);
	});
});
