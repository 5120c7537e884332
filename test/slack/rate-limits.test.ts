import { FastClock } from '../support/fast-clock';
import { CHANNEL, content, Stack } from './harness';
import { overLimits } from './over-limits';

/**
 * The app under Slack's rate limits as the stand-in enforces them by default: 50 jobs at once in
 * one channel. Slack's minutes pass twenty times faster (one clock for the emulator, the stand-in
 * and the app), so the minutes the posts take under Slack's limits take seconds here.
 */

const JOBS = 50;
const SPEED = 20;

/** Result messages and files the app posted in a thread, by their exactly-once keys. */
function resultKeys(stack: Stack, parentTs: string): string[] {
	return stack.replies(parentTs, CHANNEL).flatMap((message) => {
		const key = message.metadata?.event_payload.key;
		return typeof key === 'string' ? [key] : [];
	});
}

function jobIdOf(message: { text: string; blocks?: unknown[] }): string {
	return /Job `([0-9a-f-]{36})`/.exec(content(message as never))?.[1] ?? '';
}

describe("Slack's rate limits, by default", () => {
	let stack: Stack;
	afterEach(() => stack.close());

	it('50 jobs at once in one channel: every parent and result posted once, no method over its tier', async () => {
		const clock = new FastClock(SPEED);
		stack = await Stack.start({
			clock,
			emulator: { jobDurationMs: 20_000 },
			env: { SLACK_POLL_INTERVAL_MS: '5000' },
		});
		const users = Array.from({ length: JOBS }, (_, n) => `U0LOAD${n}`);
		await Promise.all(
			users.map((user, n) => stack.command(`transcribe https://files.example/${n}.mp3`, user)),
		);

		const finished = () => {
			const parents = stack.parents(CHANNEL);
			return parents.length >= JOBS &&
				parents.every(
					(parent) =>
						/Succeeded in/.test(content(stack.standin.workspace.find(CHANNEL, parent.ts))) &&
						resultKeys(stack, parent.ts).length > 0,
				)
				? parents
				: undefined;
		};
		const parents = await stack.standin
			.waitFor(finished, 45_000, 'every job finished and posted')
			.catch((error: unknown) => {
				const calls = stack.standin.api.calls;
				const limited = calls.filter((call) => call.status === 429).length;
				const posted = stack.parents(CHANNEL).length;
				const warnings = stack.logger.lines.filter((line) => /^(warn|error) /.test(line));
				throw new Error(
					`${String(error)}: ${posted} parents, ${limited} of ${calls.length} calls refused with 429; ${warnings.length} warnings, first: ${warnings.slice(0, 3).join(' | ')}`,
				);
			});
		await stack.app.idle();

		// Once each: one parent per request, one result per job.
		expect(stack.parents(CHANNEL)).toHaveLength(JOBS);
		for (const parent of parents) {
			const jobId = jobIdOf(stack.standin.workspace.find(CHANNEL, parent.ts) ?? parent);
			expect(resultKeys(stack, parent.ts)).toEqual([`${jobId}:result`]);
		}
		// The app kept to Slack's limits: Slack refused none of its calls, and carried out none beyond them.
		const calls = stack.standin.api.calls;
		expect(calls.filter((call) => call.status === 429).map((call) => call.method)).toEqual([]);
		expect(overLimits(calls)).toEqual([]);
		const byMethod = new Map<string, number>();
		for (const call of calls) byMethod.set(call.method, (byMethod.get(call.method) ?? 0) + 1);
		const spanS = ((calls.at(-1)?.at ?? 0) - (calls[0]?.at ?? 0)) / 1000;
		console.info(
			`${JOBS} jobs in one channel under Slack's limits: ${calls.length} Web API calls over ${spanS.toFixed(0)} s of Slack's time (${[...byMethod].map(([method, n]) => `${method} ${n}`).join(', ')})`,
		);
		// Nothing was given up on.
		expect(stack.logger.lines.filter((line) => /^(warn|error) /.test(line))).toEqual([]);
	}, 60_000);
});
