/**
 * Scenario 9: 1,000 signed slash commands at once through a round-robin proxy to three replicas of
 * the Slack app sharing Redis (the `gpu-cloud-slack` entry through tsx, test/replicas/cluster.ts),
 * against one replica behind the same proxy and Redis in the same run. The sender is slack-load's
 * child process (each command on its own open connection, timed to the first byte of the ack).
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Cluster } from '../test/replicas/cluster';
import { askChild, forkBenchChild, stopChild } from './bulk-n8n';
import { median, percentile, type Figure, type Scenario } from './lib';
import { sendReplySchema, type SendRequest } from './slack-load';

interface Run {
	ackMs: number[];
	acknowledged: number;
	parents: number;
	parentsSeconds: number;
	/** Threads showing their job's result exactly once, and more than once. */
	deliveredOnce: number;
	deliveredTwice: number;
	resultsSeconds: number;
	/** Waits that ran out of time: the timings above then measure the timeout, not the app. */
	timedOut: number;
}

async function burst(
	replicas: number,
	commands: number,
	users: number,
	sender: Awaited<ReturnType<typeof forkBenchChild>>,
): Promise<Run> {
	const cluster = await Cluster.start({
		replicas,
		redis: true,
		// The service's own limit (240 requests/min) would measure the service, not the replicas.
		emulator: { jobDurationMs: 2000, rateLimitPerMinute: false },
		env: { SLACK_MAX_JOBS_PER_USER: '100', SLACK_POLL_INTERVAL_MS: '5000', LOG_LEVEL: 'warn' },
	});
	const { stack } = cluster;
	const channel = 'C0REPLBENCH';
	try {
		const endpoint = stack.emulator.genericEndpoint;
		const bodies = Array.from({ length: commands }, (_, i) =>
			stack.standin.app.slashCommandBody({
				user: `U0RB${String(i % users).padStart(3, '0')}`,
				channel,
				text: `job ${endpoint} {"n": ${i}}`,
			}),
		);
		const started = performance.now();
		const sent = await askChild(
			sender,
			{
				url: `${cluster.proxy.url}/slack/events`,
				signingSecret: stack.credentials.signingSecret,
				bodies,
			} satisfies SendRequest,
			sendReplySchema,
		);
		// A miss is counted (and reported as a check not met) rather than ending the whole run.
		let timedOut = 0;
		const recordMiss = () => {
			timedOut++;
		};
		await stack.standin
			.waitFor(() => stack.parents(channel).length >= commands, 180_000, `${commands} parents`)
			.catch(recordMiss);
		const parentsSeconds = (performance.now() - started) / 1000;
		const parents = stack.parents(channel);
		await stack.standin
			.waitFor(
				() => parents.every((parent) => stack.replies(parent.ts, channel).length > 0),
				240_000,
				'every result',
			)
			.catch(recordMiss);
		const resultsSeconds = (performance.now() - started) / 1000;
		const posts = parents.map((parent) => stack.replies(parent.ts, channel).length);
		return {
			ackMs: sent.ms,
			acknowledged: sent.statuses.filter((status) => status === 200).length,
			parents: parents.length,
			parentsSeconds,
			deliveredOnce: posts.filter((count) => count === 1).length,
			deliveredTwice: posts.filter((count) => count > 1).length,
			resultsSeconds,
			timedOut,
		};
	} finally {
		await cluster.close();
	}
}

export const slackReplicas: Scenario = async ({ smoke, runs }) => {
	const commands = smoke ? 20 : 1000;
	const users = smoke ? 2 : 20;
	const one: Run[] = [];
	const three: Run[] = [];
	const sender = await forkBenchChild(join(__dirname, 'slack-load.ts'));
	try {
		for (let run = 0; run < runs; run++) {
			one.push(await burst(1, commands, users, sender));
			three.push(await burst(3, commands, users, sender));
		}
	} finally {
		await stopChild(sender);
	}
	const figures = (label: string, results: Run[]): Figure[] => [
		{
			name: `${label}: ack latency p50`,
			unit: 'ms',
			samples: results.map((r) => median(r.ackMs)),
			better: 'lower',
		},
		{
			name: `${label}: ack latency p99`,
			unit: 'ms',
			samples: results.map((r) => percentile(r.ackMs, 99)),
			better: 'lower',
		},
		{
			name: `${label}: every parent posted after`,
			unit: 's',
			samples: results.map((r) => r.parentsSeconds),
			better: 'lower',
		},
		{
			name: `${label}: every result posted after`,
			unit: 's',
			samples: results.map((r) => r.resultsSeconds),
			better: 'lower',
		},
	];
	const sum = (results: Run[], pick: (r: Run) => number) =>
		results.reduce((total, r) => total + pick(r), 0);
	return {
		title: '10. Slack replicas',
		description:
			`${commands} signed \`/gpu job\` commands sent at once (${users} users, limit 100 each), each on its own open connection, to a round-robin proxy in front of 3 replicas of the app sharing Redis (Debian's redis-server), then to 1 replica behind the same proxy and Redis, in the same run. ` +
			`Replicas run the production entry (\`gpu-cloud-slack\`, through tsx) with job completion by webhook through the proxy; jobs take 2 s; the emulator's rate limit is off (the service's 240 requests/min would measure the service). ` +
			`Everything (sender, proxy, replicas, Redis, stand-in, emulator) shares the machine's cores.`,
		figures: [...figures('1 replica', one), ...figures('3 replicas', three)],
		comparisons: [
			{ subject: '3 replicas: ack latency p99', baseline: '1 replica: ack latency p99' },
		],
		checks: [
			{
				label: 'waits timed out, 1 replica, all runs',
				value: sum(one, (r) => r.timedOut),
				unit: 'waits',
				op: '<=',
				target: 0,
			},
			{
				label: 'waits timed out, 3 replicas, all runs',
				value: sum(three, (r) => r.timedOut),
				unit: 'waits',
				op: '<=',
				target: 0,
			},
			{
				label: 'commands acknowledged, 3 replicas, all runs',
				value: sum(three, (r) => r.acknowledged),
				unit: 'commands',
				op: '>=',
				target: commands * runs,
			},
			{
				label: 'parents posted, 3 replicas, all runs',
				value: sum(three, (r) => r.parents),
				unit: 'messages',
				op: '>=',
				target: commands * runs,
			},
			{
				label: 'results posted exactly once, 3 replicas, all runs',
				value: sum(three, (r) => r.deliveredOnce),
				unit: 'threads',
				op: '>=',
				target: commands * runs,
			},
			{
				label: 'results posted more than once, 1 replica, all runs',
				value: sum(one, (r) => r.deliveredTwice),
				unit: 'threads',
				op: '<=',
				target: 0,
			},
			{
				label: 'results posted more than once, 3 replicas, all runs',
				value: sum(three, (r) => r.deliveredTwice),
				unit: 'threads',
				op: '<=',
				target: 0,
			},
			{
				label: 'results posted exactly once, 1 replica, all runs',
				value: sum(one, (r) => r.deliveredOnce),
				unit: 'threads',
				op: '>=',
				target: commands * runs,
			},
		],
	};
};
