import WebSocket from 'ws';
import { ACTIONS, SHORTCUTS } from '../../slack-app/messages/actions';
import { JOB_FORM } from '../../slack-app/messages/modal';
import { ANSWER_EVENT } from '../../slack-app/slack/slack-thread';
import { DIRECT_MESSAGE, LOCAL_USER, startStandin, type Standin } from '../../slack-standin';
import { eventually } from '../support/eventually';
import { startSlackApp } from '../../slack-app/app';
import { CapturingLogger, content, Stack } from './harness';
import { assistantQuestion, directMessage, finishedAnswers, modelCalls } from './retried-events';

/**
 * Socket Mode end to end: the app calls apps.connections.open with its app-level token, connects to
 * the stand-in's WebSocket and acknowledges each envelope; the stand-in redelivers what it heard no
 * acknowledgement for, as Slack does. Work starts once, however often an event arrives.
 */

let stack: Stack;
beforeAll(async () => {
	// Slack's 3 s to acknowledge; its first retry comes at once, the later ones sooner than Slack's.
	stack = await Stack.start({ socketMode: { retryDelaysMs: [0, 1000, 2000] } });
});
afterAll(() => stack.close());

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const socketMode = () => stack.standin.socketMode ?? fail('Socket Mode is off in the stand-in.');

const READ_ONLY_APP_TOKEN = 'xapp-1-A0SCOPES-1-readonly';

/** A stand-in of its own whose app-level token was created without connections:write. */
async function withReadOnlyAppToken(run: (standin: Standin) => Promise<void>): Promise<void> {
	const standin = await startStandin({
		botToken: 'xoxb-1-scopes',
		signingSecret: 'scopes-secret',
		appToken: READ_ONLY_APP_TOKEN,
		socketMode: { appTokenScopes: ['authorizations:read'] },
	});
	try {
		await run(standin);
	} finally {
		await standin.close();
	}
}

/** The HTTP status a WebSocket handshake to `url` is refused with (0 if it was accepted). */
function handshakeStatus(url: string): Promise<number> {
	return new Promise((resolve, reject) => {
		const socket = new WebSocket(url);
		socket.once('unexpected-response', (_req, res) => {
			resolve(res.statusCode ?? 0);
			socket.terminate();
		});
		socket.once('open', () => {
			resolve(0);
			socket.close();
		});
		socket.once('error', (error) =>
			/Unexpected server response/.test(error.message) ? undefined : reject(error),
		);
	});
}

/** A direct message to the app and its delivery; resolves once its chat is answered and settled. */
async function directMessageAnswered(text: string) {
	const parentsBefore = stack.parents(DIRECT_MESSAGE.id).length;
	const callsBefore = modelCalls(stack);
	const message = directMessage(stack, text);
	await stack.standin.app.messageEvent(message);
	// The person's message is the conversation's thread; the app posts no parent beside it.
	const parent = message;
	await stack.standin.waitFor(
		() => finishedAnswers(stack, parent.ts),
		15_000,
		"the direct message's answer",
	);
	return { parentsBefore, callsBefore, message };
}

