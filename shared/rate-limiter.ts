import { createHash } from 'node:crypto';
import type { Clock } from './clock';

/**
 * At most `limit` requests in any window of `windowMs`, the way the service counts (240 a minute
 * per API key). A sliding log rather than a token bucket: it never lets a burst over the line,
 * so a bulk run sees no 429s of its own making. Waiters are served first come, first served.
 */
export class SlidingWindowRateLimiter {
  private readonly stamps: number[] = [];
  private head = 0;
  private tail: Promise<void> = Promise.resolve();

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly clock: Clock,
  ) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('rate limit must be a whole number of at least 1');
  }

  acquire(signal?: AbortSignal): Promise<void> {
    const turn = this.tail.then(() => this.take(signal));
    this.tail = turn.catch(() => undefined);
    return turn;
  }

  private async take(signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const now = this.clock.now();
      while (this.head < this.stamps.length && this.stamps[this.head] <= now - this.windowMs) this.head++;
      if (this.head > 1024 && this.head * 2 > this.stamps.length) {
        this.stamps.splice(0, this.head);
        this.head = 0;
      }
      if (this.stamps.length - this.head < this.limit) {
        this.stamps.push(now);
        return;
      }
      await this.clock.sleep(this.stamps[this.head] + this.windowMs - now, signal);
    }
  }
}

const sharedLimiters = new Map<string, SlidingWindowRateLimiter>();

/**
 * One limiter per API key (and limit) for the whole process, so every client and every n8n
 * execution using that key shares the budget. The key passed here must already be a hash.
 */
export function sharedRateLimiter(key: string, requestsPerMinute: number, clock: Clock): SlidingWindowRateLimiter {
  const id = `${key}:${requestsPerMinute}`;
  let limiter = sharedLimiters.get(id);
  if (!limiter) {
    limiter = new SlidingWindowRateLimiter(requestsPerMinute, 60_000, clock);
    sharedLimiters.set(id, limiter);
  }
  return limiter;
}

/** Identifies an API key for rate limiting without keeping the key itself around. */
export function rateLimitKeyFor(apiKey: string, baseUrl: string): string {
  return createHash('sha256').update(`${baseUrl}\n${apiKey}`).digest('hex').slice(0, 32);
}
