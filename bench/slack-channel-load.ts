/**
 * Scenario 14: one busy channel under Slack's rate limits for ten minutes. 50 jobs run at once in
 * one channel the whole time: whenever one ends, the next `/gpu transcribe` is sent there. The app
 * (in this process, with the stand-in and the emulator) keeps to Slack's limits as the stand-in
 * enforces them by default (https://docs.slack.dev/apis/web-api/rate-limits: each method's tier per
 * workspace, chat.postMessage about one a second per channel): every result must be posted once,
 * Slack must refuse none of its calls and carry out none beyond a method's tier, and a parent's
 * elapsed-time refreshes give way (coalesced, or skipped when the budget is short).
 */
import { isTerminalStatus } from '../shared/schemas';
import { systemClock } from '../shared/runtime';
import type { Clock } from '../shared/clock';
import type { ApiCall } from '../slack-standin/web-api';
import { content, Stack } from '../test/slack/harness';
import { overLimits } from '../test/slack/over-limits';
import { FastClock } from '../test/support/fast-clock';
import { median, percentile, type Scenario } from './lib';

const CHANNEL = 'C0BUSY';
const IN_FLIGHT = 50;
const MINUTE_MS = 60_000;
/** The full run's length, of Slack's time. */
const DURATION_MS = 10 * MINUTE_MS;
/**
 * Each job runs four minutes, so that 50 at once make 12.5 jobs a minute: 25 posts into the channel
 * (a parent and a result each, of Slack's 60) and about 38 parent edits (three a job, of Tier 3's 50
 * a minute for the workspace). Shorter jobs would ask more of one channel than Slack allows.
 */
const JOB_MS = 4 * MINUTE_MS;
/** The smoke run: the same ten minutes of Slack's time, twenty times faster (30 s). */
const SMOKE_SPEED = 20;
/** After the last command, the results still due are waited for this long (of Slack's time). */
const DRAIN_MS = 8 * MINUTE_MS;
/** How often the load looks for ended jobs to replace (of Slack's time). */
const TOP_UP_EVERY_MS = 1000;

const RESULT_KEY = /"key":"([0-9a-f-]{36}):result"/;

interface Run {
	commands: number;
	parents: number;
	/** Threads with their result exactly once, and more than once. */
	resultsOnce: number;
	resultsTwice: number;
	/** From each job's end at the service to its result in the thread (Slack's time). */
	resultDelaysMs: number[];
	/** From the end of the ten minutes (the last command sent) to the last result posted (Slack's time). */
	lastResultAfterMs: number;
	/** Jobs running at the service, sampled each top-up. */
	runningSamples: number[];
	calls: ApiCall[];
	overLimits: string[];
	/** The app's warnings and errors. */
	problems: string[];
	/** Results still missing when the wait ran out. */
	missing: number;
	/** Parents that show their job's end (the last edit, after the result). */
	parentsEnded: number;
}

