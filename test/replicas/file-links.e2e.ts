import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LogLevel } from '@slack/bolt';
import { startSlackApp, type RunningSlackApp } from '../../slack-app/app';
import { TRANSCRIPTION_ENDPOINT } from '../../shared/schemas';
import { BOT } from '../../slack-standin/workspace';
import { CapturingLogger, CHANNEL, Stack, USER } from '../slack/harness';
import { wavBytes } from '../support/media-server';
import { freePort } from '../../slack-app/local';
import { Redis } from '../support/services';

/**
 * A shared file's link made on one replica is served by another: the load balancer sends GPU
 * Cloud's download wherever it likes, and the link's record is in Redis. Once the job has ended,
 * the other replica refuses it too.
 */

let dir: string;
let redis: Redis;
let stack: Stack;
let second: RunningSlackApp;

beforeAll(async () => {
	dir = await mkdtemp(join(tmpdir(), 'gpu-cloud-file-links-'));
	redis = await Redis.start(dir);
	stack = await Stack.start({
		webhooks: true,
		env: { REDIS_URL: redis.url },
		emulator: { jobDurationMs: 3000 },
	});
	const port = await freePort();
	second = await startSlackApp({
		config: {
			...stack.config,
			slack: { ...stack.config.slack, port },
			stateFile: join(dir, 'second.json'),
		},
		logger: new CapturingLogger(),
		logLevel: LogLevel.DEBUG,
	});
});

afterAll(async () => {
	await second?.stop();
	await stack?.close();
	await redis?.stop();
	await rm(dir, { recursive: true, force: true });
});

it('serves the link from the replica that did not make it, until the job ends', async () => {
	const wav = wavBytes(2);
	const { message } = stack.standin.workspace.shareFile({
		user: USER,
		channel: CHANNEL,
		name: 'all-hands.wav',
		content: wav,
	});
	await stack.standin.app.messageShortcut(
		USER,
		'gpu.transcribe_file',
		message,
		stack.standin.filesOf(message),
	);
	const job = await stack.standin.waitFor(
		() =>
			stack.emulator
				.jobsOf(stack.emulator.organization)
				.find((candidate) => candidate.inference_endpoint_name === TRANSCRIPTION_ENDPOINT),
		10_000,
		'the transcription job',
	);
	const link = new URL(String((job.input as { url?: unknown }).url));
	const elsewhere = `${second.localUrl}${link.pathname}`;
	const served = await fetch(elsewhere);
	expect(served.status).toBe(200);
	expect(Buffer.from(await served.arrayBuffer()).equals(wav)).toBe(true);

	const parent = await stack.standin.waitFor(
		() => stack.replies(message.ts).find((reply) => reply.user === BOT.userId),
		10_000,
		'the request in the thread',
	);
	await stack.waitForParentText(parent.ts, /succeeded|Succeeded|:white_check_mark:/, 20_000);
	await stack.app.idle();
	expect((await fetch(elsewhere)).status).toBe(404);
	expect((await fetch(link)).status).toBe(404);
});
