import { createHash } from 'node:crypto';
import type { Clock } from './clock';

const WINDOW_MS = 60_000;
/**
 * Multiplicative decrease: the share of its rate a process keeps after a 429. Mild, because the
 * service counts a sliding window: a sum slightly over the limit costs one 429 per process, while
 * one well under it wastes budget for minutes (measured in docs/benchmarks.md).
 */
const DECREASE_FACTOR = 0.85;
/**
 * Increase after a decrease, as a share of the ceiling, growing with the time since: t minutes
 * after a 429 the rate has regained 0.03 x t x (1 + t) of the ceiling (6 % after one minute, a
 * third after three, all of it within six). Slow at first, where the last 429 says the limit is;
 * faster the longer none comes, so a process whose neighbours went idle takes their budget back.
 */
const INCREASE_SHARE_PER_MINUTE = 0.03;
/**
 * Before any 429, an eighth of the ceiling may go at once and the rest of a burst at four times
 * the ceiling's pace (240/min: 30 at once, then 16 a second), so processes starting together fill
 * the service's window with few requests in flight, and each learns of the limit from one 429
 * instead of a whole burst of them.
 */
const BURST_SHARE = 0.125;
const BURST_SPEEDUP = 4;
/** Never slower than this, so a process always probes for budget that others freed. */
const MIN_REQUESTS_PER_MINUTE = 1;
/** How often a background request looks again while other requests wait. */
const BACKGROUND_RECHECK_MS = 50;

/**
 * The budget of one API key in this process, sized for many processes sharing the key without a
 * shared store (n8n queue mode: every worker has its own).
 *
 * - Never more than `ceiling` requests in any 60 s window, the way the service counts, so a
 *   process alone never causes a 429; it may burst up to the ceiling, an eighth at once.
 * - A 429 means other processes use the key too: every call of the key in this process waits out
 *   `Retry-After`, and the process lowers its rate and paces its requests evenly at that rate
 *   (multiplicative decrease, once per 429 episode, not once per refused request).
 * - Time without a 429 adds the rate back (see INCREASE_SHARE_PER_MINUTE), so N processes settle
 *   where their sum meets the service's limit, like TCP senders sharing a link. Back at the
 *   ceiling, bursts are allowed again.
 *
 * Waiters are served first come, first served; background callers (a restart catching up) only
 * when no other caller waits, and never into the last eighth of the window, so the others never
 * queue behind them.
 */
export class AdaptiveRateLimiter {
	private readonly stamps: number[] = [];
	private head = 0;
	private tail: Promise<void> = Promise.resolve();
	private backgroundTail: Promise<void> = Promise.resolve();
	/** Requests other than background ones waiting for their turn. */
	private waiting = 0;
	private rateAfterDecrease: number;
	private pausedUntil = 0;
	private lastDecreaseAt = Number.NEGATIVE_INFINITY;
	private lastStart = Number.NEGATIVE_INFINITY;
	private readonly burstSize: number;
	private burstTokens: number;
	private burstRefilledAt = Number.NEGATIVE_INFINITY;

	constructor(
		readonly ceiling: number,
		private readonly clock: Clock,
	) {
		if (!Number.isInteger(ceiling) || ceiling < 1)
			throw new RangeError('rate limit must be a whole number of at least 1');
		this.rateAfterDecrease = ceiling;
		this.burstSize = Math.max(1, Math.ceil(ceiling * BURST_SHARE));
		this.burstTokens = this.burstSize;
	}

	/** The current rate in requests per minute: the ceiling until a 429, lower after, climbing back with time. */
	get requestsPerMinute(): number {
		return this.rateAt(this.clock.now());
	}

	private rateAt(now: number): number {
		if (this.lastDecreaseAt === Number.NEGATIVE_INFINITY) return this.ceiling;
		const minutes = Math.max(0, now - this.lastDecreaseAt) / WINDOW_MS;
		return Math.min(
			this.ceiling,
			this.rateAfterDecrease + INCREASE_SHARE_PER_MINUTE * this.ceiling * minutes * (1 + minutes),
		);
	}

	/**
	 * Waits for this process's turn; resolves with the time the request may be sent. `background`
	 * requests queue apart and go only while no other request waits, leaving the window's last
	 * eighth (the burst) to the others.
	 */
	acquire(signal?: AbortSignal, background = false): Promise<number> {
		if (background) {
			const turn = this.backgroundTail.then(() => this.takeInBackground(signal));
			this.backgroundTail = turn.then(
				() => undefined,
				() => undefined,
			);
			return turn;
		}
		this.waiting++;
		const turn = this.tail.then(() => this.take(signal)).finally(() => this.waiting--);
		this.tail = turn.then(
			() => undefined,
			() => undefined,
		);
		return turn;
	}

