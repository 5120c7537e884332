import { isTerminalStatus } from '../../shared/schemas';
import { createClient } from 'redis';
import { RedisSharedState } from '../../slack-app/state/shared-state';
import { CapturingLogger, content } from '../slack/harness';
import { eventually } from '../support/eventually';
import { Cluster, Replica } from './cluster';

/**
 * Three replicas of the Slack app behind a round-robin proxy, sharing Redis (`npm run test:replicas`;
 * needs Debian's redis-server). 50 users each send 3 transcriptions with a limit of 2 running jobs
 * each (so 100 jobs in flight and the rest refused), a few signed requests are replayed to another
 * replica, and midway one replica is SIGKILLed or Redis restarted. Every result must land in its
 * thread exactly once, no user may ever run more than 2 jobs, and no command may create two jobs.
 * Then an image and a chat answer under way on a replica that is SIGKILLed: another replica must
 * post the image once and flag the answer once, and the killed one, back, must redo neither.
 */

const CHANNEL = 'C0REPLICA';
/**
 * 20 people, 40 jobs: each parent is edited about three times (its job, running, its end), and
 * Slack's 50 edits a minute per workspace would make 50 people's 100 jobs wait minutes for their
 * edits, which is not what this test is about.
 */
const USERS = 20;
const USER_IDS = Array.from({ length: USERS }, (_, i) => `U0R${String(i).padStart(3, '0')}`);
/**
 * Each user sends their commands from a channel of their own, as a real burst comes: in one channel
 * Slack's one post a second would spread the 40 parents over most of a minute.
 */
const channelOf = (user: string): string => `C0${user}`;

/** The app's parents in every user's channel. */
function allParents(stack: Cluster['stack']) {
	return USER_IDS.flatMap((user) => stack.parents(channelOf(user)));
}
const COMMANDS_PER_USER = 3;
const LIMIT = 2;
const REPLAYS = 5;

jest.setTimeout(240_000);

type Disruption = 'kill a replica' | 'restart Redis';

/**
 * Sweeps begun by every replica, counted on Redis: each reads the recorded work twice (HGETALL of the
 * images and answers under way, then of the unfinished requests), and nothing else reads it once
 * the replicas have started. Redis counts from its own start.
 */
async function sweepsBegun(cluster: Cluster): Promise<number> {
	const url = cluster.redis?.url;
	if (!url) throw new Error('Sweeps are counted on Redis.');
	const client = createClient({ url });
	await client.connect();
	try {
		const stats = await client.sendCommand(['INFO', 'commandstats']);
		const calls = Number(/cmdstat_hgetall:calls=(\d+)/.exec(String(stats))?.[1] ?? 0);
		return Math.floor(calls / 2);
	} finally {
		client.destroy();
	}
}

/**
 * Three more sweeps by each of `replicas` (they sweep at the same interval): the last one that could
 * take over work left by a dead replica, and post it again, has run to its end.
 */
async function threeMoreSweeps(cluster: Cluster, replicas: number): Promise<void> {
	const before = await sweepsBegun(cluster);
	await eventually(
		`three more sweeps by each of ${replicas} replicas`,
		async () => (await sweepsBegun(cluster)) - before >= 3 * replicas,
		{ timeoutMs: 60_000, intervalMs: 200 },
	);
}

/** The leases held in Redis (following, delivering, work under way); none once all is done. */
async function leasesHeld(url: string): Promise<string[]> {
	const client = createClient({ url });
	await client.connect();
	try {
		return (await client.sendCommand(['KEYS', 'gpu-cloud-slack:lease:*'])) as string[];
	} finally {
		client.destroy();
	}
}

