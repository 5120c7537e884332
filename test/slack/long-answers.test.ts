import { LogLevel, webApi } from '@slack/bolt';
import { systemClock } from '../../shared/runtime';
import { ANSWER_MAX_LENGTH } from '../../slack-app/messages/chat';
import { escapeText } from '../../slack-app/messages/format';
import { AnswerWriter } from '../../slack-app/features/answer-stream';
import { conversationFromThread } from '../../slack-app/features/conversation';
import { slackClientOptions } from '../../slack-app/slack/slack-client';
import { REQUEST_EVENT, SlackThreads } from '../../slack-app/slack/slack-thread';
import { BOT, startStandin, TEAM, type Standin } from '../../slack-standin';
import type { ApiCall } from '../../slack-standin/web-api';
import { CapturingLogger } from './harness';

/**
 * Long model answers written into a thread by the app's AnswerWriter, through the real WebClient,
 * into the stand-in, which refuses what Slack refuses. The emulator's model answers in a sentence or
 * two, so the answer's pieces are given here; everything from the writer on is the app's own code.
 */

const TOKEN = 'xoxb-long-answers';
const USER = 'U0READER';
let standin: Standin;
let client: webApi.WebClient;
let threads: SlackThreads;
const logger = new CapturingLogger();

beforeAll(async () => {
	standin = await startStandin({ botToken: TOKEN, signingSecret: 'long-answers-secret' });
	client = new webApi.WebClient(TOKEN, {
		...slackClientOptions(standin.apiUrl),
		logLevel: LogLevel.ERROR,
	});
	threads = new SlackThreads(client, () => BOT.userId, systemClock);
});
afterAll(() => standin.close());

function overLimit(calls: ApiCall[]): string[] {
	return calls
		.filter(
			(call) =>
				(call.error !== undefined &&
					/^(invalid_blocks|invalid_arguments|msg_too_long|msg_blocks_too_long|msg_blocks_too_many)$/.test(
						call.error,
					)) ||
				(call.warnings?.length ?? 0) > 0,
		)
		.map((call) => `${call.method}: ${call.error ?? call.warnings?.join(', ')}`);
}

/** Text with words, line breaks and characters Slack's escaping lengthens. */
function prose(characters: number, seed: string): string {
	const sentence = `${seed} costs <5% more & runs on A100s; see the table below.\n`;
	return sentence.repeat(Math.ceil(characters / sentence.length)).slice(0, characters);
}

async function* pieces(...parts: string[]): AsyncIterable<string> {
	for (const part of parts) yield part;
}

async function answer(native: boolean, channel: string, ...parts: string[]) {
	standin.api.setNativeStreaming(native);
	const parent = standin.workspace.post({
		channel,
		user: BOT.userId,
		botId: BOT.botId,
		text: 'the question',
		metadata: { event_type: REQUEST_EVENT, event_payload: { prompt: 'the question' } },
	});
	const writer = new AnswerWriter({
		client,
		threads,
		clock: systemClock,
		logger,
		nativeStreaming: native,
		intervalMs: 1000,
	});
	const before = standin.api.calls.length;
	const result = await writer.write(
		{ thread: { channel, threadTs: parent.ts }, user: USER, team: TEAM.id, ref: `ref-${channel}` },
		pieces(...parts),
	);
	const replies = standin.workspace.replies(channel, parent.ts);
	return { result, replies, parent, calls: standin.api.calls.slice(before) };
}

describe.each([
	['native streaming', true],
	['message edits', false],
])('a long answer by %s', (_how, native) => {
	const channel = native ? 'C0LONGNATIVE' : 'C0LONGEDITS';

	it('a 13,000-character piece arriving at once is sent within Slack per-call limits', async () => {
		const whole = prose(13_174, 'Region eu-west');
		const { result, replies, calls } = await answer(native, `${channel}1`, 'Hello. ', whole);
		expect(overLimit(calls)).toEqual([]);
		expect(result.state).toBe('done');
		const shown = replies.map((reply) => reply.text).join('');
		expect(shown.replace(/…/g, '')).toContain(escapeText(whole).slice(-200));
	});

	it('a 30,000-character answer continues in next messages, each within the limits, nothing lost', async () => {
		const whole = prose(30_000, 'Node pool');
		const { result, replies, calls, parent } = await answer(
			native,
			`${channel}2`,
			whole.slice(0, 9000),
			whole.slice(9000, 21_000),
			whole.slice(21_000),
		);
		expect(overLimit(calls)).toEqual([]);
		expect(result.state).toBe('done');
		expect(replies.length).toBeGreaterThanOrEqual(3);
		for (const reply of replies.slice(0, -1))
			expect(JSON.stringify(reply.blocks)).toMatch(/Continued in the next message/);
		// Read back as the conversation, the parts make the whole answer again.
		const thread = await threads.read({ channel: `${channel}2`, threadTs: parent.ts });
		const turns = conversationFromThread(thread, BOT.userId);
		expect(turns.map((turn) => turn.role)).toEqual(['user', 'assistant']);
		expect(turns[1].content).toBe(whole);
		for (const reply of replies) expect(reply.text.length).toBeLessThanOrEqual(ANSWER_MAX_LENGTH);
	});
});
