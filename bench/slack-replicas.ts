/**
 * Scenario 10: 1,000 signed slash commands at once through Debian's nginx balancing round robin over
 * three replicas of the Slack app sharing Redis (the build's `gpu-cloud-slack` bin under plain node,
 * as deployed), against one replica behind the same nginx and Redis, and against the floor (a bare
 * Node server that only checks the signature, bench/floor-server.ts) in the same run; then 100
 * commands a second for 60 s across three replicas; then one more burst to one replica under
 * `--cpu-prof`, whose profile is summarised in the notes. Every part has a process of its own
 * (test/replicas/cluster.ts, ProcessCluster): the replicas, nginx, the Slack stand-in, the service
 * emulator, Redis, and the sender (slack-load's child: each command on its own open connection,
 * timed to the first byte of the ack). What Slack shows is read from the stand-in's process.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { z } from 'zod/v4';
import { LIMITS } from '../shared/schemas';
import { freePort, localSlackCredentials } from '../slack-app/local';
import { ProcessCluster } from '../test/replicas/cluster';
import { type EmulatorStats, type SlackLimits } from '../test/replicas/parts';
import { cpuSeconds } from '../test/support/proc';
import { Nginx } from '../test/support/services';
import { askChild, forkBenchChild, stopChild } from './bulk-n8n';
import { CpuBudget } from './cpu-budget';
import { describeProfile, monotonicUs, summariseProfile, type Window } from './cpu-profile';
import { floorReplySchema } from './floor-server';
import { median, percentile, type Figure, type Scenario, type ScenarioResult } from './lib';
import { sendReplySchema, type SendRequest } from './slack-load';

/** A burst's ack p99 target: Slack gives up at 3 s, and a busy host must leave room. */
const ACK_P99_TARGET_MS = 1000;
/** The sustained rate's ack p99 target (slack-load's). */
const SUSTAINED_P99_TARGET_MS = 200;
const SUSTAINED_PER_SECOND = 100;
const SUSTAINED_SECONDS = 60;
/** The sustained run's jobs are paced by the service's budget (minutes): its results are counted after this. */
const SUSTAINED_RESULTS_WAIT_MS = 120_000;
const ROOT = join(__dirname, '..');
const JOB_MS = 2000;
const PARENTS_WAIT_MS = 180_000;
/**
 * Jobs each replica runs before the burst, so that every code path has run in each; and commands
 * each first answers, so that each is as warm as a replica that has served a day's commands (V8
 * compiles what has run often: one replica given 1,000 commands is otherwise warmer by the end than
 * three given a third each). `/gpu help` costs nothing of the service's rate budget.
 */
const WARM_UP_JOBS_PER_REPLICA = 3;
const WARM_UP_COMMANDS_PER_REPLICA = 400;
/** Each replica's CPU budget where replicas have cores of their own (half a core: three fit beside the rest). */
const BUDGET_CORES_EACH = 0.5;
/** Bursts per configuration and run whose acks are timed (the first of the shared cores' also waits for every result). */
const ACK_BURSTS = 3;

/**
 * Slack's limits per workspace (the stand-in enforces them): each job's parent is edited about three
 * times (its job id, running, its end) and its thread read once before the result, and chat.update
 * and conversations.replies are Tier 3, 50 a minute. A thousand jobs take an hour of Slack's.
 */
const SLACK_TIER_3_PER_MINUTE = 50;
const EDITS_PER_JOB = 3;

/**
 * The replicas share one API key, which the emulator limits like the service (240 requests in any
 * 60 s), and each replica's client paces itself to it: a thousand creates take over four minutes
 * however many replicas send them. Slack's limits pace the edits and reads of the workspace (see
 * above). The wait allows half as long as the slower of the two again, plus a minute.
 */