async function run(disruption: Disruption, redis = true): Promise<void> {
	const cluster = await Cluster.start({
		replicas: 3,
		redis,
		emulator: { jobDurationMs: 8000 },
		env: {
			SLACK_MAX_JOBS_PER_USER: String(LIMIT),
			SLACK_POLL_INTERVAL_MS: '2000',
			LOG_LEVEL: 'info',
		},
	});
	const { stack } = cluster;
	let maxRunning = 0;
	const sampler = setInterval(
		() => (maxRunning = Math.max(maxRunning, mostRunningPerUser(cluster))),
		100,
	);
	try {
		const users = USER_IDS;
		const sends: Promise<{ status: number }>[] = [];
		for (let round = 0; round < COMMANDS_PER_USER; round++) {
			for (const [i, user] of users.entries()) {
				const body = stack.standin.app.slashCommandBody({
					user,
					channel: channelOf(user),
					text: `transcribe https://files.example/${user}-${round}.mp3`,
				});
				const timestampSeconds = Math.floor(Date.now() / 1000);
				sends.push(
					stack.standin.app.send(body, 'application/x-www-form-urlencoded', { timestampSeconds }),
				);
				// The same signed request again: the proxy sends it to the next replica.
				if (round === 0 && i < REPLAYS)
					sends.push(
						stack.standin.app.send(body, 'application/x-www-form-urlencoded', { timestampSeconds }),
					);
			}
		}
		const statuses = (await Promise.all(sends)).map((reply) => reply.status);
		expect(statuses.filter((status) => status !== 200)).toEqual([]);

		const refusals = () =>
			users.reduce(
				(sum, user) =>
					sum + stack.ephemeralTexts(user).filter((text) => /the limit is 2/.test(text)).length,
				0,
			);
		const jobIdOf = (text: string) => /Job `([^`]+)`/.exec(text)?.[1];
		// Every command either has its parent with a job, or was refused.
		await stack.standin.waitFor(
			() => {
				const parents = allParents(stack);
				return parents.length + refusals() >= USERS * COMMANDS_PER_USER &&
					parents.every((parent) => jobIdOf(content(parent)))
					? true
					: undefined;
			},
			// Each parent is edited to show its job: 40 edits, which Slack's 50 a minute per workspace
			// (kept by the replicas together, one call budget in Redis) spread over up to a minute.
			120_000,
			'a job or a refusal for every command',
		);
		const parents = allParents(stack);
		// More jobs than commands answered: a replayed request ran twice.
		const replayedIntoJobs = parents.length + refusals() - USERS * COMMANDS_PER_USER;

		// Each replica reports Redis among what it needs (with REDIS_URL).
		const readiness = await fetch(`http://127.0.0.1:${cluster.replicas[0].port}/readyz`);
		expect(await readiness.json()).toEqual({
			status: 'ready',
			checks: { slack: 'ok', service: 'ok', ...(redis ? { store: 'ok' } : {}) },
		});

		// Midway: the jobs run, none has finished yet.
		if (disruption === 'kill a replica') {
			await cluster.replicas[1].kill('SIGKILL');
		} else {
			await cluster.redis?.stop();
			// Down while the first jobs finish: the replicas wait for it.
			// Polls what the stand-in does not announce (the service's own state).
			await eventually(
				'a job to finish',
				() =>
					parents.some((parent) =>
						isTerminalStatus(
							stack.emulator.getJob(jobIdOf(content(parent)) ?? '')?.status ?? 'pending',
						),
					),
				{ timeoutMs: 30_000, intervalMs: 100 },
			);
			// ...and while the replicas know it is down.
			await eventually(
				'a replica to report Redis down',
				async () => {
					const reply = await fetch(`http://127.0.0.1:${cluster.replicas[0].port}/readyz`);
					const body = (await reply.json()) as { checks?: { store?: string } };
					return body.checks?.store === 'failing';
				},
				{ timeoutMs: 30_000, intervalMs: 200 },
			);
			await cluster.redis?.restart();
		}

		for (const parent of parents) {
			await stack.standin.waitFor(
				// And the parent's end: under Slack's 50 edits a minute a replica's final edit may come a
				// minute after its result.
				() =>
					(stack.replies(parent.ts, parent.channel).length > 0 &&
						/Succeeded in/.test(
							content(stack.standin.workspace.find(parent.channel, parent.ts)),
						)) ||
					undefined,
				90_000,
				`the result of ${jobIdOf(content(parent))}`,
			);
		}
		// A second post could only come from a replica taking over a job whose follower died: that
		// needs the dead one's leases gone (Redis expires them), then a sweep. Wait for both.
		if (cluster.redis) {
			const url = cluster.redis.url;
			await eventually('no lease left', async () => (await leasesHeld(url)).length === 0, {
				timeoutMs: 60_000,
				intervalMs: 200,
			});
		}
		await threeMoreSweeps(cluster, disruption === 'kill a replica' ? 2 : 3);

		const posts = parents.map((parent) => stack.replies(parent.ts, parent.channel).length);
		const jobIds = parents.map((parent) => jobIdOf(content(parent)));
		// Every way the replicas could break their promises, listed together so a failure shows them all.
		const problems = [
			...(replayedIntoJobs !== 0 ? [`${replayedIntoJobs} replayed commands created jobs`] : []),
			...posts.flatMap((count, i) =>
				count === 1 ? [] : [`job ${jobIds[i]}: result posted ${count} times`],
			),
			...(new Set(jobIds).size !== parents.length ? ['two parents show the same job'] : []),
			...(stack.serviceCalls('POST', /\/jobs$/) !== parents.length
				? [`${stack.serviceCalls('POST', /\/jobs$/)} jobs created for ${parents.length} parents`]
				: []),
			...parents.flatMap((parent, i) =>
				/Succeeded in/.test(content(stack.standin.workspace.find(parent.channel, parent.ts)))
					? []
					: [`job ${jobIds[i]}: the parent does not show its end`],
			),
			...(maxRunning > LIMIT ? [`a user had ${maxRunning} jobs running (limit ${LIMIT})`] : []),
		];
		expect(problems).toEqual([]);
		expect(maxRunning).toBeGreaterThan(0);
		// The proxy spread the work over every replica.
		expect(cluster.proxy.served.size).toBe(3);
	} catch (error) {
		cluster.logWarnings();
		throw error;
	} finally {
		clearInterval(sampler);
		await cluster.close();
	}

	/** The most jobs any one user has running in the service right now. */
	function mostRunningPerUser(c: Cluster): number {
		const running = new Map<string, number>();
		for (const parent of allParents(c.stack)) {
			const id = /Job `([^`]+)`/.exec(content(parent))?.[1];
			const job = id ? c.stack.emulator.getJob(id) : undefined;
			const user = job?.metadata?.slack_user;
			if (!job || typeof user !== 'string' || isTerminalStatus(job.status)) continue;
			running.set(user, (running.get(user) ?? 0) + 1);
		}
		return Math.max(0, ...running.values());
	}
}

it('three replicas, one SIGKILLed midway: every result posted once, no user above the limit, no duplicate job', () =>
	run('kill a replica'));

it('three replicas, Redis restarted midway: they wait for it and lose nothing', () =>
	run('restart Redis'));

it('an image and an answer under way on a replica SIGKILLed: another posts the image once and flags the answer once', async () => {
	const cluster = await Cluster.start({
		replicas: 3,
		redis: true,
		env: { SLACK_POLL_INTERVAL_MS: '1000', LOG_LEVEL: 'info' },
	});
	const { stack } = cluster;
	// The test's own view of Redis, through the app's store: what the replicas recorded as under way.
	const observer = await RedisSharedState.connect({
		url: cluster.redis?.url ?? '',
		logger: new CapturingLogger(),
	});
	const underway = async () =>
		(await observer.inflightRequests())
			.map((request) => request.kind)
			.sort()
			.join();
	try {
		// Slow workloads, so the replica dies while both are under way.
		stack.emulator.setFaults({ latencyMs: 8000, surfaces: ['image', 'chat'] });
		const victim = cluster.replicas[1];
		// Straight to the victim, not through the proxy: it is the one that runs them.
		stack.standin.setAppUrl(`http://127.0.0.1:${victim.port}/slack/events`);
		expect((await stack.command('image a lighthouse at dusk', 'U0PAINT', CHANNEL)).status).toBe(
			200,
		);
		expect((await stack.command('chat What is a spot instance?', 'U0TALK', CHANNEL)).status).toBe(
			200,
		);
		stack.standin.setAppUrl(`${cluster.proxy.url}/slack/events`);
		await eventually('the image and the answer recorded as under way', async () =>
			(await underway()) === 'chat,image' ? true : undefined,
		);
		const parentAbout = (words: RegExp) => {
			const parent = stack.parents(CHANNEL).find((candidate) => words.test(content(candidate)));
			if (!parent) throw new Error(`No parent about ${words}`);
			return parent;
		};
		const [image, chat] = [parentAbout(/lighthouse/), parentAbout(/spot instance/)];
		await victim.kill('SIGKILL');
		stack.emulator.setFaults({ latencyMs: 0 });

		// Another replica takes both over once the victim's leases expire.
		await stack.waitForParentText(image.ts, /Succeeded in/, 60_000, CHANNEL);
		const files = () => stack.replies(image.ts, CHANNEL).flatMap((message) => message.fileIds);
		await stack.standin.waitFor(() => files().length > 0 || undefined, 10_000, 'the image');
		await stack.waitForParentText(chat.ts, /Interrupted/, 60_000, CHANNEL);
		const notices = () =>
			stack
				.replies(chat.ts, CHANNEL)
				.filter((message) => /The app restarted while answering/.test(content(message)));
		expect(content(notices()[0])).toContain('gpu.regenerate_chat');

		// The victim comes back with its own state file. A second post could only come from work
		// recorded as under way: wait until none is, and no lease is held, then for sweeps by all.
		cluster.replicas[1] = await Replica.start(victim.port, victim.env);
		await eventually('no work recorded as under way', async () => (await underway()) === '', {
			timeoutMs: 60_000,
			intervalMs: 200,
		});
		const url = cluster.redis?.url ?? '';
		await eventually('no lease left', async () => (await leasesHeld(url)).length === 0, {
			timeoutMs: 60_000,
			intervalMs: 200,
		});
		await threeMoreSweeps(cluster, 3);
		expect(files()).toHaveLength(1);
		expect(notices()).toHaveLength(1);
		expect(await underway()).toBe('');
		expect(stack.parents(CHANNEL)).toHaveLength(2);
	} catch (error) {
		for (const replica of cluster.replicas)
			console.log(
				`--- replica on ${replica.port}:\n${replica.output.split('\n').slice(-30).join('\n')}`,
			);
		throw error;
	} finally {
		await observer.close();
		await cluster.close();
	}
});

/** Set REPLICAS_WITHOUT_REDIS=1 to see the same run fail with each process keeping its own memory. */
if (process.env.REPLICAS_WITHOUT_REDIS === '1') {
	it('without Redis (expected to fail: replayed requests create jobs, users exceed their limit)', () =>
		run('kill a replica', false));
}
