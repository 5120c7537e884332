import { AdaptiveRateLimiter } from '../../shared/rate-limiter';
import { FakeClock } from '../support/fake-clock';

describe('adaptive rate limiter', () => {
	it('serves background callers (a restart catching up) after every other, leaving them the last eighth of the window', async () => {
		const clock = new FakeClock();
		const limiter = new AdaptiveRateLimiter(40, clock);
		const start = clock.now();
		const background = Array.from({ length: 60 }, () => limiter.acquire(undefined, true));
		// A user's command arrives after sixty background requests were queued: it goes at once.
		const command = limiter.acquire();
		const times = await Promise.all([...background, command]);
		expect(times[60]).toBe(start);
		// Background requests never filled the window past 35 of its 40 (the burst of 5 is kept).
		const backgroundTimes = times.slice(0, 60);
		for (const time of backgroundTimes)
			expect(
				backgroundTimes.filter((other) => other > time - 60_000 && other <= time).length,
			).toBeLessThanOrEqual(35);
		// With the window that full, another command still goes at once.
		const now = clock.now();
		expect(await limiter.acquire()).toBe(now);
	});

	it('holds every caller until Retry-After has passed', async () => {
		const clock = new FakeClock();
		const limiter = new AdaptiveRateLimiter(240, clock);
		const sent = await limiter.acquire();
		limiter.throttled(sent, 5_000);
		const [first, second] = await Promise.all([limiter.acquire(), limiter.acquire()]);
		expect(first - sent).toBeGreaterThanOrEqual(5_000);
		expect(second - sent).toBeGreaterThanOrEqual(5_000);
	});

	it('lowers its rate once per 429 episode, not once per refused request', async () => {
		const clock = new FakeClock();
		const limiter = new AdaptiveRateLimiter(240, clock);
		const inFlight = await Promise.all([limiter.acquire(), limiter.acquire(), limiter.acquire()]);
		for (const sentAt of inFlight) limiter.throttled(sentAt, 1_000);
		expect(limiter.requestsPerMinute).toBeCloseTo(240 * 0.85);
		// A request sent after the decrease that is refused again starts a new episode.
		const later = await limiter.acquire();
		limiter.throttled(later, 1_000);
		// A second has passed: the rate has begun to climb back, by a hundredth of a request per minute.
		expect(limiter.requestsPerMinute).toBeCloseTo(240 * 0.85 * 0.85, 0);
	});

	it('paces evenly at the lowered rate and climbs back with the time since the 429, faster the longer none comes', async () => {
		const clock = new FakeClock();
		const limiter = new AdaptiveRateLimiter(240, clock);
		limiter.throttled(await limiter.acquire(), 0);
		const decreasedAt = clock.now();
		const lowered = limiter.requestsPerMinute;
		const times: number[] = [];
		for (let n = 0; n < 5; n++) times.push(await limiter.acquire());
		for (let n = 1; n < times.length; n++)
			expect(times[n] - times[n - 1]).toBeGreaterThanOrEqual(
				Math.floor(60_000 / limiter.requestsPerMinute),
			);
		clock.advance(decreasedAt + 60_000 - clock.now());
		expect(limiter.requestsPerMinute - lowered).toBeCloseTo(240 * 0.03 * 1 * 2, 0);
		clock.advance(30_000);
		expect(limiter.requestsPerMinute - lowered).toBeCloseTo(240 * 0.03 * 1.5 * 2.5, 0);
		clock.advance(30_000);
		expect(limiter.requestsPerMinute).toBe(240);
	});

	it('alone, never sends more than its ceiling in any 60 s: an eighth of it at once, the rest at four times its pace', async () => {
		const clock = new FakeClock();
		const limiter = new AdaptiveRateLimiter(40, clock);
		const times: number[] = [];
		for (let n = 0; n < 100; n++) times.push(await limiter.acquire());
		for (const time of times)
			expect(
				times.filter((other) => other > time - 60_000 && other <= time).length,
			).toBeLessThanOrEqual(40);
		expect(times.slice(0, 5).every((time) => time === times[0])).toBe(true);
		// 35 more at 160/min: 375 ms apart.
		expect(times[39] - times[0]).toBeGreaterThanOrEqual(35 * 375 - 1);
		expect(times[39] - times[0]).toBeLessThan(35 * 375 + 1_000);
	});
});