function resultsWaitMs(commands: number): number {
	const minutes = Math.max(
		commands / LIMITS.rateLimitPerMinute,
		(commands * EDITS_PER_JOB) / SLACK_TIER_3_PER_MINUTE,
	);
	return Math.ceil(minutes * 1.5 * 60_000) + 60_000;
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
	/** Requests nginx passed to each replica. */
	served: number[];
	/** The replicas' warnings and errors, by message with ids and numbers left out. */
	problems: Map<string, number>;
	/** CPU seconds each part used from the first command sent to the last ack. */
	cpu: CpuShare;
	/** The commands sent (the floor is sent the same). */
	bodies: string[];
	/** From the first command sent to the end of the waits, on the monotonic clock. */
	window: Window;
	/** From the first command sent to the last ack. */
	acksWindow: Window;
	/** The calls Slack refused with 429, and carried out beyond a limit, from the stand-in's record. */
	slack: SlackLimits;
}

type CpuShare = Record<string, number>;
type Check = ScenarioResult['checks'][number];

async function redisPid(url: string): Promise<number> {
	const admin = createClient({ url });
	await admin.connect();
	try {
		return Number(
			/process_id:(\d+)/.exec(String(await admin.sendCommand(['INFO', 'server'])))?.[1],
		);
	} finally {
		await admin.quit();
	}
}

/** Reads every part's CPU time now; the returned function gives each part's use since. */
async function cpuMeter(pids: Record<string, Array<number | undefined>>) {
	const read = async () => {
		const now: CpuShare = {};
		for (const [part, ids] of Object.entries(pids))
			now[part] = (
				await Promise.all(ids.map((pid) => (pid === undefined ? 0 : cpuSeconds(pid))))
			).reduce((a, b) => a + b, 0);
		return now;
	};
	const before = await read();
	return async (): Promise<CpuShare> => {
		const after = await read();
		return Object.fromEntries(Object.keys(after).map((part) => [part, after[part] - before[part]]));
	};
}

