import { isTerminalStatus } from '../../shared/schemas';
import { freePort } from '../../slack-app/local';
import { content, Stack } from '../slack/harness';
import { kill, startAppProcess, type AppProcess } from './slack-process';
import { eventually } from '../support/eventually';
import { PausableClock } from '../support/pausable-clock';

/**
 * Restarts at scale: the real entry point killed with SIGKILL while 50 jobs run, then started again.
 * Completion comes by the service's webhook to the app, so jobs that end while the app is dead have
 * their deliveries refused (connection refused, retried, given up) and must be found again by the
 * restarted app; the others are reported to the new process. Every result lands once.
 */

const JOBS = 50;
const USERS = 10;
/**
 * The burst comes from ten people in ten channels, as real bursts do: in one channel Slack's one
 * post a second would spread the 50 parents over most of a minute, longer than the jobs run.
 */
const CHANNELS = Array.from({ length: USERS }, (_, n) => `C0FIFTY${n}`);
const channelOf = (n: number): string => CHANNELS[n % USERS];

interface Parent {
	channel: string;
	ts: string;
}

/** The app's parents in every channel of the test. */
function allParents(stack: Stack): Parent[] {
	return CHANNELS.flatMap((channel) =>
		stack.parents(channel).map((message) => ({ channel, ts: message.ts })),
	);
}

/** What a parent shows now. */
function shown(stack: Stack, parent: Parent): string {
	return content(stack.standin.workspace.find(parent.channel, parent.ts));
}
/** The service's delivery attempts: the first, then one after each pause. */
const RETRY_DELAYS_MS = [300, 600, 1200];

/**
 * Jobs run 6-10 s, spread by their number, counted from the kill (the emulator's clock stands still
 * until then), so many end while the app is down; the clock stands still again while the app starts,
 * so the rest end after the restarted app listens, however slowly the machine runs either.
 */
function duration(_endpoint: string, input: unknown): number {
	const n = Number(/\/r(\d+)\.mp3/.exec(JSON.stringify(input))?.[1] ?? 0);
	return n % 10 === 9 ? 15_000 : 6000 + (n % 10) * 500;
}

function jobIdOf(text: string): string | undefined {
	return /Job `([0-9a-f-]{36})`/.exec(text)?.[1];
}

/** The exactly-once keys of the results posted in a thread (a message key or a file name each). */
function resultKeys(stack: Stack, parent: Parent): string[] {
	return stack.replies(parent.ts, parent.channel).flatMap((message) => {
		const key = message.metadata?.event_payload.key;
		const files = message.fileIds.map((id) => stack.standin.workspace.files.get(id)?.name ?? id);
		return [...(typeof key === 'string' ? [key] : []), ...files];
	});
}

