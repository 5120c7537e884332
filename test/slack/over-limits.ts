import type { ApiCall } from '../../slack-standin/web-api';
import { METHOD_LIMITS, POSTS_PER_CHANNEL, TIER_PER_MINUTE } from '../../slack-standin/rate-limits';

/**
 * Every method's calls that Slack carried out beyond its tier in some minute, and the channels
 * with more posts in ten seconds than a burst and one a second allow: none, if the app kept to them.
 */
export function overLimits(calls: ApiCall[]): string[] {
	const over: string[] = [];
	const carried = calls.filter((call) => call.status === 200);
	const count = (list: ApiCall[], spanMs: number, max: number, what: string) => {
		for (const call of list) {
			const within = list.filter((other) => other.at > call.at - spanMs && other.at <= call.at);
			if (within.length > max) {
				over.push(`${what}: ${within.length} in ${spanMs} ms`);
				return;
			}
		}
	};
	for (const [method, limit] of Object.entries(METHOD_LIMITS)) {
		if (method === 'chat.postMessage') continue;
		const list = carried.filter((call) => call.method === method);
		count(list, 60_000, TIER_PER_MINUTE[limit.tier], method);
	}
	const posts = carried.filter((call) => call.method === 'chat.postMessage');
	for (const channel of new Set(posts.map((call) => call.params.channel)))
		count(
			posts.filter((call) => call.params.channel === channel),
			10_000,
			POSTS_PER_CHANNEL.burst + 10 * POSTS_PER_CHANNEL.perSecond,
			`chat.postMessage in ${channel}`,
		);
	return over;
}
