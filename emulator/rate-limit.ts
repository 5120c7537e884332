const WINDOW_MS = 60_000;

/**
 * Sliding 60 s window per API key. Each key keeps a ring of its last `limit` admitted request
 * times: a request is admitted when the oldest of them has left the window. O(1) per request.
 */
export class RateLimiter {
	private readonly rings = new Map<string, { times: number[]; next: number }>();

	constructor(private readonly limit: number) {}

	/** 0 when admitted, else the whole seconds to wait (for Retry-After). */
	admit(key: string, now: number): number {
		if (this.limit <= 0) return 0;
		let ring = this.rings.get(key);
		if (!ring) {
			ring = { times: [], next: 0 };
			this.rings.set(key, ring);
		}
		if (ring.times.length < this.limit) {
			ring.times.push(now);
			return 0;
		}
		const oldest = ring.times[ring.next] ?? 0;
		if (now - oldest < WINDOW_MS) return Math.max(1, Math.ceil((oldest + WINDOW_MS - now) / 1000));
		ring.times[ring.next] = now;
		ring.next = (ring.next + 1) % this.limit;
		return 0;
	}
}
