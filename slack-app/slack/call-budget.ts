import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type { webApi } from '@slack/bolt';
import type { Clock } from '../../shared/clock';

/**
 * One budget of Web API calls per workspace (per bot token), under the fetch of every Slack client
 * the app builds, so every caller goes through it. Slack limits each method per workspace by tier
 * (https://docs.slack.dev/apis/web-api/rate-limits) and chat.postMessage to about one message a
 * second per channel; past a limit it answers 429 with `Retry-After` and does nothing. The budget
 * sends a call when Slack would take it, higher priorities first; a call that would have to wait
 * and may be skipped (a parent's elapsed-time refresh) is not sent at all. A 429 (from another
 * replica's calls, or Slack's own judgement) holds the method for `Retry-After` and the call is
 * sent again: Slack stored nothing, so nothing is posted twice.
 *
 * Where the calls are counted is the `CallLedger`'s: this process's memory for one process, Redis
 * for replicas (state/shared-call-ledger.ts), so that replicas together keep to one workspace's
 * limits rather than each to all of them. Priorities order this process's own waiting calls.
 */

/** Calls per minute of Slack's tiers: "1+", "20+", "50+", "100+"; the least Slack promises. */
const TIER = { 1: 1, 2: 20, 3: 50, 4: 100 } as const;

/**
 * The tier each method's page gives (docs.slack.dev/reference/methods/<method>). Methods with
 * "special" limits and no published figure are held to Tier 4; an unknown method to Tier 2, the
 * tier "most methods" have.
 */
const PER_MINUTE: Record<string, number> = {
	'auth.test': TIER[4],
	'chat.update': TIER[3],
	'chat.postEphemeral': TIER[4],
	'chat.getPermalink': TIER[4],
	'chat.startStream': TIER[2],
	'chat.appendStream': TIER[4],
	'chat.stopStream': TIER[2],
	'conversations.history': TIER[3],
	'conversations.replies': TIER[3],
	'files.getUploadURLExternal': TIER[4],
	'files.completeUploadExternal': TIER[4],
	'files.info': TIER[4],
	'views.open': TIER[4],
	'views.update': TIER[4],
	'views.push': TIER[4],
	'views.publish': TIER[4],
	'users.info': TIER[4],
	'assistant.threads.setStatus': TIER[4],
	'assistant.threads.setTitle': TIER[4],
	'assistant.threads.setSuggestedPrompts': TIER[4],
	'functions.completeSuccess': TIER[3],
	'functions.completeError': TIER[3],
	'agents.sessions.setStatus': TIER[4],
	'agents.sessions.rename': TIER[4],
};
const UNKNOWN_PER_MINUTE = TIER[2];
/** chat.postMessage: one a second per channel. Slack allows short bursts; the budget takes none. */
const POST_SPACING_MS = 1000;
const MINUTE_MS = 60_000;
/** Resent after 429s at most this often; then the 429 goes to the caller (the WebClient fails it). */
const MAX_RATE_LIMITED = 10;
/** Windows kept before idle ones are dropped. */
const PRUNE_AT = 1000;

/**
 * Which calls go first when a method's budget is short: acknowledgements and results (`first`),
 * then everything else, then what only keeps a view fresh (`last`: Home publishes). `skip`: sent
 * only when the budget has room now, else failed with `CALL_SKIPPED` (a parent's refresh,
 * which the next one makes up for).
 */
export type CallPriority = 'first' | 'normal' | 'last' | 'skip';
const RANK: Record<CallPriority, number> = { first: 0, normal: 1, last: 2, skip: 2 };

const priority = new AsyncLocalStorage<CallPriority>();

/** Runs `work` with its Slack calls (and those of the promises and timers it starts) at `level`. */
export function withCallPriority<T>(level: CallPriority, work: () => T): T {
	return priority.run(level, work);
}

/**
 * The error a skipped call fails with, as if Slack had refused it: the WebClient fails it like any
 * refusal (no retry, no warning of a failed request), and it was never sent.
 */
export const CALL_SKIPPED = 'app_call_skipped';

class Skipped extends Error {}

interface Waiter {
	rank: number;
	order: number;
	resolve: (sent: SentCall) => void;
	reject: (error: unknown) => void;
}

/** A call the budget let go: `done` once its answer came (or it failed). */
export interface SentCall {
	done(): void;
}

/** Let go now, or not before `waitMs` (undefined: not before a call of this process under way is answered). */
export type CallAttempt = { sent: SentCall } | { waitMs: number | undefined };

/**
 * One limit's count: at most `limit` calls in any `spanMs`. A call counts from when it is sent until
 * `spanMs` after its answer came: Slack counted it somewhere in between, so the count never falls short.
 */