async function busyChannel(clock: Clock, durationMs: number): Promise<Run> {
	const stack = await Stack.start({
		clock,
		webhooks: true,
		emulator: { jobDurationMs: JOB_MS },
		// A user's next job comes while the app may still be posting the last one's result.
		env: { SLACK_POLL_INTERVAL_MS: '5000', SLACK_MAX_JOBS_PER_USER: '3' },
	});
	try {
		const organization = stack.emulator.organization;
		const jobs = () => stack.emulator.jobsOf(organization);
		const ended = () => jobs().filter((job) => isTerminalStatus(job.status)).length;
		let sent = 0;
		const sends: Promise<unknown>[] = [];
		const send = () => {
			const n = sent++;
			const body = stack.standin.app.slashCommandBody({
				user: `U0BUSY${n % IN_FLIGHT}`,
				channel: CHANNEL,
				text: `transcribe https://files.example/busy-${n}.mp3`,
			});
			// Signed at the run's time, which the app checks it against (the stand-in signs at the wall clock's).
			const timestampSeconds = Math.floor(clock.now() / 1000);
			sends.push(
				stack.standin.app.send(body, 'application/x-www-form-urlencoded', { timestampSeconds }),
			);
		};
		const runningSamples: number[] = [];
		const started = clock.now();
		while (clock.now() - started < durationMs) {
			// Sent but not ended: running, or still being created.
			const inFlight = sent - ended();
			for (let n = inFlight; n < IN_FLIGHT; n++) send();
			runningSamples.push(jobs().filter((job) => !isTerminalStatus(job.status)).length);
			await clock.sleep(TOP_UP_EVERY_MS);
		}
		await Promise.all(sends);
		const lastSentAt = clock.now();

		const resultCalls = () =>
			stack.standin.api
				.callsOf('chat.postMessage')
				.filter((call) => call.status === 200 && RESULT_KEY.test(call.params.metadata ?? ''));
		const drained = async () => {
			const deadline = clock.now() + DRAIN_MS;
			while (clock.now() < deadline) {
				if (stack.parents(CHANNEL).length >= sent && resultCalls().length >= sent) return;
				await clock.sleep(TOP_UP_EVERY_MS);
			}
		};
		await drained();
		await stack.app.idle();

		const results = resultCalls();
		const endOf = new Map(jobs().map((job) => [job.id, Date.parse(job.update_time)] as const));
		const resultDelaysMs = results.flatMap((call) => {
			const job = RESULT_KEY.exec(call.params.metadata ?? '')?.[1];
			const end = job === undefined ? undefined : endOf.get(job);
			return end === undefined ? [] : [call.at - end];
		});
		const perThread = stack
			.parents(CHANNEL)
			.map(
				(parent) =>
					stack
						.replies(parent.ts, CHANNEL)
						.filter(
							(reply) =>
								typeof reply.metadata?.event_payload.key === 'string' &&
								String(reply.metadata.event_payload.key).endsWith(':result'),
						).length,
			);
		const calls = [...stack.standin.api.calls];
		return {
			commands: sent,
			parents: stack.parents(CHANNEL).length,
			resultsOnce: perThread.filter((count) => count === 1).length,
			resultsTwice: perThread.filter((count) => count > 1).length,
			resultDelaysMs,
			lastResultAfterMs: Math.max(0, ...results.map((call) => call.at)) - lastSentAt,
			runningSamples,
			calls,
			overLimits: overLimits(calls),
			problems: stack.logger.lines.filter((line) => /^(warn|error) /.test(line)),
			missing: Math.max(0, sent - results.length),
			parentsEnded: stack
				.parents(CHANNEL)
				.filter((parent) =>
					/Succeeded in/.test(content(stack.standin.workspace.find(CHANNEL, parent.ts))),
				).length,
		};
	} finally {
		await stack.close();
	}
}