describe('the connection', () => {
	it('the app opened it with its app-level token; it has no Request URL, its health route answers', async () => {
		expect(stack.app.eventsUrl).toBeUndefined();
		expect(socketMode().opens).toEqual([{}]);
		expect(socketMode().openConnections).toBe(1);
		expect((await fetch(`${stack.app.localUrl}/healthz`)).status).toBe(200);
	});

	/** https://docs.slack.dev/reference/methods/apps.connections.open */
	it.each([
		['a bot token', { authorization: 'Bearer xoxb-1-bot' }, '', 'not_allowed_token_type'],
		['another app-level token', { authorization: 'Bearer xapp-1-other' }, '', 'invalid_auth'],
		['the app-level token as a POST parameter', {}, 'token=APP', 'invalid_auth'],
		['no token', {}, '', 'not_authed'],
	])('apps.connections.open refuses %s', async (_case, headers, body, error) => {
		const response = await fetch(`${stack.standin.apiUrl}apps.connections.open`, {
			method: 'POST',
			headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
			body: body.replace('APP', stack.credentials.appToken ?? ''),
		});
		expect(await response.json()).toEqual({ ok: false, error });
	});

	it('apps.connections.open refuses an app-level token created without connections:write', async () => {
		await withReadOnlyAppToken(async (standin) => {
			const response = await fetch(`${standin.apiUrl}apps.connections.open`, {
				method: 'POST',
				headers: { authorization: `Bearer ${READ_ONLY_APP_TOKEN}` },
			});
			expect(await response.json()).toEqual({
				ok: false,
				error: 'missing_scope',
				needed: 'connections:write',
				provided: 'authorizations:read',
			});
		});
	});

	it('a start with an app-level token Slack does not know fails, saying why', async () => {
		const { slack } = stack.config;
		if (slack.mode !== 'socket') throw new Error('The stack is not in Socket Mode.');
		const config = {
			...stack.config,
			slack: { ...slack, appToken: 'xapp-1-unknown', port: 0 },
			stateFile: `${stack.stateFile}.other`,
		};
		const opensBefore = socketMode().opens.length;
		await expect(startSlackApp({ config, logger: new CapturingLogger() })).rejects.toThrow(
			/invalid_auth/,
		);
		expect(socketMode().opens.slice(opensBefore)).toEqual([{ error: 'invalid_auth' }]);
		expect(socketMode().openConnections).toBe(1);
	});

	it('a start with an app-level token lacking connections:write fails, naming the setting and the scope', async () => {
		// @slack/socket-mode gives up only on invalid_auth and a few others; on missing_scope it would
		// ask for a connection again and again, and the app would never finish starting.
		const { slack } = stack.config;
		if (slack.mode !== 'socket') throw new Error('The stack is not in Socket Mode.');
		await withReadOnlyAppToken(async (standin) => {
			const config = {
				...stack.config,
				slack: {
					...slack,
					appToken: READ_ONLY_APP_TOKEN,
					botToken: 'xoxb-1-scopes',
					apiUrl: standin.apiUrl,
					port: 0,
				},
				stateFile: `${stack.stateFile}.scopes`,
			};
			const logger = new CapturingLogger();
			await expect(startSlackApp({ config, logger })).rejects.toThrow(
				'SLACK_APP_TOKEN: Slack refused to open a Socket Mode connection with it (missing_scope: it needs the connections:write scope)',
			);
			// Asked once, not again and again.
			expect(standin.socketMode?.opens).toEqual([{ error: 'missing_scope' }]);
		});
	});

	it('a WebSocket URL is a one-time ticket; an ack naming no envelope sent is ignored', async () => {
		const opened = (await (
			await fetch(`${stack.standin.apiUrl}apps.connections.open`, {
				method: 'POST',
				headers: { authorization: `Bearer ${stack.credentials.appToken}` },
			})
		).json()) as { ok: boolean; url: string };
		expect(opened.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/link\/\?ticket=/);
		expect(await handshakeStatus(opened.url.replace(/ticket=[^&]+/, 'ticket=forged'))).toBe(401);
		const socket = new WebSocket(opened.url);
		const hello = await new Promise<unknown>((resolve, reject) => {
			socket.once('message', (data: Buffer) => resolve(JSON.parse(data.toString())));
			socket.once('error', reject);
		});
		expect(hello).toMatchObject({ type: 'hello', num_connections: 2 });
		socket.send(JSON.stringify({ envelope_id: 'not-sent' }));
		await eventually('the stray ack', () => socketMode().strayAcks.includes('not-sent'));
		socket.close();
		await eventually('the extra connection closed', () => socketMode().openConnections === 1);
		// The ticket was used: connecting with it again is refused.
		expect(await handshakeStatus(opened.url)).toBe(401);
	});
});