export interface CallCounter {
	/** Counts the call when the limit has room now. */
	attempt(): CallAttempt | Promise<CallAttempt>;
	/** Slack answered 429: nothing of this limit goes out before `Retry-After`. */
	hold(seconds: number): void;
	/** Nothing of this process counts or is held: the counter can be dropped and made anew. */
	idle(): boolean;
}

/** Where the budget's calls are counted: one counter per limit (`key` names workspace, method and channel). */
export interface CallLedger {
	counter(key: string, limit: number, spanMs: number): CallCounter;
}

/** This process's memory: the budget of one process. */
export class LocalCallLedger implements CallLedger {
	constructor(private readonly clock: Pick<Clock, 'now'>) {}

	counter(_key: string, limit: number, spanMs: number): CallCounter {
		return new LocalCounter(this.clock, limit, spanMs);
	}
}

class LocalCounter implements CallCounter {
	private inFlight = 0;
	private readonly answered: number[] = [];
	private blockedUntil = 0;

	constructor(
		private readonly clock: Pick<Clock, 'now'>,
		private readonly limit: number,
		private readonly spanMs: number,
	) {}

	attempt(): CallAttempt {
		const waitMs = this.roomAt(this.clock.now());
		if (waitMs !== 0) return { waitMs };
		this.inFlight++;
		return {
			sent: {
				done: () => {
					this.inFlight--;
					this.answered.push(this.clock.now());
				},
			},
		};
	}

	hold(seconds: number): void {
		this.blockedUntil = Math.max(this.blockedUntil, this.clock.now() + seconds * 1000);
	}

	idle(): boolean {
		return this.roomAt(this.clock.now()) === 0 && this.inFlight === 0 && !this.answered.length;
	}

	/** Ms until a call may go (0: now), or undefined until a call under way is answered. */
	private roomAt(now: number): number | undefined {
		while (this.answered.length && this.answered[0] <= now - this.spanMs) this.answered.shift();
		if (this.blockedUntil > now) return this.blockedUntil - now;
		const over = this.inFlight + this.answered.length - this.limit;
		if (over < 0) return 0;
		// Room comes when the answered calls before the over-limit ones leave the window.
		return over < this.answered.length ? this.answered[over] + this.spanMs - now : undefined;
	}
}

/** The calls of one limit waiting in this process, highest priority first, let go as its counter allows. */
class Window {
	private readonly waiting: Waiter[] = [];
	private order = 0;
	private pumping = false;
	private wake = new AbortController();
	private underWay = 0;

	constructor(
		private readonly clock: Clock,
		private readonly counter: CallCounter,
	) {}

	/** Resolves when the call may be sent (it then counts); rejects when `signal` aborts first. */
	async take(level: CallPriority, signal?: AbortSignal): Promise<SentCall> {
		signal?.throwIfAborted();
		if (this.waiting.length === 0 && !this.pumping) {
			const attempt = await this.counter.attempt();
			if ('sent' in attempt) return this.track(attempt.sent);
		}
		if (level === 'skip') throw new Skipped();
		return new Promise<SentCall>((resolve, reject) => {
			const waiter: Waiter = { rank: RANK[level], order: this.order++, resolve, reject };
			this.waiting.push(waiter);
			this.waiting.sort((a, b) => a.rank - b.rank || a.order - b.order);
			signal?.addEventListener(
				'abort',
				() => {
					const at = this.waiting.indexOf(waiter);
					if (at >= 0) this.waiting.splice(at, 1);
					reject(signal.reason);
				},
				{ once: true },
			);
			void this.pump();
		});
	}

	/** Nothing counts, waits or is held: the window can be dropped and made anew. */
	idle(): boolean {
		return this.waiting.length === 0 && this.underWay === 0 && !this.pumping && this.counter.idle();
	}

	hold(seconds: number): void {
		this.counter.hold(seconds);
	}

	/** A call let go wakes the waiting ones when it is answered: its answer may make room. */
	private track(sent: SentCall): SentCall {
		this.underWay++;
		return {
			done: () => {
				this.underWay--;
				sent.done();
				this.wake.abort();
			},
		};
	}

	private async pump(): Promise<void> {
		if (this.pumping) return;
		this.pumping = true;
		try {
			while (this.waiting.length) {
				this.wake = new AbortController();
				let attempt: CallAttempt;
				try {
					attempt = await this.counter.attempt();
				} catch (error) {
					// The ledger is gone (the app stops): no waiting call can be counted any more.
					for (const waiter of this.waiting.splice(0)) waiter.reject(error);
					return;
				}
				if ('sent' in attempt) {
					const next = this.waiting.shift();
					// Aborted meanwhile: the call counted goes unsent, and counts no longer than if it had.
					if (next) next.resolve(this.track(attempt.sent));
					else attempt.sent.done();
					continue;
				}
				if (this.wake.signal.aborted) continue;
				if (attempt.waitMs === undefined) {
					await new Promise<void>((resolve) =>
						this.wake.signal.addEventListener('abort', () => resolve(), { once: true }),
					);
				} else {
					await this.clock.sleep(attempt.waitMs, this.wake.signal).catch(() => undefined);
				}
			}
		} finally {
			this.pumping = false;
		}
	}
}