export const slackChannelLoad: Scenario = async ({ smoke, runs }) => {
	const results: Run[] = [];
	for (let run = 0; run < runs; run++)
		results.push(await busyChannel(smoke ? new FastClock(SMOKE_SPEED) : systemClock, DURATION_MS));
	const seconds = (ms: number) => ms / 1000;
	const sum = (pick: (run: Run) => number) => results.reduce((total, run) => total + pick(run), 0);
	const callsOf = (run: Run, method: string) =>
		run.calls.filter((call) => call.method === method && call.status === 200).length;
	const byMethod = (run: Run) => {
		const counts = new Map<string, number>();
		for (const call of run.calls) counts.set(call.method, (counts.get(call.method) ?? 0) + 1);
		return [...counts]
			.sort((a, b) => b[1] - a[1])
			.map(([method, count]) => `${method} ${count}`)
			.join(', ');
	};
	return {
		title: '14. Slack: 50 jobs at once in one channel for 10 minutes',
		description:
			`${IN_FLIGHT} \`/gpu transcribe\` jobs running at once in one channel for ${DURATION_MS / MINUTE_MS} minutes: whenever a job ends at the service, the next command is sent into the same channel (${IN_FLIGHT} users in turn); jobs take ${JOB_MS / MINUTE_MS} min, which makes ${((IN_FLIGHT / JOB_MS) * MINUTE_MS).toFixed(1)} jobs a minute: two posts each into the channel, whose limit is about one a second, and three parent edits each, of \`chat.update\`'s 50 a minute (Tier 3) for the workspace. ` +
			`The app (in HTTP mode, job completion by webhook, polling every 5 s as the safety net), the Slack stand-in enforcing Slack's limits as it does by default (each method's tier per workspace, chat.postMessage one a second per channel with a burst of 3) and the service emulator run in one process. ` +
			`After the ${DURATION_MS / MINUTE_MS} minutes no more commands are sent and the results still due are waited for (up to ${DRAIN_MS / MINUTE_MS} min). Counts come from the stand-in's record of every Web API call: results posted once per thread, 429s Slack answered, and every method's calls carried out in any sliding minute against its tier (chat.postMessage: in any 10 s, against a burst and one a second).` +
			(smoke ? ` Smoke run: the same minutes of Slack's time, ${SMOKE_SPEED} times faster.` : ''),
		figures: [
			{
				name: 'jobs run',
				unit: 'jobs',
				samples: results.map((run) => run.commands),
				better: 'higher',
			},
			{
				name: 'jobs running at the service (median of samples)',
				unit: 'jobs',
				samples: results.map((run) => median(run.runningSamples)),
				better: 'higher',
			},
			{
				name: 'result in its thread after the job ended, p50',
				unit: 's',
				samples: results.map((run) => seconds(median(run.resultDelaysMs))),
				better: 'lower',
			},
			{
				name: 'result in its thread after the job ended, p99',
				unit: 's',
				samples: results.map((run) => seconds(percentile(run.resultDelaysMs, 99))),
				better: 'lower',
			},
			{
				name: 'last result posted after the ten minutes ended',
				unit: 's',
				samples: results.map((run) => seconds(run.lastResultAfterMs)),
				better: 'lower',
			},
			{
				name: 'parent edits (chat.update) per job',
				unit: 'edits',
				samples: results.map((run) => callsOf(run, 'chat.update') / Math.max(1, run.commands)),
				better: 'lower',
			},
		],
		comparisons: [],
		checks: [
			{
				label: 'parents posted, all runs',
				value: sum((run) => run.parents),
				unit: 'messages',
				op: '>=',
				target: sum((run) => run.commands),
			},
			{
				label: 'threads with their result exactly once, all runs',
				value: sum((run) => run.resultsOnce),
				unit: 'threads',
				op: '>=',
				target: sum((run) => run.commands),
			},
			{
				label: "parents showing their job's end, all runs",
				value: sum((run) => run.parentsEnded),
				unit: 'messages',
				op: '>=',
				target: sum((run) => run.commands),
			},
			{
				label: 'threads with a result posted more than once, all runs',
				value: sum((run) => run.resultsTwice),
				unit: 'threads',
				op: '<=',
				target: 0,
			},
			{
				label: 'calls Slack refused with 429, all runs',
				value: sum((run) => run.calls.filter((call) => call.status === 429).length),
				unit: 'calls',
				op: '<=',
				target: 0,
			},
			{
				label: 'methods (or channels) over their limit in some window, all runs',
				value: sum((run) => run.overLimits.length),
				unit: 'methods',
				op: '<=',
				target: 0,
			},
			{
				label: 'warnings and errors the app logged, all runs',
				value: sum((run) => run.problems.length),
				unit: 'lines',
				op: '<=',
				target: 0,
			},
		],
		notes: [
			`Jobs of one length sent together end together: every ${JOB_MS / MINUTE_MS} minutes about ${IN_FLIGHT} results and ${IN_FLIGHT} new parents meet in the channel, some ${2 * IN_FLIGHT} posts at one a second, so the p99 of a result's wait is a wave's tail. Parent edits beyond the three a job needs are elapsed-time refreshes, sent only when \`chat.update\` had room (otherwise skipped).`,
			...results.flatMap((run, i) => [
				`Run ${i + 1}: ${run.calls.length} Web API calls (${byMethod(run)}); results missing when the wait ended: ${run.missing}${run.overLimits.length ? `; over a limit: ${run.overLimits.join('; ')}` : ''}${run.problems.length ? `; first warnings: ${run.problems.slice(0, 3).join(' | ')}` : ''}.`,
			]),
		],
	};
};
