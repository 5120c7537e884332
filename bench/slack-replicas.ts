/**
 * Scenario 10: 1,000 signed slash commands at once through a round-robin proxy to three replicas
 * of the Slack app sharing Redis (the `gpu-cloud-slack` entry through tsx), against one replica
 * behind the same proxy and Redis in the same run. Every part has a process of its own
 * (test/replicas/cluster.ts, ProcessCluster): the replicas, the proxy, the Slack stand-in, the
 * service emulator, Redis, and the sender (slack-load's child: each command on its own open
 * connection, timed to the first byte of the ack). What Slack shows is read from the stand-in's
 * process.
 */
import { join } from 'node:path';
import { z } from 'zod/v4';
import { LIMITS } from '../shared/schemas';
import { ProcessCluster } from '../test/replicas/cluster';
import type { EmulatorStats } from '../test/replicas/parts';
import { askChild, forkBenchChild, stopChild } from './bulk-n8n';
import { median, percentile, type Figure, type Scenario } from './lib';
import { sendReplySchema, type SendRequest } from './slack-load';

/** slack-load's target for the ack, which Slack wants within 3 s. */
const ACK_P99_TARGET_MS = 200;
const JOB_MS = 2000;
const PARENTS_WAIT_MS = 180_000;
/** Commands each replica serves before the burst, as a running app has served commands before. */
const WARM_UP_PER_REPLICA = 3;

/**
 * The replicas share one API key, which the emulator limits like the service (240 requests in any
 * 60 s), and each replica's client paces itself to it: a thousand creates take over four minutes
 * however many replicas send them. The wait allows half as long again, plus a minute.
 */
function resultsWaitMs(commands: number): number {
	return Math.ceil((commands / LIMITS.rateLimitPerMinute) * 1.5 * 60_000) + 60_000;
}

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
	emulator: EmulatorStats;
	/** Requests the proxy passed to each replica. */
	served: number[];
	/** The replicas' warnings and errors, by message with ids and numbers left out. */
	problems: Map<string, number>;
}

const logLineSchema = z.object({ level: z.string(), msg: z.string() });

/** A log line as "level: message", or the raw output when it is not one of the app's JSON lines. */
function logMessage(line: string): string {
	try {
		const parsed = logLineSchema.safeParse(JSON.parse(line));
		if (parsed.success) return `${parsed.data.level}: ${parsed.data.msg}`;
	} catch {
		// Not JSON: printed by something else (tsx, Node).
	}
	return `output: ${line.slice(0, 200)}`;
}

/** Counts the replicas' log lines (LOG_LEVEL is warn) by message, ids and numbers left out. */
function problems(outputs: string[]): Map<string, number> {
	const counts = new Map<string, number>();
	for (const line of outputs.join('\n').split('\n')) {
		if (!line.trim()) continue;
		const kind = logMessage(line)
			.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '…')
			.replace(/\d+/g, 'N');
		counts.set(kind, (counts.get(kind) ?? 0) + 1);
	}
	return counts;
}

async function burst(
	replicas: number,
	commands: number,
	users: number,
	sender: Awaited<ReturnType<typeof forkBenchChild>>,
): Promise<Run> {
	const cluster = await ProcessCluster.start({
		replicas,
		emulator: { jobDurationMs: JOB_MS, rateLimitPerMinute: LIMITS.rateLimitPerMinute },
		env: { SLACK_MAX_JOBS_PER_USER: '100', SLACK_POLL_INTERVAL_MS: '5000', LOG_LEVEL: 'warn' },
	});
	const { standin } = cluster;
	const channel = 'C0REPLBENCH';
	try {
		const endpoint = cluster.emulator.service.genericEndpoint;
		const send = (bodies: string[]) =>
			askChild(
				sender,
				{
					url: `${cluster.proxy.url}/slack/events`,
					signingSecret: standin.slack.signingSecret,
					bodies,
				} satisfies SendRequest,
				sendReplySchema,
			);
		// Round robin gives each replica its share: every code path (ack, parent, create, webhook,
		// result) has run in each before the burst.
		const warmUp = replicas * WARM_UP_PER_REPLICA;
		await send(
			await standin.commandBodies({
				channel: 'C0WARM',
				commands: Array.from({ length: warmUp }, (_, i) => ({
					user: 'U0WARM',
					text: `job ${endpoint} {"warm": ${i}}`,
				})),
			}),
		);
		const warmed = await standin.waitFor({
			channel: 'C0WARM',
			until: 'results',
			count: warmUp,
			timeoutMs: 60_000,
		});
		if (warmed.timedOut) throw new Error('The warm-up commands got no results within 60 s');
		const bodies = await standin.commandBodies({
			channel,
			commands: Array.from({ length: commands }, (_, i) => ({
				user: `U0RB${String(i % users).padStart(3, '0')}`,
				text: `job ${endpoint} {"n": ${i}}`,
			})),
		});
		const started = Date.now();
		const sent = await send(bodies);
		// A wait that runs out is counted (and reported as a check not met) rather than ending the run.
		const parentsWait = await standin.waitFor({
			channel,
			until: 'parents',
			count: commands,
			timeoutMs: PARENTS_WAIT_MS,
		});
		const resultsWait = await standin.waitFor({
			channel,
			until: 'results',
			count: commands,
			timeoutMs: resultsWaitMs(commands),
		});
		const threads = await standin.threads(channel);
		return {
			ackMs: sent.ms,
			acknowledged: sent.statuses.filter((status) => status === 200).length,
			parents: threads.replies.length,
			parentsSeconds: (parentsWait.at - started) / 1000,
			deliveredOnce: threads.replies.filter((count) => count === 1).length,
			deliveredTwice: threads.replies.filter((count) => count > 1).length,
			resultsSeconds: (resultsWait.at - started) / 1000,
			timedOut: [parentsWait, resultsWait].filter((wait) => wait.timedOut).length,
			emulator: await cluster.emulator.stats(),
			served: [...(await cluster.proxy.served()).values()],
			problems: problems(cluster.replicas.map((replica) => replica.output)),
		};
	} finally {
		await cluster.close();
	}
}

