import { randomUUID } from 'node:crypto';
import { systemClock } from '../../shared/runtime';
import {
	LocalCallLedger,
	type CallAttempt,
	type CallCounter,
	type CallLedger,
	type SentCall,
} from '../slack/call-budget';
import { redisInTime } from './timeout';

/**
 * The Slack call budget's counts in Redis, so that replicas together keep to one workspace's limits
 * (https://docs.slack.dev/apis/web-api/rate-limits: per method per workspace, and chat.postMessage
 * per channel) instead of each keeping to all of them. One sorted set per limit holds its calls,
 * scored by when each counts until, minus the span: a call under way by when its answer will have
 * come at the latest (its timeout), an answered one by when it was answered, as the process's own
 * count does. Each step is one script, so two replicas never both take the last room. Time is
 * Redis's (TIME), the one clock every replica reads alike.
 *
 * When Redis does not answer in time (SHARED_STATE_WAIT_MS), a call is counted in this process
 * alone instead, as without replicas: a result or a private note is not held back by Redis, and
 * what several replicas then send beyond a limit Slack answers with 429, which each waits out.
 * Such a call is not counted in Redis afterwards.
 */

/** Counts the call when the limit has room: 0; else ms until room may come. */
const TAKE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local held = redis.call('PTTL', KEYS[2])
if held > 0 then return held end
local limit = tonumber(ARGV[1])
local span = tonumber(ARGV[2])
local timeout = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - span)
local used = redis.call('ZCARD', KEYS[1])
if used < limit then
  redis.call('ZADD', KEYS[1], now + timeout, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], timeout + span)
  return 0
end
local first = tonumber(redis.call('ZRANGE', KEYS[1], used - limit, used - limit, 'WITHSCORES')[2])
if first > now then return -1 end
return math.max(1, first + span - now)`;

/** The call was answered: it counts for the span from now. */
const DONE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;

/** Slack answered 429: the limit is held for Retry-After, or longer if it was already. */
const HOLD_SCRIPT = `
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], '1', 'PX', ARGV[1]) end
return 0`;

/**
 * How soon to look again when the room depends on a call under way in another replica: its answer
 * frees room, and no event says when it comes.
 */
const UNDER_WAY_RECHECK_MS = 50;

/** Sends one command, waiting for Redis as the shared state does (`RedisSharedState`). */
export type RedisCommand = (args: string[]) => Promise<unknown>;

export class RedisCallLedger implements CallLedger {
	private readonly alone = new LocalCallLedger(systemClock);

	constructor(
		private readonly command: RedisCommand,
		/** Where the app's keys begin in Redis. */
		private readonly prefix: string,
		/** Longest wait for Slack's answer: a call under way counts at least this long. */
		private readonly timeoutMs: number,
	) {}

	counter(key: string, limit: number, spanMs: number): CallCounter {
		return new RedisCounter(
			this.command,
			this.alone.counter(key, limit, spanMs),
			`${this.prefix}budget:${key}`,
			`${this.prefix}budget-held:${key}`,
			limit,
			spanMs,
			this.timeoutMs,
		);
	}
}

class RedisCounter implements CallCounter {
	private underWay = 0;

	constructor(
		private readonly command: RedisCommand,
		/** This process's own count of the limit, while Redis does not answer. */
		private readonly alone: CallCounter,
		private readonly calls: string,
		private readonly held: string,
		private readonly limit: number,
		private readonly spanMs: number,
		private readonly timeoutMs: number,
	) {}

	async attempt(): Promise<CallAttempt> {
		const member = randomUUID();
		const taking = this.command([
			'EVAL',
			TAKE_SCRIPT,
			'2',
			this.calls,
			this.held,
			String(this.limit),
			String(this.spanMs),
			String(this.timeoutMs),
			member,
		]).then(Number);
		let waitMs: number;
		try {
			waitMs = await redisInTime(taking);
		} catch {
			// Counted here instead: when Redis answers late, the count it took is given back, or calls
			// sent long before would hold the limit's room for its span from then.
			void taking.then(
				(late) =>
					late === 0
						? this.command(['ZREM', this.calls, member]).catch(() => undefined)
						: undefined,
				() => undefined,
			);
			return this.alone.attempt();
		}
		if (waitMs < 0) return { waitMs: UNDER_WAY_RECHECK_MS };
		if (waitMs > 0) return { waitMs };
		this.underWay++;
		return { sent: this.sent(member) };
	}

	hold(seconds: number): void {
		this.alone.hold(seconds);
		void this.command(['EVAL', HOLD_SCRIPT, '1', this.held, String(seconds * 1000)]).catch(
			// Closed: the replica is stopping.
			() => undefined,
		);
	}

	/** Redis keeps the counts: this process holds nothing once its own calls are answered. */
	idle(): boolean {
		return this.underWay === 0 && this.alone.idle();
	}

	private sent(member: string): SentCall {
		return {
			done: () => {
				this.underWay--;
				this.answered(member);
			},
		};
	}

	private answered(member: string): void {
		void this.command(['EVAL', DONE_SCRIPT, '1', this.calls, member, String(this.spanMs)]).catch(
			// Closed: the replica is stopping.
			() => undefined,
		);
	}
}