describe('the connection limit', () => {
	/** A WebSocket of the app's own (a second process, say) and the first message Slack sends on it. */
	async function connect(): Promise<{ socket: WebSocket; first: unknown }> {
		const opened = (await (
			await fetch(`${stack.standin.apiUrl}apps.connections.open`, {
				method: 'POST',
				headers: { authorization: `Bearer ${stack.credentials.appToken}` },
			})
		).json()) as { url: string };
		const socket = new WebSocket(opened.url);
		const first = await new Promise<unknown>((resolve, reject) => {
			socket.once('message', (data: Buffer) => resolve(JSON.parse(data.toString())));
			socket.once('error', reject);
		});
		return { socket, first };
	}

	/** https://docs.slack.dev/apis/events-api/using-socket-mode: at most 10 open connections per app. */
	it('an eleventh connection is told too_many_websockets and closed; the app keeps its own', async () => {
		const extra: WebSocket[] = [];
		try {
			for (let count = 2; count <= 10; count++) {
				const { socket, first } = await connect();
				extra.push(socket);
				expect(first).toMatchObject({ type: 'hello', num_connections: count });
			}
			const { socket, first } = await connect();
			expect(first).toMatchObject({ type: 'disconnect', reason: 'too_many_websockets' });
			await new Promise((resolve) =>
				socket.readyState === socket.CLOSED ? resolve(undefined) : socket.once('close', resolve),
			);
			expect(socketMode().openConnections).toBe(10);
		} finally {
			for (const socket of extra) socket.close();
		}
		await eventually('the extra connections closed', () => socketMode().openConnections === 1);
		// Slack still delivers to the app's own connection.
		const reply = await stack.command('help', 'U0SMLIMIT', 'C0SMLIMIT');
		expect(reply.status).toBe(200);
	});
});

describe('exactly once', () => {
	it('an event whose acknowledgement was lost is delivered again and starts one chat', async () => {
		socketMode().loseAcks(1);
		const sentBefore = socketMode().sent.length;
		const { parentsBefore, callsBefore } = await directMessageAnswered('How long may a job run?');
		// The redelivery: the same event, retry_attempt 1, after Slack's 3 s without an ack.
		await eventually('the redelivered envelope, acknowledged', () =>
			socketMode()
				.sent.slice(sentBefore)
				.find((sent) => sent.retryAttempt === 1 && sent.acked),
		);
		await pause(1000);
		await stack.app.idle();
		const deliveries = socketMode().sent.slice(sentBefore);
		expect(new Set(deliveries.map((sent) => sent.eventId)).size).toBe(1);
		expect({
			parents: stack.parents(DIRECT_MESSAGE.id).length - parentsBefore,
			modelCalls: modelCalls(stack) - callsBefore,
		}).toEqual({ parents: 0, modelCalls: 1 });
		expect(stack.logger.lines).toContainEqual(
			expect.stringContaining(`Ignored event ${deliveries[0].eventId} (Slack's retry #1)`),
		);
	});
});

describe('exactly once, across a reconnection', () => {
	it.each([
		['Slack refreshed the connection', () => socketMode().disconnect('refresh_requested')],
		['Slack warned of a refresh', () => socketMode().disconnect('warning')],
		['the network cut the connection', () => socketMode().dropConnections()],
	])(
		'an event unacknowledged when %s comes again on the new one, and starts one chat',
		async (_case, endConnection) => {
			socketMode().loseAcks(1);
			const sentBefore = socketMode().sent.length;
			const opensBefore = socketMode().opens.length;
			const lostBefore = socketMode().lostAcks.length;
			const parentsBefore = stack.parents(DIRECT_MESSAGE.id).length;
			const callsBefore = modelCalls(stack);
			const message = directMessage(stack, 'And a queue?');
			const delivery = stack.standin.app.messageEvent(message);
			// Its ack is lost; the connection ends before Slack's 3 s are up.
			await eventually('the ack lost', () => socketMode().lostAcks.length > lostBefore);
			endConnection();
			expect((await delivery).status).toBe(404);
			// The client calls apps.connections.open again and takes the envelope on the new connection.
			const again = await eventually(
				'the envelope delivered again on a new connection',
				() =>
					socketMode()
						.sent.slice(sentBefore)
						.find((sent) => sent.retryAttempt > 0 && sent.acked),
				{ timeoutMs: 20_000 },
			);
			expect(socketMode().opens.slice(opensBefore)).toEqual([{}]);
			const [first] = socketMode().sent.slice(sentBefore);
			expect(again).toMatchObject({ eventId: first.eventId, retryReason: 'connection_closed' });
			expect(again.connection).toBeGreaterThan(first.connection);
			// The person's message is the conversation's thread; the app posts no parent beside it.
			const parent = message;
			await stack.standin.waitFor(() => finishedAnswers(stack, parent.ts), 15_000, 'the answer');
			await pause(1000);
			await stack.app.idle();
			expect({
				parents: stack.parents(DIRECT_MESSAGE.id).length - parentsBefore,
				modelCalls: modelCalls(stack) - callsBefore,
			}).toEqual({ parents: 0, modelCalls: 1 });
		},
		30_000,
	);
});

