import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { startSlackApp } from '../../slack-app/app';
import { localConfig } from '../../slack-app/local';
import { CapturingLogger, Stack } from '../slack/harness';
import { Redis } from '../support/services';

/**
 * A start that fails part way closes what its earlier steps opened before the error reaches the
 * caller: the Redis connection above all, which would otherwise keep a replica's process alive and
 * its client counted by Redis. Two failures through the real start: Slack refuses the bot token
 * (after Redis is connected), and the port is taken (after Slack and the service answered).
 */

let dir: string;
let redis: Redis;
let stack: Stack;
let observer: ReturnType<typeof createClient>;

beforeAll(async () => {
	dir = await mkdtemp(join(tmpdir(), 'gpu-cloud-failed-start-'));
	redis = await Redis.start(dir);
	stack = await Stack.start({ app: false });
	observer = createClient({ url: redis.url });
	await observer.connect();
});

afterAll(async () => {
	observer.destroy();
	await stack.close();
	await redis.stop();
	await rm(dir, { recursive: true, force: true });
});

/** Redis's clients other than the observer. */
async function appClients(): Promise<number> {
	const list = await observer.clientList();
	return list.filter((client) => !client.cmd.startsWith('client')).length;
}

function config(port: number, botToken = stack.credentials.botToken) {
	return localConfig({
		service: stack.emulator,
		slack: { standin: stack.standin, ...stack.credentials, botToken },
		port,
		webhooks: true,
		stateFile: join(dir, 'state.json'),
		env: { REDIS_URL: redis.url },
	});
}

async function busyPort(): Promise<Server> {
	const server = createServer((_, res) => res.end());
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return server;
}

it('closes the Redis connection when Slack refuses the bot token', async () => {
	const free = await busyPort();
	const port = (free.address() as AddressInfo).port;
	await new Promise((resolve) => free.close(resolve));
	await expect(
		startSlackApp({ config: config(port, 'xoxb-refused-token'), logger: new CapturingLogger() }),
	).rejects.toThrow(/invalid_auth/);
	expect(await appClients()).toBe(0);
});

it('closes the Redis connection when the port is taken', async () => {
	const taken = await busyPort();
	try {
		const port = (taken.address() as AddressInfo).port;
		await expect(
			startSlackApp({ config: config(port), logger: new CapturingLogger() }),
		).rejects.toThrow(/EADDRINUSE/);
		expect(await appClients()).toBe(0);
	} finally {
		await new Promise((resolve) => taken.close(resolve));
	}
});