	/**
	 * A background turn: when nothing else waits, the window has room below its last eighth, no 429
	 * holds the key and, after one, the even pace allows. It spends none of the burst the others use.
	 */
	private async takeInBackground(signal?: AbortSignal): Promise<number> {
		for (;;) {
			signal?.throwIfAborted();
			const now = this.clock.now();
			const rate = this.rateAt(now);
			const ready = Math.max(
				this.pausedUntil,
				this.windowOpensAt(now, this.ceiling - this.burstSize),
				rate < this.ceiling ? this.lastStart + WINDOW_MS / rate : now,
			);
			if (this.waiting === 0 && ready <= now) {
				this.stamps.push(now);
				if (rate < this.ceiling) this.lastStart = now;
				return now;
			}
			// Looks again soon while others wait; else when the window has room.
			await this.clock.sleep(
				this.waiting > 0 ? BACKGROUND_RECHECK_MS : Math.max(1, ready - now),
				signal,
			);
		}
	}

	/**
	 * The service refused a request sent at `sentAt`: hold every call of the key until `retryAfterMs`
	 * has passed and lower the rate, unless the request left before the last decrease (its 429
	 * belongs to an episode already answered).
	 */
	throttled(sentAt: number, retryAfterMs: number): void {
		const now = this.clock.now();
		this.pausedUntil = Math.max(this.pausedUntil, now + retryAfterMs);
		if (sentAt <= this.lastDecreaseAt) return;
		this.rateAfterDecrease = Math.max(MIN_REQUESTS_PER_MINUTE, this.rateAt(now) * DECREASE_FACTOR);
		this.lastDecreaseAt = now;
	}

	private async take(signal?: AbortSignal): Promise<number> {
		for (;;) {
			signal?.throwIfAborted();
			const now = this.clock.now();
			const ready = Math.max(this.pausedUntil, this.windowOpensAt(now), this.paceAllows(now));
			if (ready <= now) {
				this.stamps.push(now);
				this.lastStart = now;
				if (this.rateAt(now) >= this.ceiling) this.burstTokens -= 1;
				return now;
			}
			await this.clock.sleep(ready - now, signal);
		}
	}

	/** When the pace allows the next request: evenly at the rate after a 429, as a bucket of burst tokens before. */
	private paceAllows(now: number): number {
		const rate = this.rateAt(now);
		if (rate < this.ceiling) return this.lastStart + WINDOW_MS / rate;
		const perMs = (this.ceiling * BURST_SPEEDUP) / WINDOW_MS;
		this.burstTokens = Math.min(
			this.burstSize,
			this.burstTokens + Math.max(0, now - this.burstRefilledAt) * perMs,
		);
		this.burstRefilledAt = now;
		return this.burstTokens >= 1 ? now : now + (1 - this.burstTokens) / perMs;
	}

	/** When the sliding window has room for one more request (within `limit`, the ceiling unless said). */
	private windowOpensAt(now: number, limit = this.ceiling): number {
		while (this.head < this.stamps.length && this.stamps[this.head] <= now - WINDOW_MS) this.head++;
		if (this.head > 1024 && this.head * 2 > this.stamps.length) {
			this.stamps.splice(0, this.head);
			this.head = 0;
		}
		const used = this.stamps.length - this.head;
		if (used < limit) return now;
		return this.stamps[this.head + (used - limit)] + WINDOW_MS;
	}
}

const sharedLimiters = new Map<string, AdaptiveRateLimiter>();

/**
 * One limiter per API key (and ceiling) for the whole process, so every client and every n8n
 * execution using that key shares the budget and learns from each other's 429s. The key passed
 * here must already be a hash.
 */
export function sharedRateLimiter(
	key: string,
	requestsPerMinute: number,
	clock: Clock,
): AdaptiveRateLimiter {
	const id = `${key}:${requestsPerMinute}`;
	let limiter = sharedLimiters.get(id);
	if (!limiter) {
		limiter = new AdaptiveRateLimiter(requestsPerMinute, clock);
		sharedLimiters.set(id, limiter);
	}
	return limiter;
}

/** Identifies an API key for rate limiting without keeping the key itself around. */
export function rateLimitKeyFor(apiKey: string, baseUrl: string): string {
	return createHash('sha256').update(`${baseUrl}\n${apiKey}`).digest('hex').slice(0, 32);
}
