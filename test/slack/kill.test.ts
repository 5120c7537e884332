import type { ChildProcess } from 'node:child_process';
import { freePort } from '../../slack-app/local';
import { kill, startAppProcess, type AppProcess } from '../reliability/slack-process';
import { eventually } from '../support/eventually';
import { inflightKinds, inflightKindsOnceWritten } from '../support/state-file';
import { content, Stack } from './harness';

/**
 * The real entry point (`npm start` → slack-app/start.ts) in a child process, killed with SIGKILL
 * while jobs run, then started again: every result still reaches its thread, exactly once.
 */

const CHANNEL = 'C0KILL';

/** The app with a short poll interval, so a restart finds its jobs' ends quickly. */
function startChild(stack: Stack, port: number): Promise<AppProcess> {
	return startAppProcess(stack, port, { SLACK_POLL_INTERVAL_MS: '200' });
}

it('survives SIGKILL with jobs in flight: each result is posted once after the restart', async () => {
	const stack = await Stack.start({ app: false, emulator: { jobDurationMs: 3000 } });
	const port = await freePort();
	let child: ChildProcess | undefined;
	try {
		const first = await startChild(stack, port);
		child = first.child;
		stack.standin.setAppUrl(`http://127.0.0.1:${port}/slack/events`);
		for (const n of [1, 2])
			expect(
				(await stack.command(`transcribe https://files.example/k${n}.mp3`, `U0K${n}`, CHANNEL))
					.status,
			).toBe(200);
		const parents = await stack.standin.waitFor(
			() => {
				const all = stack.parents(CHANNEL);
				return all.length === 2 && all.every((parent) => /Job `/.test(content(parent)))
					? all
					: undefined;
			},
			15_000,
			'two running jobs',
		);

		await kill(first.child);
		expect(parents.every((parent) => stack.replies(parent.ts, CHANNEL).length === 0)).toBe(true);

		const second = await startChild(stack, port);
		child = second.child;
		for (const parent of parents) {
			await stack.waitForParentText(parent.ts, /Succeeded in/, 20_000, CHANNEL);
			await stack.standin.waitFor(
				() => stack.replies(parent.ts, CHANNEL).length > 0,
				10_000,
				'the result',
			);
		}
		// Killed and started once more: the start resumes before it reports ready, and posts nothing new.
		await kill(second.child);
		const third = await startChild(stack, port);
		child = third.child;
		for (const parent of parents) expect(stack.replies(parent.ts, CHANNEL)).toHaveLength(1);
		for (const secret of stack.secrets())
			expect(first.output() + second.output() + third.output()).not.toContain(secret);
	} finally {
		if (child) await kill(child);
		await stack.close();
	}
}, 90_000);

it('after SIGKILL mid-generation, redoes the image once and flags the interrupted chat answer', async () => {
	const stack = await Stack.start({ app: false });
	const port = await freePort();
	let child: ChildProcess | undefined;
	try {
		const first = await startChild(stack, port);
		child = first.child;
		stack.standin.setAppUrl(`http://127.0.0.1:${port}/slack/events`);
		// Slow workloads, so the app is killed while both are under way.
		stack.emulator.setFaults({ latencyMs: 4000, surfaces: ['image', 'chat'] });
		await stack.command('image a lighthouse at dusk', 'U0PAINT', CHANNEL);
		await stack.command('chat What is a spot instance?', 'U0TALK', CHANNEL);
		await stack.standin.waitFor(() => stack.parents(CHANNEL).length === 2, 15_000, 'two parents');
		await eventually(
			'the app to record its work in progress',
			async () => (await inflightKindsOnceWritten(stack.stateFile)).join() === 'chat,image',
			{ intervalMs: 50 },
		);
		await kill(first.child);
		stack.emulator.setFaults({ latencyMs: 0 });

		const second = await startChild(stack, port);
		child = second.child;
		const [image, chat] = stack.parents(CHANNEL);
		await stack.waitForParentText(image.ts, /Succeeded in/, 20_000, CHANNEL);
		await stack.standin.waitFor(
			() => stack.replies(image.ts, CHANNEL).some((message) => message.fileIds.length > 0),
			10_000,
			'the image',
		);
		await stack.waitForParentText(chat.ts, /Interrupted/, 10_000, CHANNEL);
		const answer = stack.replies(chat.ts, CHANNEL).map(content).join('\n');
		expect(answer).toContain('The app restarted while answering');
		expect(answer).toContain('gpu.regenerate_chat');

		await kill(second.child);
		const third = await startChild(stack, port);
		child = third.child;
		// Whatever the second run had not yet recorded as done, the third finishes without posting again.
		// The state file is the app's record of work under way: empty means the third run is done.
		await eventually(
			'no work left under way',
			async () => (await inflightKinds(stack.stateFile)).length === 0,
			{ intervalMs: 50 },
		);
		expect(stack.replies(image.ts, CHANNEL).flatMap((message) => message.fileIds)).toHaveLength(1);
		expect(stack.replies(chat.ts, CHANNEL)).toHaveLength(1);
	} finally {
		if (child) await kill(child);
		await stack.close();
	}
}, 90_000);
