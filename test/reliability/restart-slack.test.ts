import { isTerminalStatus } from '../../shared/schemas';
import { freePort } from '../../slack-app/local';
import { content, Stack } from '../slack/harness';
import { kill, startAppProcess, type AppProcess } from './slack-process';
import { eventually } from '../support/eventually';

/**
 * Restarts at scale: the real entry point killed with SIGKILL while 50 jobs run, then started again.
 * Completion comes by the service's webhook to the app, so jobs that end while the app is dead have
 * their deliveries refused (connection refused, retried, given up) and must be found again by the
 * restarted app; the others are reported to the new process. Every result lands once.
 */

const JOBS = 50;
const USERS = 10;
const CHANNEL = 'C0FIFTY';
/** The service's delivery attempts: the first, then one after each pause. */
const RETRY_DELAYS_MS = [300, 600, 1200];

/**
 * Jobs run 6-10 s, spread by their number, so many end while the app is down or starting; one in ten
 * runs 15 s, so some surely end after the restarted app listens, however slowly it starts.
 */
function duration(_endpoint: string, input: unknown): number {
	const n = Number(/\/r(\d+)\.mp3/.exec(JSON.stringify(input))?.[1] ?? 0);
	return n % 10 === 9 ? 15_000 : 6000 + (n % 10) * 500;
}

function jobIdOf(text: string): string | undefined {
	return /Job `([0-9a-f-]{36})`/.exec(text)?.[1];
}

/** The exactly-once keys of the results posted in a thread (a message key or a file name each). */
function resultKeys(stack: Stack, parentTs: string): string[] {
	return stack.replies(parentTs, CHANNEL).flatMap((message) => {
		const key = message.metadata?.event_payload.key;
		const files = message.fileIds.map((id) => stack.standin.workspace.files.get(id)?.name ?? id);
		return [...(typeof key === 'string' ? [key] : []), ...files];
	});
}

it(`SIGKILL with ${JOBS} jobs in flight: after the restart every result is in its thread exactly once`, async () => {
	const stack = await Stack.start({
		app: false,
		emulator: { jobDurationMs: duration, webhookRetryDelaysMs: RETRY_DELAYS_MS },
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
			stack.command(`transcribe https://files.example/r${n}.mp3`, `U0FIFTY${n % USERS}`, CHANNEL),
		);
		for (const reply of await Promise.all(commands)) expect(reply.status).toBe(200);
		const parents = await stack.standin.waitFor(
			() => {
				const all = stack.parents(CHANNEL);
				return all.length === JOBS &&
					all.every((parent) => jobIdOf(content(stack.standin.workspace.find(CHANNEL, parent.ts))))
					? all
					: undefined;
			},
			20_000,
			`${JOBS} running jobs`,
		);
		const jobIds = parents.map(
			(parent) => jobIdOf(content(stack.standin.workspace.find(CHANNEL, parent.ts))) ?? '',
		);

		await kill(runs[0].child);
		// Most jobs were still running when the app died (on a slow machine the first few may have ended
		// while the 50 parents were being posted); no running job had anything in its thread.
		const ended = (id: string) => {
			const job = stack.emulator.getJob(id);
			return !job || isTerminalStatus(job.status);
		};
		const inFlightAtKill = jobIds.filter((id) => !ended(id));
		expect(inFlightAtKill.length).toBeGreaterThanOrEqual(JOBS / 2);
		expect(
			parents.filter(
				(parent, i) =>
					inFlightAtKill.includes(jobIds[i]) && stack.replies(parent.ts, CHANNEL).length > 0,
			),
		).toEqual([]);
		// Stay down until the service has given up reporting at least one job to the dead app.
		const attempts = RETRY_DELAYS_MS.length + 1;
		await eventually(
			'a delivery given up',
			() =>
				stack.emulator.deliveries.some((delivery) => delivery.attempt === attempts && !delivery.ok),
			{ timeoutMs: 20_000 },
		);
		const endedWhileDown = jobIds.filter((id) => {
			const job = stack.emulator.getJob(id);
			return job && isTerminalStatus(job.status);
		}).length;

		const restarting = Date.now();
		runs.push(await startAppProcess(stack, port, env));
		const restartMs = Date.now() - restarting;
		await stack.standin.waitFor(
			() =>
				parents.every(
					(parent, i) =>
						/Succeeded in/.test(content(stack.standin.workspace.find(CHANNEL, parent.ts))) &&
						resultKeys(stack, parent.ts).includes(`${jobIds[i]}:result`),
				),
			40_000,
			`all ${JOBS} results`,
		);
		await stack.emulator.deliveriesSettled();

		// Killed and started once more, with one more job ending while the app is down: the restarted
		// app's look at its jobs delivers that one and then says so, its own sign that the look is
		// over. Only then does "nothing of the 50 posted again" mean anything.
		expect(
			(await stack.command(`transcribe https://files.example/r${JOBS}.mp3`, 'U0FIFTY0', CHANNEL))
				.status,
		).toBe(200);
		const last = await stack.standin.waitFor(
			() => {
				const parent = stack.parents(CHANNEL)[JOBS];
				const id = parent && jobIdOf(content(stack.standin.workspace.find(CHANNEL, parent.ts)));
				return id ? { parent, id } : undefined;
			},
			20_000,
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
		expect(resultKeys(stack, last.parent.ts)).toEqual([`${last.id}:result`]);

		expect(stack.parents(CHANNEL)).toHaveLength(JOBS + 1);
		expect(parents.map((parent) => resultKeys(stack, parent.ts))).toEqual(
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
}, 140_000);
