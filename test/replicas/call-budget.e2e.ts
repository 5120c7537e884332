import { content } from '../slack/harness';
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
		for (const replica of cluster.replicas)
			console.log(
				`--- replica on ${replica.port}:\n${replica.output
					.split('\n')
					.filter((line) => /"level":"(warn|error)"/.test(line))
					.slice(-30)
					.join('\n')}`,
			);
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