it(`SIGKILL with ${JOBS} jobs in flight: after the restart every result is in its thread exactly once`, async () => {
	const jobsClock = new PausableClock({ held: true });
	const stack = await Stack.start({
		app: false,
		emulator: { jobDurationMs: duration, webhookRetryDelaysMs: RETRY_DELAYS_MS, clock: jobsClock },
		// Raised tenfold: the restarted process's budget knows nothing of the 50 edits the killed one
		// made within Slack's minute, and under Slack's own limits its start would wait that minute out
		// (Retry-After). This test is about restarts; rate-limits.test.ts holds the app to Slack's.
		rateLimits: { factor: 10 },
	});
	const port = await freePort();
	const env = {
		SLACK_PUBLIC_URL: `http://127.0.0.1:${port}`,
		SLACK_MAX_JOBS_PER_USER: String(JOBS / USERS),
		// Completion by webhook (or by the look at start-up); status polling kept out of the way.
		SLACK_POLL_INTERVAL_MS: '600000',
	};
	const runs: AppProcess[] = [];
	try {
		runs.push(await startAppProcess(stack, port, env));
		stack.standin.setAppUrl(`http://127.0.0.1:${port}/slack/events`);

		const commands = Array.from({ length: JOBS }, (_, n) =>
			stack.command(
				`transcribe https://files.example/r${n}.mp3`,
				`U0FIFTY${n % USERS}`,
				channelOf(n),
			),
		);
		for (const reply of await Promise.all(commands)) expect(reply.status).toBe(200);
		const parents = await stack.standin.waitFor(
			() => {
				const all = allParents(stack);
				return all.length === JOBS && all.every((parent) => jobIdOf(shown(stack, parent)))
					? all
					: undefined;
			},
			// The jobs stand still meanwhile, so a slow machine only makes this wait longer.
			60_000,
			`${JOBS} running jobs`,
		);
		const jobIds = parents.map((parent) => jobIdOf(shown(stack, parent)) ?? '');

		await kill(runs[0].child);
		// Every job was still running when the app died; none had anything in its thread.
		const ended = (id: string) => {
			const job = stack.emulator.getJob(id);
			return !job || isTerminalStatus(job.status);
		};
		const inFlightAtKill = jobIds.filter((id) => !ended(id));
		expect(inFlightAtKill).toEqual(jobIds);
		expect(parents.filter((parent) => stack.replies(parent.ts, parent.channel).length > 0)).toEqual(
			[],
		);
		jobsClock.release();
		// Stay down until the service has given up reporting at least one job to the dead app.
		const attempts = RETRY_DELAYS_MS.length + 1;
		await eventually(
			'a delivery given up',
			() =>
				stack.emulator.deliveries.some((delivery) => delivery.attempt === attempts && !delivery.ok),
			{ timeoutMs: 20_000 },
		);
		jobsClock.hold();
		const endedWhileDown = jobIds.filter(ended).length;

		const restarting = Date.now();
		runs.push(await startAppProcess(stack, port, env));
		const restartMs = Date.now() - restarting;
		jobsClock.release();
		await stack.standin.waitFor(
			() =>
				parents.every(
					(parent, i) =>
						/Succeeded in/.test(shown(stack, parent)) &&
						resultKeys(stack, parent).includes(`${jobIds[i]}:result`),
				),
			// Under Slack's limits (50 edits and 50 thread reads a minute) the restarted process's
			// deliveries and resumed jobs' edits take about a minute.
			90_000,
			`all ${JOBS} results`,
		);
		await stack.emulator.deliveriesSettled();

		// Killed and started once more, with one more job ending while the app is down: the restarted
		// app's look at its jobs delivers that one and then says so, its own sign that the look is
		// over. Only then does "nothing of the 50 posted again" mean anything.
		expect(
			(
				await stack.command(
					`transcribe https://files.example/r${JOBS}.mp3`,
					'U0FIFTY0',
					channelOf(JOBS),
				)
			).status,
		).toBe(200);
		const last = await stack.standin.waitFor(
			() => {
				const message = stack.parents(channelOf(JOBS))[JOBS / USERS];
				const parent = message && { channel: channelOf(JOBS), ts: message.ts };
				const id = parent && jobIdOf(shown(stack, parent));
				return id ? { parent, id } : undefined;
			},
			// The job id reaches the parent by a chat.update, which the app holds to Slack's 50 a minute:
			// after the restart's 50 edits that can mean waiting out the rest of Slack's minute.
			90_000,
			'the last running job',
		);
		await kill(runs[1].child);
		/** Posts anywhere but the last job's thread. */
		const postsElsewhere = () =>
			stack.standin.api
				.callsOf('chat.postMessage')
				.filter((call) => call.params.thread_ts !== last.parent.ts).length;
		const posts = postsElsewhere();
		await eventually(
			'the last job ended and its delivery given up',
			() =>
				stack.emulator.deliveries.some(
					(delivery) => delivery.jobId === last.id && delivery.attempt === attempts && !delivery.ok,
				),
			{ timeoutMs: 30_000 },
		);
		const third = await startAppProcess(stack, port, env);
		runs.push(third);
		await eventually("the restarted app's look at its jobs", () =>
			/Resumed 0 running job\(s\); delivered 1 finished while the app was away/.test(
				third.output(),
			),
		);
		expect(resultKeys(stack, last.parent)).toEqual([`${last.id}:result`]);

		expect(allParents(stack)).toHaveLength(JOBS + 1);
		expect(parents.map((parent) => resultKeys(stack, parent))).toEqual(
			jobIds.map((id) => [`${id}:result`]),
		);
		expect(postsElsewhere()).toBe(posts);
		// One job per command, none created twice by a retried or recovered create.
		expect(stack.serviceCalls('POST', /\/inference-endpoints\/transcribe\/jobs$/)).toBe(JOBS + 1);
		expect(new Set([...jobIds, last.id]).size).toBe(JOBS + 1);

		// Both paths were exercised: deliveries refused while the app was down, and delivered to the new one.
		const refused = stack.emulator.deliveries.filter(
			(delivery) => !delivery.ok && delivery.jobId !== last.id,
		);
		const reported = new Set(
			stack.emulator.deliveries.filter((delivery) => delivery.ok).map((delivery) => delivery.jobId),
		);
		expect(endedWhileDown).toBeGreaterThan(0);
		expect(endedWhileDown).toBeLessThan(JOBS);
		expect(reported.size).toBeGreaterThan(0);
		console.info(
			`restart at scale: ${inFlightAtKill.length} of ${JOBS} jobs in flight at SIGKILL; ${endedWhileDown} had ended when the restart began, ` +
				`the restart took ${restartMs} ms; ${refused.length} delivery attempts refused (connection refused while down or starting); ` +
				`${reported.size} jobs reported by webhook to the restarted app; ` +
				`${JOBS - reported.size} never reported (every attempt refused), so delivered by the restarted app's look at its jobs; ` +
				`${posts} chat.postMessage calls before the last restart`,
		);
		for (const secret of stack.secrets())
			expect(runs.map((run) => run.output()).join('\n')).not.toContain(secret);
	} finally {
		for (const run of runs) await kill(run.child);
		await stack.close();
	}
}, 200_000);
