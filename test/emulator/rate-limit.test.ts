import { startEmulator, type RunningEmulator } from '../../emulator';
import { RateLimiter } from '../../emulator/rate-limit';
import { api, expectProblem, ManualClock, orgPath } from './helpers';

let emulator: RunningEmulator;
afterEach(() => emulator.close());

const list = () => api(emulator, 'GET', orgPath(emulator, '/inference-endpoints?page_size=1'));

describe('per-key rate limit on the management API', () => {
	it('allows 240 requests a minute by default, then answers 429 problem with Retry-After', async () => {
		const clock = new ManualClock();
		emulator = await startEmulator({ clock });
		const statuses = await Promise.all(
			Array.from({ length: 240 }, () => list().then((reply) => reply.status)),
		);
		expect(statuses.every((status) => status === 200)).toBe(true);
		const refused = await list();
		const problem = expectProblem(refused, 429);
		expect(problem.detail).toContain('240');
		expect(refused.headers['retry-after']).toBe('60');
	});

	it('slides a 60 s window: capacity returns as old requests leave it', async () => {
		const clock = new ManualClock();
		emulator = await startEmulator({ clock, rateLimitPerMinute: 3 });
		expect((await list()).status).toBe(200);
		await clock.advance(20_000);
		expect((await list()).status).toBe(200);
		expect((await list()).status).toBe(200);
		const refused = await list();
		expect(refused.status).toBe(429);
		expect(refused.headers['retry-after']).toBe('40');
		await clock.advance(39_000);
		expect((await list()).headers['retry-after']).toBe('1');
		await clock.advance(1_000);
		expect((await list()).status).toBe(200);
		expect((await list()).status).toBe(429);
	});

	it('does not count requests without a valid key', async () => {
		const clock = new ManualClock();
		emulator = await startEmulator({ clock, rateLimitPerMinute: 2 });
		for (let i = 0; i < 5; i++)
			expect(
				(await api(emulator, 'GET', orgPath(emulator, '/inference-endpoints'), { key: 'bad' }))
					.status,
			).toBe(401);
		expect((await list()).status).toBe(200);
		expect((await list()).status).toBe(200);
		expect((await list()).status).toBe(429);
	});

	it.each([0, false] as const)('is off with rateLimitPerMinute %p', async (rateLimitPerMinute) => {
		emulator = await startEmulator({ rateLimitPerMinute });
		const statuses = await Promise.all(
			Array.from({ length: 300 }, () => list().then((reply) => reply.status)),
		);
		expect(new Set(statuses)).toEqual(new Set([200]));
	});
});

describe('RateLimiter', () => {
	it('keeps one window per key', () => {
		const limiter = new RateLimiter(2);
		expect([limiter.admit('a', 0), limiter.admit('a', 1), limiter.admit('a', 2)]).toEqual([
			0, 0, 60,
		]);
		expect(limiter.admit('b', 2)).toBe(0);
		expect(limiter.admit('a', 60_000)).toBe(0);
		expect(limiter.admit('a', 60_000)).toBe(1);
		expect(limiter.admit('a', 60_001)).toBe(0);
	});
});
