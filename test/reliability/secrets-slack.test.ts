import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LogLevel } from '@slack/bolt';
import { signWebhook } from '../../shared/webhooks';
import { startSlackApp } from '../../slack-app/app';
import { freePort, localConfig, type LocalService } from '../../slack-app/local';
import { JsonLogger } from '../../slack-app/slack/log';
import { slackSignature } from '../../slack-standin';
import { content, Stack } from '../slack/harness';
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
 * A representative run of the Slack app, failures included (a key the service refuses, at start and
 * per command; 5xx until the retries run out; forged Slack requests; forged, stale and unsigned
 * webhooks), with distinctive secrets. Nothing it produces (messages, ephemerals, files, modals, Web
 * API call parameters, both apps' log lines, console and stdout/stderr, HTTP replies, request bodies
 * sent to the service) may contain the API keys, the signing secret, the bot token or the webhook
 * secret in any encoding.
 */

const CHANNEL = 'C0SECRETS';

it('no API key, signing secret, bot token or webhook secret appears anywhere the app writes', async () => {
	const capture = captureOutput();
	const stack = await Stack.start({
		webhooks: true,
		env: { SLACK_POLL_INTERVAL_MS: '600000', SLACK_MAX_JOBS_PER_USER: '10' },
		emulator: {
			apiKey: API_KEY,
			webhookSecret: WEBHOOK_SECRET,
			workloadAuth: true,
			jobDurationMs: 300,
			webhookRetryDelaysMs: [100],
		},
	});
	// The production logger (JSON lines), without its redaction net: what the app itself writes.
	const wrongLines: string[] = [];
	const wrongLogger = new JsonLogger({
		level: LogLevel.DEBUG,
		write: (line) => wrongLines.push(line),
	});
	const texts: string[] = [];
	try {
		// Successes: a transcription reported by webhook, a queue, an image and a chat answer.
		await stack.command('transcribe https://files.example/a.mp3 --summary 10', 'U0ONE', CHANNEL);
		await stack.command('queue render-jobs --display-name Render jobs', 'U0TWO', CHANNEL);
		await stack.command('image a red fox', 'U0THREE', CHANNEL);
		await stack.command('chat hello there', 'U0FOUR', CHANNEL);
		await stack.standin.waitFor(
			() => (stack.parents(CHANNEL).length === 4 ? true : undefined),
			10_000,
			'four requests',
		);
		for (const parent of stack.parents(CHANNEL)) {
			await stack.standin.waitFor(
				() => stack.replies(parent.ts, CHANNEL).length > 0,
				15_000,
				`a reply to ${content(parent).slice(0, 40)}`,
			);
		}
		await stack.waitForParentText(stack.parents(CHANNEL)[0].ts, /Succeeded in/, 15_000, CHANNEL);
		// What only the service can refuse: an unknown endpoint.
		await stack.command('job no-such-endpoint {}', 'U0FIVE', CHANNEL);
		await stack.waitForEphemeral(/no endpoint/, 'U0FIVE');

		// Forged Slack requests and forged, stale, unsigned or broken webhooks: refused, and logged.
		const body = stack.standin.app.slashCommandBody({
			user: 'U0EVE',
			channel: CHANNEL,
			text: 'help',
		});
		const timestamp = Math.floor(Date.now() / 1000);
		const forgeries: Array<[string | null, number]> = [
			[null, timestamp],
			[slackSignature('not-the-secret', timestamp, body), timestamp],
			[slackSignature(stack.credentials.signingSecret, timestamp - 600, body), timestamp - 600],
		];
		for (const [signature, timestampSeconds] of forgeries) {
			const reply = await stack.standin.app.send(body, 'application/x-www-form-urlencoded', {
				signature,
				timestampSeconds,
			});
			texts.push(`${reply.status} ${reply.body}`);
		}
		const webhookPath = new URL(stack.app.localWebhookUrl ?? '').pathname;
		const origin = new URL(stack.app.localWebhookUrl ?? '').origin;
		const report = JSON.stringify({
			type: 'inference_endpoint.job.succeeded',
			timestamp: new Date().toISOString(),
			data: { id: 'x' },
		});
		const now = Date.now() / 1000;
		for (const headers of [
			{},
			signWebhook(Buffer.from('not the secret').toString('base64'), report, {
				timestampSeconds: now,
			}).headers,
			signWebhook(WEBHOOK_SECRET, report, { timestampSeconds: now - 600 }).headers,
			signWebhook(WEBHOOK_SECRET, report, { timestampSeconds: now }).headers,
			signWebhook(WEBHOOK_SECRET, '{"broken', { timestampSeconds: now }).headers,
		]) {
			const reply = await send(origin, {
				path: webhookPath,
				headers: { 'content-type': 'application/json', ...headers },
				body: report,
			});
			texts.push(`${reply.status} ${reply.body}`);
		}

		// 5xx until the retries run out.
		stack.emulator.setFaults({ errorRate: 1, surfaces: ['management'] });
		await stack.command('status 3f2a9c1e-8b4d-4e6f-9a0b-1c2d3e4f5a6b', 'U0SIX', CHANNEL);
		await stack.waitForEphemeral(/Reading the job failed/, 'U0SIX', 20_000);
		stack.emulator.setFaults({ errorRate: 0 });
		await stack.app.idle();

		// The same app with a key the service refuses: at start (reading the webhook secret), then per command.
		const service: LocalService = {
			...stack.emulator,
			apiKey: WRONG_API_KEY,
			webhookSecret: undefined,
		};
		const dir = await mkdtemp(join(tmpdir(), 'gpu-slack-secrets-'));
		const slack = { standin: stack.standin, ...stack.credentials };
		const refusedAtStart = await startSlackApp({
			config: localConfig({
				service,
				slack,
				port: await freePort(),
				webhooks: true,
				stateFile: join(dir, 'a.json'),
			}),
			logger: wrongLogger,
			logLevel: LogLevel.DEBUG,
		}).then(
			() => 'started',
			(error: unknown) =>
				error instanceof Error ? `${error.message}\n${error.stack}` : String(error),
		);
		expect(refusedAtStart).toMatch(/401/);
		texts.push(refusedAtStart);
		const wrong = await startSlackApp({
			config: localConfig({
				service,
				slack,
				port: await freePort(),
				webhooks: false,
				stateFile: join(dir, 'b.json'),
				env: { SLACK_POLL_INTERVAL_MS: '200' },
			}),
			logger: wrongLogger,
			logLevel: LogLevel.DEBUG,
		});
		try {
			stack.standin.setAppUrl(wrong.eventsUrl ?? '');
			await stack.command('transcribe https://files.example/b.mp3', 'U0WRONG1', 'C0WRONGKEY');
			await stack.command('image a blue fox', 'U0WRONG2', 'C0WRONGKEY');
			await stack.command('chat hello', 'U0WRONG3', 'C0WRONGKEY');
			await stack.command('endpoints', 'U0WRONG4', 'C0WRONGKEY');
			await stack.waitForEphemeral(/failed/, 'U0WRONG4');
			// Readiness with a refused key: 503, and the reason in the log.
			for (const path of ['/readyz', '/healthz']) {
				const reply = await fetch(new URL(path, wrong.eventsUrl));
				texts.push(`${reply.status} ${await reply.text()}`);
			}
			await stack.standin.waitFor(
				() => (stack.parents('C0WRONGKEY').length === 3 ? true : undefined),
				10_000,
				'three requests',
			);
			for (const parent of stack.parents('C0WRONGKEY'))
				await stack.standin.waitFor(
					() => stack.replies(parent.ts, 'C0WRONGKEY').length > 0,
					10_000,
					'the error in the thread',
				);
			await wrong.idle();
		} finally {
			await wrong.stop();
			stack.standin.setAppUrl(stack.app.eventsUrl ?? '');
		}
		await stack.app.idle();
	} finally {
		capture.stop();
		await stack.close();
	}

	const { workspace, api } = stack.standin;
	texts.push(
		...workspace.messages.map(
			(message) => `${content(message)} ${JSON.stringify(message.metadata ?? {})}`,
		),
		...workspace.ephemerals.map(
			(message) => `${message.text} ${JSON.stringify(message.blocks ?? [])}`,
		),
		...[...workspace.files.values()].map(
			(file) => `${file.name} ${file.title} ${file.content?.toString('latin1') ?? ''}`,
		),
		...[...workspace.views.values()].map((view) => JSON.stringify(view)),
		// What the app sent Slack, except the token presented to Slack itself (Bolt's auth.test passes it as a parameter).
		...api.calls.map(({ params: { token: _token, ...params }, ...call }) =>
			JSON.stringify({ ...call, params }),
		),
		...stack.logger.lines,
		...wrongLines,
		...capture.lines,
		...stack.emulator.requests.map((request) => request.body ?? ''),
	);
	// The capture holds the failures it is meant to check.
	const corpus = texts.join('\n');
	for (const expected of [
		'did not accept the API key',
		'Readiness: service check failed',
		'503 {"status":"not ready"',
		'Refused a webhook',
		'invalid signature',
		'Succeeded in',
		'no endpoint',
		'Reading the job failed',
	]) {
		expect(corpus).toContain(expected);
	}
	const secrets = secretForms(
		{
			'API key': API_KEY,
			'wrong API key': WRONG_API_KEY,
			'bot token': stack.credentials.botToken,
			'signing secret': stack.credentials.signingSecret,
		},
		WEBHOOK_SECRET,
	);
	expect(leaks(texts, secrets)).toEqual([]);
}, 60_000);