function describeCpu(cpu: CpuShare): string {
	return Object.entries(cpu)
		.map(([part, seconds]) => `${part} ${seconds.toFixed(2)} s`)
		.join(', ');
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

type Sender = Awaited<ReturnType<typeof forkBenchChild>>;

interface BurstOptions {
	replicas: number;
	commands: number;
	users: number;
	/** Sent at this rate rather than all at once. */
	perSecond?: number;
	/** The service's limit per key; false for the sustained rate, whose jobs would wait minutes. */
	rateLimitPerMinute?: number | false;
	/** Node flags of the replicas (`--cpu-prof`). */
	nodeArgs?: string[];
	/** Only the acks and the parents: the replicas are then stopped (SIGTERM, a profile is written). */
	acksOnly?: boolean;
	/** Each replica's CPU budget in cores (a container's CPU limit); none shares the machine's cores. */
	coresEach?: number;
}

export async function burst(sender: Sender, options: BurstOptions): Promise<Run> {
	const { replicas, commands, users } = options;
	const cluster = await ProcessCluster.start({
		replicas,
		compiled: { nodeArgs: options.nodeArgs },
		emulator: {
			jobDurationMs: JOB_MS,
			rateLimitPerMinute: options.rateLimitPerMinute ?? LIMITS.rateLimitPerMinute,
		},
		env: { SLACK_MAX_JOBS_PER_USER: '100', SLACK_POLL_INTERVAL_MS: '5000', LOG_LEVEL: 'warn' },
	});
	const { standin } = cluster;
	// A real burst comes from many people in many channels: each user posts in a channel of their
	// own, so Slack's one post a second per channel is not the whole burst's.
	const channels = Array.from({ length: users }, (_, n) => `C0RB${String(n).padStart(3, '0')}`);
	const channel = channels;
	const budgets: CpuBudget[] = [];
	try {
		const { coresEach } = options;
		if (coresEach !== undefined)
			for (const [index, replica] of cluster.replicas.entries()) {
				const budget = await CpuBudget.create(`replica-${index}`, coresEach);
				budgets.push(budget);
				if (replica.child.pid === undefined) throw new Error(`Replica ${index} has no process`);
				await budget.add(replica.child.pid);
			}
		const endpoint = cluster.emulator.service.genericEndpoint;
		const send = (bodies: string[], perSecond?: number) =>
			askChild(
				sender,
				{
					url: `${cluster.proxy.url}/slack/events`,
					signingSecret: standin.slack.signingSecret,
					bodies,
					perSecond,
				} satisfies SendRequest,
				sendReplySchema,
			);
		// Round robin gives each replica its share: every code path (ack, parent, create, webhook,
		// result) has run in each before the burst.
		await send(
			await standin.commandBodies({
				channel: 'C0WARM',
				commands: Array.from({ length: replicas * WARM_UP_COMMANDS_PER_REPLICA }, () => ({
					user: 'U0WARM',
					text: 'help',
				})),
			}),
		);
		const warmUp = replicas * WARM_UP_JOBS_PER_REPLICA;
		// Each job from a channel of its own: in one, Slack's one post a second would pace the warm-up.
		const warmUpChannels = Array.from({ length: warmUp }, (_, i) => `C0WARM${i}`);
		await send(
			await standin.commandBodies({
				channel: 'C0WARM',
				commands: warmUpChannels.map((channel, i) => ({
					user: 'U0WARM',
					channel,
					text: `job ${endpoint} {"warm": ${i}}`,
				})),
			}),
		);
		const warmed = await standin.waitFor({
			channel: warmUpChannels,
			until: 'results',
			count: warmUp,
			timeoutMs: 60_000,
		});
		if (warmed.timedOut) throw new Error('The warm-up commands got no results within 60 s');
		const bodies = await standin.commandBodies({
			channel: channels[0],
			commands: Array.from({ length: commands }, (_, i) => ({
				user: `U0RB${String(i % users).padStart(3, '0')}`,
				channel: channels[i % users],
				text: `job ${endpoint} {"n": ${i}}`,
			})),
		});
		const cpuSince = await cpuMeter({
			sender: [sender.pid],
			nginx: await cluster.proxy.nginx.pids(),
			replicas: cluster.replicas.map((replica) => replica.child.pid),
			Redis: [await redisPid(cluster.redis.url)],
			'Slack stand-in': [cluster.standin.part.child.pid],
			emulator: [cluster.emulator.part.child.pid],
		});
		const started = Date.now();
		const startedUs = monotonicUs();
		const sent = await send(bodies, options.perSecond);
		const acksWindow = { fromUs: startedUs, toUs: monotonicUs() };
		const cpu = await cpuSince();
		// A wait that runs out is counted (and reported as a check not met) rather than ending the run.
		const parentsWait = await standin.waitFor({
			channel,
			until: 'parents',
			count: commands,
			timeoutMs: PARENTS_WAIT_MS,
		});
		const resultsWait = options.acksOnly
			? parentsWait
			: await standin.waitFor({
					channel,
					until: 'results',
					count: commands,
					timeoutMs:
						options.rateLimitPerMinute === false
							? SUSTAINED_RESULTS_WAIT_MS
							: resultsWaitMs(commands),
				});
		const window = { fromUs: startedUs, toUs: monotonicUs() };
		const threads = await standin.threads(channel);
		// A replica writes its profile as it exits, which SIGTERM lets it do.
		if (options.acksOnly)
			await Promise.all(cluster.replicas.map((replica) => replica.kill('SIGTERM')));
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
			served: [...(await cluster.proxy.nginx.served()).values()],
			problems: problems(cluster.replicas.map((replica) => replica.output)),
			cpu,
			bodies,
			window,
			acksWindow,
			slack: await cluster.standin.limits(),
		};
	} finally {
		await cluster.close();
		await Promise.all(budgets.map((budget) => budget.remove()));
	}
}

/** The floor's servers in its CPU figures, where the replicas' figures say "replicas". */
const BARE_SERVERS = 'bare servers';

/**
 * The floor: the same signed commands, from the same sender through the same nginx balancing round
 * robin, to as many bare Node servers as there are replicas, each checking each signature and
 * answering 200.
 */
