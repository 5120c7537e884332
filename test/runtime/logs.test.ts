import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LogLevel } from '@slack/bolt';
import { startSlackApp } from '../../slack-app/app';
import { freePort, localConfig } from '../../slack-app/local';
import { JsonLogger, withLogContext } from '../../slack-app/slack/log';
import { content, Stack } from '../slack/harness';

/** The app's log: one JSON object per line, each Slack request and each job traceable by its id. */

type Line = {
	time: string;
	level: string;
	msg: string;
	request?: string;
	job?: string;
	logger?: string;
};

function capture(level = LogLevel.DEBUG, secrets: string[] = []) {
	const lines: string[] = [];
	const logger = new JsonLogger({ level, secrets, write: (line) => lines.push(line) });
	return { logger, lines, parsed: () => lines.map((line) => JSON.parse(line) as Line) };
}

describe('JsonLogger', () => {
	it('writes one JSON object per line, at or above its level, errors by name and message', () => {
		const { logger, lines, parsed } = capture(LogLevel.INFO);
		logger.debug('hidden');
		logger.info('started', { port: 3000 });
		const error = Object.assign(new TypeError('bad "input"\nsecond line'), {
			config: { headers: { authorization: 'Bearer x' } },
		});
		logger.error('failed:', error);
		expect(lines).toHaveLength(2);
		expect(lines.every((line) => !line.includes('\n'))).toBe(true);
		expect(parsed()).toEqual([
			{
				time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
				level: 'info',
				msg: 'started {"port":3000}',
			},
			{
				time: expect.any(String),
				level: 'error',
				msg: 'failed: TypeError: bad "input"\nsecond line',
			},
		]);
		expect(lines.join()).not.toContain('Bearer');
		logger.setLevel(LogLevel.DEBUG);
		logger.setName('bolt-app');
		logger.debug('now shown');
		expect(parsed()[2]).toMatchObject({ level: 'debug', logger: 'bolt-app', msg: 'now shown' });
	});

	it('carries the request and job ids of the context into every line, through timers and promises', async () => {
		const { logger, parsed } = capture();
		await withLogContext({ request: 'r1' }, async () => {
			logger.info('in the request');
			await new Promise((resolve) => setTimeout(resolve, 5));
			await withLogContext({ job: 'j1' }, async () => logger.info('in its job'));
			logger.info('back in the request');
		});
		logger.info('outside');
		expect(parsed().map(({ msg, request, job }) => ({ msg, request, job }))).toEqual([
			{ msg: 'in the request', request: 'r1', job: undefined },
			{ msg: 'in its job', request: 'r1', job: 'j1' },
			{ msg: 'back in the request', request: 'r1', job: undefined },
			{ msg: 'outside', request: undefined, job: undefined },
		]);
	});

	it('never writes a configured secret, whatever passes it', () => {
		const { logger, lines } = capture(LogLevel.DEBUG, ['xoxb-secret-token-value', 'short']);
		logger.debug('token=xoxb-secret-token-value in a library line', {
			token: 'xoxb-secret-token-value',
		});
		expect(lines[0]).not.toContain('xoxb-secret-token-value');
		expect(lines[0]).toContain('[redacted]');
	});
});

it('each Slack request gets its own id on every line it causes, and each job its job id', async () => {
	const stack = await Stack.start({ app: false, emulator: { jobDurationMs: 300 } });
	const { logger, parsed } = capture();
	const port = await freePort();
	const dir = await mkdtemp(join(tmpdir(), 'gpu-slack-logs-'));
	const config = localConfig({
		service: stack.emulator,
		slack: { standin: stack.standin, ...stack.credentials },
		port,
		webhooks: true,
		stateFile: join(dir, 'state.json'),
		env: { SLACK_POLL_INTERVAL_MS: '600000' },
	});
	const app = await startSlackApp({ config, logger, logLevel: LogLevel.DEBUG });
	try {
		stack.standin.setAppUrl(app.eventsUrl ?? '');
		await stack.command('transcribe https://files.example/log.mp3', 'U0LOG1', 'C0LOGS');
		await stack.command('image a red fox', 'U0LOG2', 'C0LOGS');
		const [job, image] = await stack.standin.waitFor(
			() => (stack.parents('C0LOGS').length === 2 ? stack.parents('C0LOGS') : undefined),
			10_000,
			'two parents',
		);
		await stack.waitForParentText(job.ts, /Succeeded in/, 15_000, 'C0LOGS');
		await stack.waitForParentText(image.ts, /Succeeded in/, 15_000, 'C0LOGS');
		await app.idle();
	} finally {
		await app.stop();
		await stack.close();
	}
	const lines = parsed();
	const received = lines.filter((line) => line.msg.startsWith('/gpu command received'));
	expect(received.map((line) => line.msg)).toEqual([
		'/gpu command received from U0LOG1 in C0LOGS',
		'/gpu command received from U0LOG2 in C0LOGS',
	]);
	const [first, second] = received.map((line) => line.request ?? '');
	expect(first).toMatch(/^[0-9a-f]{12}$/);
	expect(second).not.toBe(first);
	// The Web API calls each request made (debug lines from Bolt's client) carry its id.
	for (const id of [first, second])
		expect(
			lines.filter((line) => line.request === id && line.msg !== received[0].msg).length,
		).toBeGreaterThan(1);
	// The job's lines (its status edits, its delivery after the webhook) carry the job id.
	const jobId = lines.find((line) => line.job)?.job ?? '';
	expect(jobId).toMatch(/^[0-9a-f-]{36}$/);
	expect(content(stack.parents('C0LOGS')[0])).toContain(jobId);
	const webhookLines = lines.filter(
		(line) => line.job === jobId && line.request !== undefined && line.request !== first,
	);
	expect(webhookLines.length).toBeGreaterThan(0);
	for (const secret of stack.secrets()) expect(JSON.stringify(lines)).not.toContain(secret);
}, 60_000);
