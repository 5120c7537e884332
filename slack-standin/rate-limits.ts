import type { Clock } from '../shared/clock';

/**
 * Slack's rate limits as the stand-in enforces them (https://docs.slack.dev/apis/web-api/rate-limits):
 * each Web API method allows so many calls per minute "per API method per workspace/team per app",
 * by tier, and chat.postMessage about one message per second per channel with short bursts. Over
 * the limit Slack answers HTTP 429 with `Retry-After` (seconds) and `{ ok: false, error: 'ratelimited' }`.
 * Tiers are "N+ per minute": the stand-in allows exactly N, the least Slack promises.
 */

const RATE_LIMITS = 'https://docs.slack.dev/apis/web-api/rate-limits';
const METHODS = 'https://docs.slack.dev/reference/methods';

/** Calls per minute of each tier. */
export const TIER_PER_MINUTE = { 1: 1, 2: 20, 3: 50, 4: 100 } as const;
export type Tier = keyof typeof TIER_PER_MINUTE;

export interface MethodLimit {
	/** The tier of the method's page; `special` methods are held to `tier` here (see `note`). */
	tier: Tier;
	special?: true;
	doc: string;
	note?: string;
}

const SPECIAL_AS_TIER_4 =
	'"Special rate limits apply" and the page gives no figure: held to Tier 4 here.';

/** Every Web API method the app calls, with the tier its page gives. */
export const METHOD_LIMITS: Record<string, MethodLimit> = {
	'auth.test': { tier: 4, special: true, doc: `${METHODS}/auth.test`, note: SPECIAL_AS_TIER_4 },
	'chat.postMessage': {
		// Per channel: see POSTS_PER_CHANNEL. The workspace-wide limit ("several hundred per minute")
		// is not enforced: one channel's limit is what the app meets first.
		tier: 4,
		special: true,
		doc: `${METHODS}/chat.postMessage`,
		note: 'one message per second per channel, short bursts allowed',
	},
	'chat.update': { tier: 3, doc: `${METHODS}/chat.update` },
	'chat.postEphemeral': { tier: 4, doc: `${METHODS}/chat.postEphemeral` },
	'chat.getPermalink': {
		tier: 4,
		special: true,
		doc: `${METHODS}/chat.getPermalink`,
		note: SPECIAL_AS_TIER_4,
	},
	'chat.startStream': { tier: 2, doc: `${METHODS}/chat.startStream` },
	'chat.appendStream': { tier: 4, doc: `${METHODS}/chat.appendStream` },
	'chat.stopStream': { tier: 2, doc: `${METHODS}/chat.stopStream` },
	// Tier 3 for internal and Marketplace apps; new commercially distributed non-Marketplace apps get
	// 1 per minute and 15 messages a page since 2025-05-29 (rate-limits page), not modelled here.
	'conversations.history': { tier: 3, doc: `${METHODS}/conversations.history` },
	'conversations.replies': { tier: 3, doc: `${METHODS}/conversations.replies` },
	'files.getUploadURLExternal': { tier: 4, doc: `${METHODS}/files.getUploadURLExternal` },
	'files.completeUploadExternal': { tier: 4, doc: `${METHODS}/files.completeUploadExternal` },
	'files.info': { tier: 4, doc: `${METHODS}/files.info` },
	'views.open': { tier: 4, doc: `${METHODS}/views.open` },
	'views.update': { tier: 4, doc: `${METHODS}/views.update` },
	'views.push': { tier: 4, doc: `${METHODS}/views.push` },
	'views.publish': { tier: 4, doc: `${METHODS}/views.publish` },
	'users.info': { tier: 4, doc: `${METHODS}/users.info` },
	'assistant.threads.setStatus': {
		tier: 4,
		special: true,
		doc: `${METHODS}/assistant.threads.setStatus`,
		note: SPECIAL_AS_TIER_4,
	},
	'assistant.threads.setTitle': {
		tier: 4,
		special: true,
		doc: `${METHODS}/assistant.threads.setTitle`,
		note: SPECIAL_AS_TIER_4,
	},
	'assistant.threads.setSuggestedPrompts': {
		tier: 4,
		special: true,
		doc: `${METHODS}/assistant.threads.setSuggestedPrompts`,
		note: SPECIAL_AS_TIER_4,
	},
	// "Tier 3: 50+ per minute" (their method pages).
	'functions.completeSuccess': { tier: 3, doc: `${METHODS}/functions.completeSuccess` },
	'functions.completeError': { tier: 3, doc: `${METHODS}/functions.completeError` },
	'agents.sessions.setStatus': {
		tier: 4,
		special: true,
		doc: `${METHODS}/agents.sessions.setStatus`,
		note: SPECIAL_AS_TIER_4,
	},
	'agents.sessions.rename': {
		tier: 4,
		special: true,
		doc: `${METHODS}/agents.sessions.rename`,
		note: SPECIAL_AS_TIER_4,
	},
};