export async function floor(
	sender: Sender,
	signingSecret: string,
	bodies: string[],
	servers: number,
): Promise<{ ackMs: number[]; acknowledged: number; cpu: CpuShare }> {
	const children = await Promise.all(
		Array.from({ length: servers }, () => forkBenchChild(join(__dirname, 'floor-server.ts'))),
	);
	try {
		const ports: number[] = [];
		for (const child of children)
			ports.push((await askChild(child, { signingSecret }, floorReplySchema)).port);
		const sendTo = (url: string, some: string[]) =>
			askChild(sender, { url, signingSecret, bodies: some } satisfies SendRequest, sendReplySchema);
		const dir = await mkdtemp(join(tmpdir(), 'gpu-cloud-floor-'));
		const proxyPort = await freePort();
		const proxy = await Nginx.balance(join(dir, 'nginx'), proxyPort, ports);
		try {
			const url = `http://127.0.0.1:${proxyPort}/slack/events`;
			// Warmed up as the replicas are: round robin gives each its share.
			for (let server = 0; server < servers; server++)
				await sendTo(url, bodies.slice(0, WARM_UP_COMMANDS_PER_REPLICA));
			const cpuSince = await cpuMeter({
				sender: [sender.pid],
				nginx: await proxy.pids(),
				[BARE_SERVERS]: children.map((child) => child.pid),
			});
			const sent = await sendTo(url, bodies);
			return {
				ackMs: sent.ms,
				acknowledged: sent.statuses.filter((status) => status === 200).length,
				cpu: await cpuSince(),
			};
		} finally {
			await proxy.stop();
			await rm(dir, { recursive: true, force: true });
		}
	} finally {
		await Promise.all(children.map(stopChild));
	}
}

/** One more burst to one replica under `--cpu-prof`: its profile, grouped. */
async function profiled(sender: Sender, commands: number, users: number): Promise<string> {
	const dir = await mkdtemp(join(tmpdir(), 'gpu-cloud-replica-profile-'));
	try {
		const run = await burst(sender, {
			replicas: 1,
			commands,
			users,
			nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
			acksOnly: true,
		});
		const [file] = (await readdir(dir)).filter((name) => name.endsWith('.cpuprofile'));
		if (!file) return 'the profiled replica wrote no profile';
		const path = join(dir, file);
		const seconds = (window: Window) => ((window.toUs - window.fromUs) / 1e6).toFixed(1);
		return `ack p50 ${median(run.ackMs).toFixed(0)} ms, p99 ${percentile(run.ackMs, 99).toFixed(0)} ms under the profiler. The replica from the first command sent to the last ack (${seconds(run.acksWindow)} s): ${describeProfile(await summariseProfile(path, run.acksWindow))}. From the first command sent to the last of ${commands} parents posted (${seconds(run.window)} s): ${describeProfile(await summariseProfile(path, run.window))}`;
	} finally {
		await rm(dir, { recursive: true, force: true });
	}
}

/** The replicas run the build: compiled here, so that it is the source being measured. */
function build(): void {
	execFileSync(
		process.execPath,
		[require.resolve('typescript/bin/tsc'), '-p', join(ROOT, 'slack-app', 'tsconfig.build.json')],
		{ cwd: ROOT, stdio: 'inherit' },
	);
}

/** The replicas run on this Node (process.execPath): the one the app is deployed on, `.nvmrc`'s. */
async function requireDeployedNode(): Promise<void> {
	const deployed = (await readFile(join(ROOT, '.nvmrc'), 'utf8')).trim();
	if (process.versions.node.split('.')[0] !== deployed)
		throw new Error(
			`Scenario 10 measures the app on the Node it is deployed on (.nvmrc: ${deployed}); this is Node ${process.versions.node}. Put Node ${deployed} first on PATH.`,
		);
}

/** The ack latency p50 and p99 of each burst (or run) of `label`. */
function ackFigures(label: string, bursts: Array<{ ackMs: number[] }>): Figure[] {
	return [
		{
			name: `${label}: ack latency p50`,
			unit: 'ms',
			samples: bursts.map((burst) => median(burst.ackMs)),
			better: 'lower',
		},
		{
			name: `${label}: ack latency p99`,
			unit: 'ms',
			samples: bursts.map((burst) => percentile(burst.ackMs, 99)),
			better: 'lower',
		},
	];
}

/** `pick` of every run (or burst), added up. */
function sum<T>(runs: T[], pick: (run: T) => number): number {
	return runs.reduce((total, run) => total + pick(run), 0);
}

