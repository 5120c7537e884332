export interface RetryPolicy {
	/** Attempts after the first, for failures other than 429 (which wait; see below). */
	maxRetries: number;
	baseDelayMs: number;
	maxDelayMs: number;
	/**
	 * How long one call may keep waiting out 429s in all. Within it a 429 never fails the call,
	 * however many times it comes; a `Retry-After` reaching past it gets an error instead of a
	 * stalled workflow.
	 */
	maxRateLimitWaitMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
	maxRetries: 5,
	baseDelayMs: 250,
	maxDelayMs: 15_000,
	maxRateLimitWaitMs: 10 * 60_000,
};

/** Exponential backoff with "equal jitter": never zero, never in lock-step with other clients. */
export function backoffDelayMs(retry: number, policy: RetryPolicy, random: () => number): number {
	const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
	return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** `Retry-After` as seconds or an HTTP date, in milliseconds from now; undefined when absent or unreadable. */
export function parseRetryAfterMs(value: string | undefined, nowMs: number): number | undefined {
	if (!value) return undefined;
	const trimmed = value.trim();
	if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
	const date = Date.parse(trimmed);
	return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

/** Statuses worth another try: the server was busy or broken, not the request. */
export function isRetryableStatus(status: number): boolean {
	return status === 408 || status === 429 || status >= 500;
}