export const slackReplicas: Scenario = async ({ smoke, runs }) => {
	const commands = smoke ? 20 : 1000;
	const users = smoke ? 2 : 20;
	const configurations = [
		{ label: '1 replica', replicas: 1, results: [] as Run[] },
		{ label: '3 replicas', replicas: 3, results: [] as Run[] },
	];
	const sender = await forkBenchChild(join(__dirname, 'slack-load.ts'));
	try {
		for (let run = 0; run < runs; run++)
			for (const configuration of configurations)
				configuration.results.push(await burst(configuration.replicas, commands, users, sender));
	} finally {
		await stopChild(sender);
	}
	const sum = (results: Run[], pick: (r: Run) => number) =>
		results.reduce((total, r) => total + pick(r), 0);
	const figures = ({ label, results }: (typeof configurations)[number]): Figure[] => [
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
	const checks = ({ label, results }: (typeof configurations)[number]) =>
		[
			{
				label: `${label}: commands acknowledged, all runs`,
				value: sum(results, (r) => r.acknowledged),
				unit: 'commands',
				op: '>=',
				target: commands * runs,
			},
			{
				label: `${label}: ack latency p99 (worst run; slack-load's target)`,
				value: Math.max(...results.map((r) => percentile(r.ackMs, 99))),
				unit: 'ms',
				op: '<',
				target: ACK_P99_TARGET_MS,
			},
			{
				label: `${label}: parents posted, all runs`,
				value: sum(results, (r) => r.parents),
				unit: 'messages',
				op: '>=',
				target: commands * runs,
			},
			{
				label: `${label}: results posted exactly once, all runs`,
				value: sum(results, (r) => r.deliveredOnce),
				unit: 'threads',
				op: '>=',
				target: commands * runs,
			},
			{
				label: `${label}: results posted more than once, all runs`,
				value: sum(results, (r) => r.deliveredTwice),
				unit: 'threads',
				op: '<=',
				target: 0,
			},
			{
				label: `${label}: waits timed out, all runs`,
				value: sum(results, (r) => r.timedOut),
				unit: 'waits',
				op: '<=',
				target: 0,
			},
		] as const;
	const servedNote = (results: Run[]) =>
		results.map((r) => r.served.join('/')).join(', ') || 'none';
	const emulatorNote = ({ label, results }: (typeof configurations)[number]) =>
		`${label}, all runs: the service answered ${sum(results, (r) => r.emulator.answered429)} creates and reads with 429 (each waited out and retried by the client); ${sum(results, (r) => r.emulator.deliveriesFailed)} of ${sum(results, (r) => r.emulator.deliveryAttempts)} webhook delivery attempts failed, ${sum(results, (r) => r.emulator.deliveriesAbandoned)} deliveries gave up after their last attempt (left to polling); requests per replica through the proxy: ${servedNote(results)}.`;
	const problemsNote = ({ label, results }: (typeof configurations)[number]) => {
		const counts = new Map<string, number>();
		for (const run of results)
			for (const [kind, count] of run.problems) counts.set(kind, (counts.get(kind) ?? 0) + count);
		const top = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 4);
		return `${label}, all runs: the replicas logged ${[...counts.values()].reduce((a, b) => a + b, 0)} warnings and errors${top.length ? `; most often: ${top.map(([kind, count]) => `${count} × "${kind}"`).join('; ')}` : ''}.`;
	};
	const [one, three] = configurations;
	return {
		title: '10. Slack replicas',
		description:
			`${commands} signed \`/gpu job\` commands sent at once (${users} users, limit 100 each), each on its own open connection, to a round-robin proxy in front of 1 replica of the app, then of 3 replicas sharing Redis (Debian's redis-server), in the same run. ` +
			`Replicas run the production entry (\`gpu-cloud-slack\`, through tsx) with job completion by webhook through the proxy (polling every 5 s as the safety net); jobs take ${JOB_MS / 1000} s. ` +
			`The replicas share one API key, which the emulator limits to ${LIMITS.rateLimitPerMinute} requests/min like the service, and each replica's client paces itself to that limit: creating ${commands} jobs takes at least ${((commands / LIMITS.rateLimitPerMinute) * 60).toFixed(0)} s with any number of replicas, so "every result posted after" measures the key's budget, and the results wait is sized from it (${resultsWaitMs(commands) / 1000} s). ` +
			`Every part runs in a process of its own (the sender, the proxy, each replica, Redis, the Slack stand-in, the emulator), all sharing the machine's cores; results are counted from the stand-in's process. Ack latency is timed by the sender, from writing a command to the first byte of the reply; ${WARM_UP_PER_REPLICA} commands per replica, answered in full, warm the replicas up first.`,
		figures: configurations.flatMap(figures),
		comparisons: [
			{ subject: '3 replicas: ack latency p99', baseline: '1 replica: ack latency p99' },
			{
				subject: '3 replicas: every parent posted after',
				baseline: '1 replica: every parent posted after',
			},
		],
		checks: configurations.flatMap(checks).map((check) => ({ ...check })),
		notes: [emulatorNote(one), problemsNote(one), emulatorNote(three), problemsNote(three)],
	};
};
