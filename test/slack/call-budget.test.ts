import { webApi } from '@slack/bolt';
import { localSlackCredentials } from '../../slack-app/local';
import { CALL_SKIPPED, withCallPriority } from '../../slack-app/slack/call-budget';
import { slackClientOptions } from '../../slack-app/slack/slack-client';
import { slackErrorCode } from '../../slack-app/slack/errors';
import { startStandin, type Standin } from '../../slack-standin';
import { TIER_PER_MINUTE } from '../../slack-standin/rate-limits';
import { eventually } from '../support/eventually';
import { ManualClock } from '../support/manual-clock';

/**
 * The app's budget of Slack calls, with its own client options, against the stand-in's default
 * limits, both on one clock the test moves: what waits, in which order, what is skipped, and a 429
 * waited out and sent again once.
 */

let standin: Standin;
let clock: ManualClock;
let client: webApi.WebClient;

beforeEach(async () => {
	clock = new ManualClock(Date.now());
	const credentials = localSlackCredentials();
	standin = await startStandin({ ...credentials, clock });
	client = new webApi.WebClient(credentials.botToken, {
		...slackClientOptions(standin.apiUrl, undefined, clock),
		logLevel: webApi.LogLevel.ERROR,
	});
});
afterEach(() => standin.close());

/** An edit of a message that is not there: Slack refuses it, and counts it. */
const edit = (ts: string) =>
	client.chat.update({ channel: 'C0BUDGET', ts, text: 'x' }).catch(slackErrorCode);

const editsSent = () => standin.api.callsOf('chat.update').map((call) => call.params.ts);

it("holds calls past a method's tier until Slack's minute has room, the first priority first; skips a refresh", async () => {
	const perMinute = TIER_PER_MINUTE[3];
	// One edit now, the rest of the minute's a second later: one comes free at a time.
	await edit('1.0');
	await clock.advance(1000);
	await Promise.all(Array.from({ length: perMinute - 1 }, (_, n) => edit(`1.${n + 1}`)));
	expect(editsSent()).toHaveLength(perMinute);

	const normal = edit('2.normal');
	const first = withCallPriority('first', () => edit('2.first'));
	const skipped = await withCallPriority('skip', () => edit('2.skipped'));
	expect(skipped).toBe(CALL_SKIPPED);
	expect(editsSent()).toHaveLength(perMinute);

	await clock.advance(59_000);
	await first;
	expect(editsSent().slice(perMinute)).toEqual(['2.first']);
	await clock.advance(1000);
	await normal;
	expect(editsSent().slice(perMinute)).toEqual(['2.first', '2.normal']);
	// Slack refused none of them for their rate.
	expect(standin.api.calls.filter((call) => call.status === 429)).toEqual([]);
});

it('posts into one channel one a second', async () => {
	const posts = Promise.all(
		[1, 2, 3].map((n) => client.chat.postMessage({ channel: 'C0PACE', text: `m${n}` })),
	);
	await eventually('the first post', () => standin.api.callsOf('chat.postMessage').length === 1);
	expect(standin.api.callsOf('chat.postMessage')).toHaveLength(1);
	await clock.advance(1000);
	await eventually('the second post', () => standin.api.callsOf('chat.postMessage').length === 2);
	await clock.advance(1000);
	await posts;
	expect(standin.workspace.channelMessages('C0PACE').map((message) => message.text)).toEqual([
		'm1',
		'm2',
		'm3',
	]);
});

it("waits out a 429's Retry-After on the clock and sends the call again: posted once", async () => {
	standin.api.rateLimit('chat.postMessage', 1, 5);
	const post = client.chat.postMessage({ channel: 'C0LIMITED', text: 'once' });
	await eventually('the 429', () => standin.api.callsOf('chat.postMessage').length === 1);
	await clock.advance(4000);
	expect(standin.api.callsOf('chat.postMessage')).toHaveLength(1);
	await clock.advance(1000);
	await post;
	expect(standin.api.callsOf('chat.postMessage').map((call) => call.status)).toEqual([429, 200]);
	expect(standin.workspace.channelMessages('C0LIMITED')).toHaveLength(1);
});