/**
 * chat.postMessage into one channel (${RATE_LIMITS}, "Posting messages"): "1 per second, short
 * bursts >1 allowed". A bucket of `burst` messages that refills at one a second; the burst size is
 * not published, 3 is the stand-in's choice.
 */
export const POSTS_PER_CHANNEL = { perSecond: 1, burst: 3, doc: RATE_LIMITS } as const;

const MINUTE_MS = 60_000;

export interface RateLimitOptions {
	/**
	 * Multiplies every limit. Slack's own (1) unless a test raises (or lowers) them, saying why
	 * where it does.
	 */
	factor?: number;
	/** Calls per minute of single methods, instead of their tier's. */
	perMinute?: Record<string, number>;
	/** Off: no limit at all (a test that is not about limits and cannot spread its calls). */
	off?: boolean;
}

/** Where a call stands against the limits: allowed, or 429 with how many seconds to wait. */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/**
 * The windows of one stand-in: a sliding minute per workspace and method, a token bucket per
 * workspace and channel for chat.postMessage. Time is the given clock's, so tests decide it.
 */
export class RateWindows {
	private readonly minutes = new Map<string, number[]>();
	private readonly buckets = new Map<string, { tokens: number; at: number }>();

	constructor(
		private readonly clock: Clock,
		private readonly options: RateLimitOptions = {},
	) {}

	/** Counts the call against its windows, or refuses it without counting it. */
	take(team: string, method: string, channel: string | undefined): RateDecision {
		if (this.options.off) return { allowed: true };
		const now = this.clock.now();
		const factor = this.options.factor ?? 1;
		if (method === 'chat.postMessage' && channel) {
			const refused = this.bucket(`${team}/${channel}`, now, factor);
			if (refused) return refused;
		} else {
			const limit = METHOD_LIMITS[method];
			const perMinute =
				this.options.perMinute?.[method] ?? (limit ? TIER_PER_MINUTE[limit.tier] * factor : 0);
			if (perMinute > 0) {
				const refused = this.window(`${team}/${method}`, now, Math.max(1, Math.floor(perMinute)));
				if (refused) return refused;
			}
		}
		return { allowed: true };
	}

	private window(key: string, now: number, perMinute: number): RateDecision | undefined {
		const calls = (this.minutes.get(key) ?? []).filter((at) => at > now - MINUTE_MS);
		this.minutes.set(key, calls);
		if (calls.length >= perMinute) {
			// Free again when the oldest call of the window leaves it.
			const waitMs = calls[calls.length - perMinute] + MINUTE_MS - now;
			return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
		}
		calls.push(now);
		return undefined;
	}

	private bucket(key: string, now: number, factor: number): RateDecision | undefined {
		const perSecond = POSTS_PER_CHANNEL.perSecond * factor;
		const capacity = POSTS_PER_CHANNEL.burst * factor;
		const last = this.buckets.get(key) ?? { tokens: capacity, at: now };
		const tokens = Math.min(capacity, last.tokens + ((now - last.at) / 1000) * perSecond);
		if (tokens < 1) {
			this.buckets.set(key, { tokens, at: now });
			return {
				allowed: false,
				retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / perSecond)),
			};
		}
		this.buckets.set(key, { tokens: tokens - 1, at: now });
		return undefined;
	}
}