type FetchAnswer = Awaited<ReturnType<webApi.FetchFunction>>;
type FetchInit = Parameters<webApi.FetchFunction>[1];

/** The budgets of every workspace this process calls Slack for, keyed by token, method and channel. */
export class CallBudget {
	private readonly windows = new Map<string, Window>();

	constructor(
		private readonly clock: Clock,
		/** Where Web API methods are (`…/api/`); other URLs (file uploads) are not Web API calls. */
		private readonly apiUrl: string,
		/** Longest wait for one answer, counted from when the call is sent. */
		private readonly timeoutMs: number,
		/** Where the calls are counted: this process's memory unless replicas share one (Redis). */
		private readonly ledger: CallLedger = new LocalCallLedger(clock),
	) {}

	/** Wraps a fetch: each Web API call waits for its budget, and is sent again after a 429. */
	wrap(inner: webApi.FetchFunction): webApi.FetchFunction {
		return async (url, init) => {
			const href = String(url);
			if (!href.startsWith(this.apiUrl)) return inner(url, init);
			const method = href.slice(this.apiUrl.length).split(/[/?]/)[0];
			const window = this.window(init, method);
			const level = priority.getStore() ?? 'normal';
			for (let limited = 0; ; limited++) {
				let sent: SentCall;
				try {
					// A call that may be skipped and was sent is then seen through.
					sent = await window.take(level === 'skip' && limited > 0 ? 'first' : level, init?.signal);
				} catch (error) {
					if (!(error instanceof Skipped)) throw error;
					return new Response(JSON.stringify({ ok: false, error: CALL_SKIPPED }), {
						status: 200,
						headers: { 'content-type': 'application/json' },
					});
				}
				let response: FetchAnswer;
				try {
					// The wait for the budget is not the wait for Slack's answer.
					const timeout = AbortSignal.timeout(this.timeoutMs);
					response = await inner(url, {
						...init,
						signal: init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout,
					});
				} finally {
					sent.done();
				}
				const seconds = retryAfter(response);
				if (response.status !== 429 || seconds === undefined || limited >= MAX_RATE_LIMITED)
					return response;
				window.hold(seconds);
			}
		};
	}

	private window(init: FetchInit, method: string): Window {
		const token = new Headers(init?.headers).get('authorization') ?? '';
		const channel = method === 'chat.postMessage' ? channelOf(init?.body) : undefined;
		const key = `${token} ${method} ${channel ?? ''}`;
		let window = this.windows.get(key);
		if (!window) {
			// Channels come and go: windows with nothing counted or waiting are dropped now and then.
			if (this.windows.size >= PRUNE_AT)
				for (const [other, idle] of this.windows) if (idle.idle()) this.windows.delete(other);
			// The ledger may keep its counts outside this process (Redis): they name the workspace by a hash of its token.
			const named = `${workspaceOf(token)}:${method}:${channel ?? ''}`;
			window = new Window(
				this.clock,
				channel !== undefined
					? this.ledger.counter(named, 1, POST_SPACING_MS)
					: this.ledger.counter(named, PER_MINUTE[method] ?? UNKNOWN_PER_MINUTE, MINUTE_MS),
			);
			this.windows.set(key, window);
		}
		return window;
	}
}

/** Names a workspace's budget without the token itself (a hash: stored outside the process). */
function workspaceOf(authorization: string): string {
	return createHash('sha256').update(authorization).digest('hex').slice(0, 32);
}

function retryAfter(response: FetchAnswer): number | undefined {
	const header = response.headers.get('retry-after');
	const seconds = header === null ? Number.NaN : Number.parseInt(header, 10);
	return Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
}

/** The `channel` of a form-encoded (or JSON) Web API call. */
function channelOf(body: NonNullable<FetchInit>['body']): string | undefined {
	if (typeof body !== 'string') return undefined;
	if (body.startsWith('{')) {
		try {
			const parsed: unknown = JSON.parse(body);
			return parsed && typeof parsed === 'object' && 'channel' in parsed
				? String(parsed.channel)
				: undefined;
		} catch {
			return undefined;
		}
	}
	return new URLSearchParams(body).get('channel') ?? undefined;
}