/** Every command of `runs` acknowledged within the p99 target and shown as a parent. */
function ackChecks(
	label: string,
	runs: Run[],
	commandsEach: number,
	p99TargetMs: number,
	each: 'burst' | 'run',
): Check[] {
	return [
		{
			label: `${label}: commands acknowledged, all ${each}s`,
			value: sum(runs, (run) => run.acknowledged),
			unit: 'commands',
			op: '>=',
			target: commandsEach * runs.length,
		},
		{
			label: `${label}: ack latency p99 (worst ${each})`,
			value: Math.max(...runs.map((run) => percentile(run.ackMs, 99))),
			unit: 'ms',
			op: '<',
			target: p99TargetMs,
		},
		{
			label: `${label}: parents posted, all ${each}s`,
			value: sum(runs, (run) => run.parents),
			unit: 'messages',
			op: '>=',
			target: commandsEach * runs.length,
		},
	];
}

/**
 * The replicas kept to Slack's limits together (one call budget in Redis): Slack refused none of
 * their calls with 429 and carried out none of a method's beyond its tier (the stand-in's record).
 */
function slackLimitChecks(label: string, runs: Run[]): Check[] {
	return [
		{
			label: `${label}: calls Slack refused with 429, all runs`,
			value: sum(runs, (run) => Object.values(run.slack.refused).reduce((a, b) => a + b, 0)),
			unit: 'calls',
			op: '<=',
			target: 0,
		},
		{
			label: `${label}: methods (or channels) over their limit in some window, all runs`,
			value: sum(runs, (run) => run.slack.over.length),
			unit: 'methods',
			op: '<=',
			target: 0,
		},
	];
}

