import { startStandin, type Standin } from '../../slack-standin';
import {
	METHOD_LIMITS,
	POSTS_PER_CHANNEL,
	TIER_PER_MINUTE,
	type RateLimitOptions,
} from '../../slack-standin/rate-limits';
import { ManualClock } from '../support/manual-clock';

/**
 * The stand-in's rate limits over HTTP, on a clock the test moves: each method's tier per
 * workspace, chat.postMessage's per channel, and Slack's answer over a limit (429, `Retry-After`,
 * `ratelimited`, nothing done).
 */

const TOKEN = 'xoxb-rate-limits-test';
let standin: Standin;
let clock: ManualClock;

async function start(rateLimits?: RateLimitOptions): Promise<void> {
	clock = new ManualClock();
	standin = await startStandin({
		botToken: TOKEN,
		signingSecret: 'rate-limits-secret',
		clock,
		...(rateLimits ? { rateLimits } : {}),
	});
}
afterEach(() => standin.close());

async function call(
	method: string,
	params: Record<string, string> = {},
	token = TOKEN,
): Promise<{ status: number; retryAfter: string | null; body: Record<string, unknown> }> {
	const response = await fetch(`${standin.apiUrl}${method}`, {
		method: 'POST',
		headers: {
			authorization: `Bearer ${token}`,
			'content-type': 'application/x-www-form-urlencoded',
		},
		body: new URLSearchParams(params).toString(),
	});
	return {
		status: response.status,
		retryAfter: response.headers.get('retry-after'),
		body: (await response.json()) as Record<string, unknown>,
	};
}

/** Calls `method` `times` times at once (on the stand-in's clock) and returns the statuses. */
async function burst(method: string, times: number, params: Record<string, string> = {}) {
	const statuses: number[] = [];
	for (let i = 0; i < times; i++) statuses.push((await call(method, params)).status);
	return statuses;
}

const tiered = Object.entries(METHOD_LIMITS).filter(([method]) => method !== 'chat.postMessage');

describe("Slack's tiers, per workspace and method, by default", () => {
	beforeEach(() => start());

	it.each(tiered)(
		'%s: its tier per minute, then 429 with Retry-After until the minute has passed',
		async (method, limit) => {
			const perMinute = TIER_PER_MINUTE[limit.tier];
			// Refusals count as Slack counts them: a call is a call, answered ok or not.
			const statuses = await burst(method, perMinute, { channel: 'C0OTHER' });
			expect(statuses.every((status) => status === 200)).toBe(true);

			const over = await call(method, { channel: 'C0OTHER' });
			expect(over).toEqual({
				status: 429,
				retryAfter: '60',
				body: { ok: false, error: 'ratelimited' },
			});
			expect(standin.api.callsOf(method).at(-1)).toMatchObject({
				status: 429,
				error: 'ratelimited',
				retryAfter: 60,
			});

			await clock.advance(59_000);
			expect((await call(method)).retryAfter).toBe('1');
			await clock.advance(1000);
			expect((await call(method)).status).toBe(200);
		},
	);

	it("one method's window is its own: another method still has its whole minute", async () => {
		await burst('chat.update', TIER_PER_MINUTE[3]);
		expect((await call('chat.update')).status).toBe(429);
		expect(await burst('views.publish', TIER_PER_MINUTE[4])).not.toContain(429);
	});

	it("a call with another workspace's token is not counted against this one", async () => {
		for (let i = 0; i < 5; i++) await call('chat.update', {}, 'xoxb-someone-else');
		expect(await burst('chat.update', TIER_PER_MINUTE[3])).not.toContain(429);
	});

	it('refuses nothing it carried out: a message refused with 429 is not posted', async () => {
		const channel = 'C0RATE';
		for (let i = 0; i < POSTS_PER_CHANNEL.burst; i++)
			await call('chat.postMessage', { channel, text: `m${i}` });
		await call('chat.postMessage', { channel, text: 'over' });
		expect(standin.workspace.channelMessages(channel).map((message) => message.text)).toEqual([
			'm0',
			'm1',
			'm2',
		]);
	});
});

describe('chat.postMessage: about one a second per channel, short bursts allowed', () => {
	beforeEach(() => start());

	it('takes a short burst, then one a second; 429 with Retry-After: 1 in between', async () => {
		const channel = 'C0BURST';
		const post = (text: string) => call('chat.postMessage', { channel, text });
		for (let i = 0; i < POSTS_PER_CHANNEL.burst; i++)
			expect((await post(`b${i}`)).status).toBe(200);
		const over = await post('too soon');
		expect(over).toEqual({
			status: 429,
			retryAfter: '1',
			body: { ok: false, error: 'ratelimited' },
		});

		await clock.advance(1000);
		expect((await post('a second later')).status).toBe(200);
		expect((await post('at once again')).status).toBe(429);
		await clock.advance(500);
		expect((await post('half a second later')).status).toBe(429);
		await clock.advance(500);
		expect((await post('a second after the last')).status).toBe(200);
	});

	it('each channel has its own limit, and replies in threads count for their channel', async () => {
		const first = await call('chat.postMessage', { channel: 'C0ONE', text: 'parent' });
		const threadTs = String(first.body.ts);
		for (let i = 1; i < POSTS_PER_CHANNEL.burst; i++)
			await call('chat.postMessage', { channel: 'C0ONE', thread_ts: threadTs, text: `r${i}` });
		expect(
			(await call('chat.postMessage', { channel: 'C0ONE', thread_ts: threadTs, text: 'over' }))
				.status,
		).toBe(429);
		expect((await call('chat.postMessage', { channel: 'C0TWO', text: 'elsewhere' })).status).toBe(
			200,
		);
	});

	it('is not held to a tier per minute: a minute of one a second goes through', async () => {
		const statuses: number[] = [];
		for (let second = 0; second < 120; second++) {
			statuses.push(
				(await call('chat.postMessage', { channel: 'C0STEADY', text: `${second}` })).status,
			);
			await clock.advance(1000);
		}
		expect(statuses).not.toContain(429);
	});
});

describe('limits a test sets, never silently', () => {
	it('lowers a method to Tier 1 (one a minute) for a test of a slow method', async () => {
		await start({ perMinute: { 'users.info': TIER_PER_MINUTE[1] } });
		expect((await call('users.info', { user: 'U1' })).status).toBe(200);
		expect((await call('users.info', { user: 'U1' })).retryAfter).toBe('60');
	});

	it('raises every limit by a factor', async () => {
		await start({ factor: 10 });
		expect(await burst('chat.update', TIER_PER_MINUTE[3] * 10)).not.toContain(429);
		expect((await call('chat.update')).status).toBe(429);
		expect(
			await burst('chat.postMessage', POSTS_PER_CHANNEL.burst * 10, { channel: 'C0', text: 'x' }),
		).not.toContain(429);
	});
});