describe('every surface over the WebSocket', () => {
	it('/gpu job: acknowledged over the socket, status edits, the output in the thread', async () => {
		const channel = 'C0SMJOB';
		const endpoint = stack.emulator.genericEndpoint;
		const reply = await stack.command(`job ${endpoint} {"prompt": "hello"}`, 'U0SMJOB', channel);
		expect(reply).toEqual({ status: 200, body: '' });
		const parent = await stack.waitForParent(1, channel);
		expect(content(parent)).toContain(`<@U0SMJOB> ran a job on \`${endpoint}\``);
		await stack.waitForParentText(parent.ts, /Succeeded in/, 15_000, channel);
		expect(content(stack.replies(parent.ts, channel)[0])).toContain('Output');
		expect(socketMode().sent.some((sent) => sent.type === 'slash_commands' && sent.acked)).toBe(
			true,
		);
	});

	it('/gpu image: the images into the thread, and the Show input button', async () => {
		const channel = 'C0SMIMG';
		await stack.command('image a red fox --count 1 --width 512 --height 512', 'U0SMART', channel);
		const parent = await stack.waitForParent(1, channel);
		const done = await stack.waitForParentText(parent.ts, /Succeeded in/, 15_000, channel);
		const files = stack.replies(parent.ts, channel).flatMap((message) => message.fileIds);
		expect(files).toHaveLength(1);
		const reply = await stack.standin.app.click({
			user: 'U0SMART',
			channel,
			actionId: ACTIONS.showInput,
			value: JSON.stringify({ prompt: 'a red fox', width: 512, height: 512, count: 1 }),
			message: done,
		});
		expect(reply.status).toBe(200);
		await stack.waitForEphemeral(/Image request[\s\S]*a red fox/, 'U0SMART');
	});

	it('/gpu chat, then a reply in its thread continues the conversation', async () => {
		const channel = 'C0SMCHAT';
		await stack.command('chat What is an interruptible GPU node?', 'U0SMASK', channel);
		const parent = await stack.waitForParent(1, channel);
		await stack.waitForParentText(parent.ts, /Succeeded in/, 15_000, channel);
		const before = modelCalls(stack);
		await stack.standin.postAsUser('U0SMASK', channel, 'And how do I survive one?', parent.ts);
		await stack.standin.waitFor(
			() => {
				const answers = stack
					.replies(parent.ts, channel)
					.filter((message) => message.metadata?.event_type === ANSWER_EVENT);
				return answers.length === 2 && !answers[1].streaming;
			},
			15_000,
			'the second answer',
		);
		expect(modelCalls(stack)).toBe(before + 1);
	});

	it('the job form: a field error in the ack, then a submission that runs the job', async () => {
		await stack.command('job', 'U0SMFORM', 'C0SMFORM');
		const view = await stack.standin.waitFor(
			() =>
				[...stack.standin.workspace.views.values()].find(
					(open) => open.user === 'U0SMFORM' && JSON.stringify(open.view).includes('static_select'),
				),
			10_000,
			'the job form',
		);
		const endpoint = stack.emulator.genericEndpoint;
		const values = (input: string) => ({
			[JOB_FORM.endpoint.block]: {
				[JOB_FORM.endpoint.action]: {
					type: 'static_select',
					selected_option: { value: endpoint, text: { type: 'plain_text', text: endpoint } },
				},
			},
			[JOB_FORM.input.block]: {
				[JOB_FORM.input.action]: { type: 'plain_text_input', value: input },
			},
		});
		// A view submission's ack carries its answer (accepts_response_payload): the field error.
		const refused = await stack.standin.app.submitView({
			user: 'U0SMFORM',
			viewId: view.id,
			values: values('{"prompt": '),
		});
		expect(JSON.parse(refused.body)).toEqual({
			response_action: 'errors',
			errors: { [JOB_FORM.input.block]: expect.stringMatching(/^The input is not valid JSON/) },
		});
		const accepted = await stack.standin.app.submitView({
			user: 'U0SMFORM',
			viewId: view.id,
			values: values('{"prompt": "from the form"}'),
		});
		expect(accepted).toEqual({ status: 200, body: '' });
		const parent = await stack.waitForParent(1, 'C0SMFORM');
		await stack.waitForParentText(parent.ts, /Succeeded in/, 15_000, 'C0SMFORM');
	});

	it('shortcuts: the global one opens the job form, the message one the ask form', async () => {
		const viewsOf = (user: string) =>
			[...stack.standin.workspace.views.values()].filter((open) => open.user === user);
		await stack.standin.app.globalShortcut('U0SMSHORT', SHORTCUTS.runJob);
		await stack.standin.waitFor(
			() =>
				viewsOf('U0SMSHORT').find((open) =>
					JSON.stringify(open.view).includes('conversations_select'),
				),
			10_000,
			'the job form',
		);
		const message = stack.standin.workspace.post({
			channel: 'C0SMASKME',
			user: 'U0SOMEONE',
			text: 'Deploy tonight?',
		});
		await stack.standin.app.messageShortcut('U0SMSHORT', SHORTCUTS.askAboutMessage, message);
		await stack.standin.waitFor(
			() =>
				viewsOf('U0SMSHORT').find((open) => JSON.stringify(open.view).includes('Deploy tonight?')),
			10_000,
			'the ask form',
		);
	});

	it('events: the Home tab, and an assistant thread answered once', async () => {
		await stack.standin.app.appHomeOpened(LOCAL_USER.id);
		await stack.standin.waitFor(
			() =>
				JSON.stringify(stack.standin.workspace.homes.get(LOCAL_USER.id)?.view ?? '').includes(
					'GPU job slots',
				),
			10_000,
			'the Home tab',
		);
		const before = modelCalls(stack);
		const question = assistantQuestion(stack, 'What does an interruptible GPU cost?');
		await stack.standin.app.messageEvent(question);
		await stack.standin.waitFor(
			() => finishedAnswers(stack, question.threadTs ?? ''),
			15_000,
			'the answer in the assistant thread',
		);
		await stack.app.idle();
		expect(modelCalls(stack)).toBe(before + 1);
	});
});

describe('the log', () => {
	it('carries no envelope (what people typed, Slack’s verification token) and no connection ticket, at debug level too', () => {
		const log = stack.logger.lines.join('\n');
		expect(log).toContain('envelope received');
		expect(log).not.toContain('standin-verification-token');
		expect(log).not.toContain('"envelope_id"');
		expect(log).not.toMatch(/ticket=/);
		for (const secret of stack.secrets()) expect(log).not.toContain(secret);
	});
});

describe('shutting down', () => {
	it('leaves new envelopes unacknowledged, so that Slack delivers them elsewhere', async () => {
		stack.app.refuseNewRequests();
		const parentsBefore = stack.parents(DIRECT_MESSAGE.id).length;
		const reply = await stack.standin.app.messageEvent(directMessage(stack, 'Anyone there?'));
		// No acknowledgement within Slack's 3 s.
		expect(reply.status).toBe(404);
		await stack.app.idle();
		expect(stack.parents(DIRECT_MESSAGE.id).length).toBe(parentsBefore);
	});
});
