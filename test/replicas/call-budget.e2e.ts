import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { webApi } from '@slack/bolt';
import { createClient } from 'redis';
import { localSlackCredentials } from '../../slack-app/local';
import { slackClientOptions } from '../../slack-app/slack/slack-client';
import { RedisSharedState } from '../../slack-app/state/shared-state';
import { systemClock } from '../../shared/runtime';
import { startStandin } from '../../slack-standin';
import { CapturingLogger, content } from '../slack/harness';
import { eventually } from '../support/eventually';
import { Redis } from '../support/services';
import { overLimits } from '../slack/over-limits';
import { Cluster } from './cluster';
import { whileRedisRefuses } from './redis-refusing';

/**
 * Two replicas sharing Redis, behind a round-robin proxy, on the stand-in at Slack's own limits:
 * a burst of jobs from one channel, whose parents and results all go into that channel. Each
 * replica alone keeps to one post a second there; together they keep to it only if they share one
 * budget (one post a second each would be two a second, which Slack answers with 429).
 */

const CHANNEL = 'C0BUDGET';
const JOBS = 12;

jest.setTimeout(180_000);

it('two replicas posting into one channel share its budget: Slack refuses none of their calls, every result posted once', async () => {
	const cluster = await Cluster.start({
		replicas: 2,
		redis: true,
		emulator: { jobDurationMs: 3000 },
		env: { SLACK_POLL_INTERVAL_MS: '2000', LOG_LEVEL: 'info' },
	});
	const { stack } = cluster;
	try {
		const users = Array.from({ length: JOBS }, (_, n) => `U0BUDGET${n}`);
		const replies = await Promise.all(
			users.map((user, n) =>
				stack.command(`transcribe https://files.example/budget-${n}.mp3`, user, CHANNEL),
			),
		);
		expect(replies.map((reply) => reply.status)).toEqual(users.map(() => 200));

		const jobIdOf = (ts: string) =>
			/Job `([0-9a-f-]{36})`/.exec(content(stack.standin.workspace.find(CHANNEL, ts)))?.[1];
		const resultKeys = (ts: string) =>
			stack.replies(ts, CHANNEL).flatMap((message) => {
				const key = message.metadata?.event_payload.key;
				return typeof key === 'string' ? [key] : [];
			});
		const parents = await stack.standin.waitFor(
			() => {
				const all = stack.parents(CHANNEL);
				return all.length >= JOBS &&
					all.every(
						(parent) =>
							/Succeeded in/.test(content(stack.standin.workspace.find(CHANNEL, parent.ts))) &&
							resultKeys(parent.ts).length > 0,
					)
					? all
					: undefined;
			},
			150_000,
			'every job finished and its result posted',
		);

		expect(parents).toHaveLength(JOBS);
		for (const parent of parents)
			expect(resultKeys(parent.ts)).toEqual([`${jobIdOf(parent.ts)}:result`]);
		// Both replicas did part of the work.
		expect(cluster.proxy.served.size).toBe(2);
		const calls = stack.standin.api.calls;
		expect(calls.filter((call) => call.status === 429).map((call) => call.method)).toEqual([]);
		expect(overLimits(calls)).toEqual([]);
	} catch (error) {
		cluster.logWarnings();
		throw error;
	} finally {
		await cluster.close();
	}
});

it('while Redis does not answer for the budget, each replica counts its calls alone: a command still gets its parent', async () => {
	const cluster = await Cluster.start({ replicas: 2, redis: true, env: { LOG_LEVEL: 'info' } });
	const { stack, redis } = cluster;
	try {
		if (!redis) throw new Error('The cluster runs without Redis.');
		await whileRedisRefuses(redis.url, 'budget', async () => {
			const reply = await stack.command(
				'transcribe https://files.example/alone.mp3',
				'U0ALONE',
				CHANNEL,
			);
			expect(reply.status).toBe(200);
			await stack.waitForParent(1, CHANNEL, 20_000);
		});
	} finally {
		await cluster.close();
	}
});

it('a 429 one replica was answered holds the method for every replica until its Retry-After', async () => {
	const dir = await mkdtemp(join(tmpdir(), 'gpu-cloud-budget-'));
	const redis = await Redis.start(dir);
	const credentials = localSlackCredentials();
	const standin = await startStandin(credentials);
	// Two replicas' clients: each its own process's budget, counted in the one Redis.
	const stores = await Promise.all(
		[0, 1].map(() => RedisSharedState.connect({ url: redis.url, logger: new CapturingLogger() })),
	);
	const [first, second] = stores.map(
		(store) =>
			new webApi.WebClient(credentials.botToken, {
				...slackClientOptions(standin.apiUrl, undefined, systemClock, store.callLedger),
				logLevel: webApi.LogLevel.ERROR,
			}),
	);
	try {
		const retryAfterSeconds = 3;
		standin.api.rateLimit('chat.update', 1, retryAfterSeconds);
		const edit = (client: webApi.WebClient, ts: string) =>
			client.chat.update({ channel: 'C0HELD', ts, text: 'x' }).catch(() => undefined);
		const refused = edit(first, '1.1');
		// Once the first replica has heard the 429 (it holds the method in Redis), the second edits.
		const admin = createClient({ url: redis.url });
		await admin.connect();
		try {
			await eventually(
				'the hold in Redis',
				async () => (await admin.keys('gpu-cloud-slack:budget-held:*')).length > 0,
				{ timeoutMs: 10_000, intervalMs: 20 },
			);
		} finally {
			admin.destroy();
		}
		await Promise.all([edit(second, '2.2'), refused]);

		const [limited, ...after] = standin.api.callsOf('chat.update');
		expect(limited.status).toBe(429);
		// The other replica's edit waited for the Retry-After too: none went out before it passed.
		const earliest = Math.min(...after.map((call) => call.at));
		expect(earliest - limited.at).toBeGreaterThanOrEqual(retryAfterSeconds * 1000 - 50);
		expect(after.map((call) => call.status)).toEqual([200, 200]);
	} finally {
		await Promise.all(stores.map((store) => store.close()));
		await standin.close();
		await redis.stop();
		await rm(dir, { recursive: true, force: true });
	}
});