export const slackReplicas: Scenario = async ({ smoke, runs }) => {
	// A smoke run only proves the scenario still runs, on whatever Node the tests run, and gives the
	// replicas a CPU budget where the machine lets it.
	const budgetsUnavailable = await CpuBudget.unavailable();
	if (!smoke) {
		await requireDeployedNode();
		if (budgetsUnavailable)
			throw new Error(`Scenario 10 gives replicas a CPU budget each: ${budgetsUnavailable}.`);
	}
	const commands = smoke ? 10 : 1000;
	// A real burst: many people, a few commands each, each in a channel of their own (Slack's one post
	// a second per channel spreads 4 parents over 2 s, where 50 each from 20 people took 50 s).
	const users = smoke ? 2 : 250;
	const sustainedPerSecond = smoke ? 10 : SUSTAINED_PER_SECOND;
	const sustainedSeconds = smoke ? 2 : SUSTAINED_SECONDS;
	const sustainedCommands = sustainedPerSecond * sustainedSeconds;
	build();
	// Each configuration's bursts (acks and parents), and those of them that also waited for every result.
	const configuration = (label: string, replicas: number) => ({
		label,
		replicas,
		bursts: [] as Run[],
		full: [] as Run[],
	});
	const configurations = [configuration('1 replica', 1), configuration('3 replicas', 3)];
	// Replicas as a deployment runs them, each with cores of its own: half a core each, so that three
	// fit beside the sender, nginx and the stand-in. Acks and parents only (the key's budget paces the
	// results however many replicas there are).
	const budgeted = budgetsUnavailable
		? []
		: [
				configuration('1 replica, half a core', 1),
				configuration('3 replicas, half a core each', 3),
			];
	const ackBursts = smoke ? 1 : ACK_BURSTS;
	// As many bare servers as replicas: what the machine gives one process and three on its cores.
	const floors = [1, 3].map((servers) => ({
		label: `floor, ${servers} bare server${servers > 1 ? 's' : ''}`,
		servers,
		bursts: [] as Array<Awaited<ReturnType<typeof floor>>>,
	}));
	const sustained: Run[] = [];
	const sender = await forkBenchChild(join(__dirname, 'slack-load.ts'));
	let profile: string;
	try {
		for (let run = 0; run < runs; run++) {
			for (const { replicas, bursts, full } of configurations) {
				const withResults = await burst(sender, { replicas, commands, users });
				bursts.push(withResults);
				full.push(withResults);
			}
			// One burst's p99 is its 10 slowest acks, which a moment of the machine's can decide:
			// each configuration's ack figures are the median of several bursts, taken in turn with
			// the floors' (the 1-replica burst's commands again, signed anew by the sender).
			for (let more = 0; more < ackBursts; more++) {
				if (more > 0)
					for (const { replicas, bursts } of configurations)
						bursts.push(await burst(sender, { replicas, commands, users, acksOnly: true }));
				for (const { servers, bursts } of floors)
					bursts.push(
						await floor(
							sender,
							localSlackCredentials().signingSecret,
							configurations[0].full[run].bodies,
							servers,
						),
					);
			}
			for (let more = 0; more < ackBursts; more++)
				for (const { replicas, bursts } of budgeted)
					bursts.push(
						await burst(sender, {
							replicas,
							commands,
							users,
							acksOnly: true,
							coresEach: BUDGET_CORES_EACH,
						}),
					);
			sustained.push(
				await burst(sender, {
					replicas: 3,
					commands: sustainedCommands,
					// Many people, a few commands each from their own channel (as the burst); each user's limit
					// (100 at a time) is never what refuses a command here.
					users: Math.ceil(sustainedCommands / 5),
					perSecond: sustainedPerSecond,
					rateLimitPerMinute: false,
				}),
			);
		}
		profile = await profiled(sender, commands, users);
	} finally {
		await stopChild(sender);
	}
	/** Acks and parents; the results too unless the runs stopped at the parents. */
	const figures = ({ label, bursts, full }: (typeof configurations)[number]): Figure[] => [
		...ackFigures(label, bursts),
		{
			name: `${label}: every parent posted after`,
			unit: 's',
			samples: bursts.map((r) => r.parentsSeconds),
			better: 'lower',
		},
		...(full.length
			? [
					{
						name: `${label}: every result posted after`,
						unit: 's',
						samples: full.map((r) => r.resultsSeconds),
						better: 'lower' as const,
					},
				]
			: []),
	];
	const checks = ({ label, bursts, full }: (typeof configurations)[number]): Check[] => [
		...ackChecks(label, bursts, commands, ACK_P99_TARGET_MS, 'burst'),
		...(full.length
			? ([
					{
						label: `${label}: results posted exactly once, all runs`,
						value: sum(full, (r) => r.deliveredOnce),
						unit: 'threads',
						op: '>=',
						target: commands * full.length,
					},
					{
						label: `${label}: results posted more than once, all runs`,
						value: sum(full, (r) => r.deliveredTwice),
						unit: 'threads',
						op: '<=',
						target: 0,
					},
					...slackLimitChecks(label, full),
					{
						label: `${label}: waits timed out, all runs`,
						value: sum(full, (r) => r.timedOut),
						unit: 'waits',
						op: '<=',
						target: 0,
					},
				] as const)
			: []),
	];
	const servedNote = (results: Run[]) =>
		results.map((r) => r.served.join('/')).join(', ') || 'none';
	const emulatorNote = ({
		label,
		full: results,
	}: Pick<(typeof configurations)[number], 'label' | 'full'>) =>
		`${label}, all runs: the service answered ${sum(results, (r) => r.emulator.answered429)} creates and reads with 429 (each waited out and retried by the client); ${sum(results, (r) => r.emulator.deliveriesFailed)} of ${sum(results, (r) => r.emulator.deliveryAttempts)} webhook delivery attempts failed, ${sum(results, (r) => r.emulator.deliveriesAbandoned)} deliveries gave up after their last attempt (left to polling); requests per replica through nginx: ${servedNote(results)}.`;
	const slackNote = ({
		label,
		full: results,
	}: Pick<(typeof configurations)[number], 'label' | 'full'>) => {
		const refused = new Map<string, number>();
		for (const run of results)
			for (const [method, count] of Object.entries(run.slack.refused))
				refused.set(method, (refused.get(method) ?? 0) + count);
		const over = results.flatMap((run) => run.slack.over);
		return `${label}, all runs: Slack (the stand-in) answered ${refused.size ? [...refused].map(([method, count]) => `${count} × 429 to ${method}`).join(', ') : 'no call with 429'}${over.length ? `; over a limit: ${over.join('; ')}` : ''}.`;
	};
	const problemsNote = ({
		label,
		full: results,
	}: Pick<(typeof configurations)[number], 'label' | 'full'>) => {
		const counts = new Map<string, number>();
		for (const run of results)
			for (const [kind, count] of run.problems) counts.set(kind, (counts.get(kind) ?? 0) + count);
		const top = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 4);
		return `${label}, all runs: the replicas logged ${[...counts.values()].reduce((a, b) => a + b, 0)} warnings and errors${top.length ? `; most often: ${top.map(([kind, count]) => `${count} × "${kind}"`).join('; ')}` : ''}.`;
	};
	const sustainedLabel = `sustained ${sustainedPerSecond}/s for ${sustainedSeconds} s, 3 replicas`;
	const extraFigures: Figure[] = [
		...floors.flatMap(({ label, bursts }) => ackFigures(label, bursts)),
		...ackFigures(sustainedLabel, sustained),
		{
			name: `${sustainedLabel}: results posted (once) within the wait`,
			unit: 'threads',
			samples: sustained.map((r) => r.deliveredOnce),
			better: 'higher',
		},
	];
	const sustainedChecks = [
		...ackChecks(sustainedLabel, sustained, sustainedCommands, SUSTAINED_P99_TARGET_MS, 'run'),
		{
			label: `${sustainedLabel}: results posted more than once, all runs`,
			value: sum(sustained, (r) => r.deliveredTwice),
			unit: 'threads',
			op: '<=',
			target: 0,
		},
		...slackLimitChecks(sustainedLabel, sustained),
		...floors.map(({ label, bursts }) => ({
			label: `${label}: commands acknowledged, all bursts`,
			value: sum(bursts, (f) => f.acknowledged),
			unit: 'commands',
			op: '>=' as const,
			target: commands * bursts.length,
		})),
	] as const;
	const cpuNote = (label: string, shares: CpuShare[], part = 'replicas') =>
		`${label}, CPU used from the first command sent to the last ack (first burst): ${shares[0] ? describeCpu(shares[0]) : 'none'}` +
		(shares.length > 1
			? `; the ${part} in each burst: ${shares.map((share) => (share[part] ?? 0).toFixed(2)).join(', ')} s.`
			: '.');
	const [one, three] = configurations;
	return {
		title: '10. Slack replicas',
		description:
			`${commands} signed \`/gpu job\` commands sent at once (${users} users, limit 100 each), each on its own open connection, to Debian's nginx balancing round robin over 1 replica of the app, then over 3 replicas sharing Redis (Debian's redis-server), in the same run. ` +
			`Replicas run the production entry as deployed (the build's \`gpu-cloud-slack\` bin, \`slack-app/dist\`, compiled by the scenario first, under plain node, on the Node of \`.nvmrc\`) with job completion by webhook through nginx (polling every 5 s as the safety net); jobs take ${JOB_MS / 1000} s. ` +
			`The replicas share one API key, which the emulator limits to ${LIMITS.rateLimitPerMinute} requests/min like the service, and each replica's client paces itself to that limit: creating ${commands} jobs takes at least ${((commands / LIMITS.rateLimitPerMinute) * 60).toFixed(0)} s with any number of replicas, and Slack's limits, which the stand-in enforces by default and the replicas keep to together (one budget of Slack calls per workspace, counted in Redis), allow the workspace 50 \`chat.update\` and 50 \`conversations.replies\` a minute (Tier 3) and one post a second per channel (the burst comes from ${users} users, each in a channel of their own): about ${EDITS_PER_JOB} edits a job make ${commands} jobs' results take ${((commands * EDITS_PER_JOB) / SLACK_TIER_3_PER_MINUTE).toFixed(0)} min of Slack's, so "every result posted after" is how long the last result took to appear under Slack's limits, and the results wait is sized from the slower of the two (${resultsWaitMs(commands) / 1000} s). ` +
			`Every part runs in a process of its own (the sender, nginx with one worker, each replica, Redis, the Slack stand-in, the emulator), all sharing the machine's cores; results are counted from the stand-in's process. Ack latency is timed by the sender, from writing a command to the first byte of the reply; a burst's p99 is its ${commands / 100} slowest acks, which a moment of the machine's can decide, so each configuration is sent ${ackBursts} bursts per run, taken in turn with the other configurations (the first of each on the shared cores also waits for every result), and its ack and parent figures are their median with the spread. Each replica is warmed up first as a replica that has served a day's commands: ${WARM_UP_COMMANDS_PER_REPLICA} \`/gpu help\` commands, then ${WARM_UP_JOBS_PER_REPLICA} jobs answered in full. ` +
			`Then the same bursts (acks and parents) with each replica given half a core of its own, as a container's CPU limit gives a replica of a deployment (\`limits.cpu: 500m\`, \`--cpus 0.5\`, systemd's \`CPUQuota=50%\`: the kernel's CFS quota in a cpu cgroup per replica; 1.5 cores for three, the rest of the machine for the sender, nginx, Redis and the stand-in): on the shared cores above, three processes are given no cores that one does not have, so they can only share them, each waking for a third of the requests and keeping its own heap and compiled code; a deployment runs replicas to add cores. ` +
			`The floor is bare Node HTTP servers (bench/floor-server.ts: no Bolt, no app, the app's accept queue), 1 and then 3 behind the same nginx, each checking each request's signature and answering 200, warmed up with as many requests, then sent the 1-replica burst's commands by the same sender, as many bursts as each configuration, in turn with them: the fastest acks this machine allows one process and three on its cores. ` +
			`Sustained: ${sustainedPerSecond} commands a second for ${sustainedSeconds} s (${sustainedCommands} in all, each on a connection opened as it is sent) to 3 replicas, the emulator without its rate limit; each replica's client still paces itself to the key's ${LIMITS.rateLimitPerMinute}/min, so creating ${sustainedCommands} jobs takes ${(sustainedCommands / (3 * LIMITS.rateLimitPerMinute)).toFixed(1)} min: every parent is waited for (${PARENTS_WAIT_MS / 1000} s), the results for ${SUSTAINED_RESULTS_WAIT_MS / 1000} s, and those posted by then are counted, none of them twice.`,
		figures: [...configurations.flatMap(figures), ...budgeted.flatMap(figures), ...extraFigures],
		comparisons: [
			{
				subject: '3 replicas: ack latency p99',
				baseline: '1 replica: ack latency p99',
				target: { op: '<=', value: 1 },
			},
			...(budgeted.length
				? [
						{
							subject: `${budgeted[1].label}: ack latency p99`,
							baseline: `${budgeted[0].label}: ack latency p99`,
							target: { op: '<=' as const, value: 1 },
						},
						{
							subject: `${budgeted[1].label}: every parent posted after`,
							baseline: `${budgeted[0].label}: every parent posted after`,
						},
					]
				: []),
			{
				subject: `${floors[1].label}: ack latency p99`,
				baseline: `${floors[0].label}: ack latency p99`,
			},
			{ subject: '1 replica: ack latency p99', baseline: `${floors[0].label}: ack latency p99` },
			{ subject: '3 replicas: ack latency p99', baseline: `${floors[1].label}: ack latency p99` },
			{
				subject: '3 replicas: every parent posted after',
				baseline: '1 replica: every parent posted after',
			},
		],
		checks: [...configurations.flatMap(checks), ...budgeted.flatMap(checks), ...sustainedChecks],
		notes: [
			...[...configurations, ...budgeted].map(({ label, bursts }) =>
				cpuNote(
					label,
					bursts.map((r) => r.cpu),
				),
			),
			...floors.map(({ label, bursts }) =>
				cpuNote(
					label,
					bursts.map((f) => f.cpu),
					BARE_SERVERS,
				),
			),
			cpuNote(
				sustainedLabel,
				sustained.map((r) => r.cpu),
			),
			`CPU profile of 1 replica (\`node --cpu-prof\`, self time grouped by bench/cpu-profile.ts) in a burst of ${commands} run for it after the others: ${profile}.`,
			emulatorNote(one),
			slackNote(one),
			problemsNote(one),
			emulatorNote(three),
			slackNote(three),
			problemsNote(three),
			emulatorNote({ label: sustainedLabel, full: sustained }),
			slackNote({ label: sustainedLabel, full: sustained }),
			problemsNote({ label: sustainedLabel, full: sustained }),
		],
	};
};
