import { webApi } from '@slack/bolt';
import { systemClock } from '../../shared/runtime';
import { localSlackCredentials } from '../../slack-app/local';
import { slackClientOptions } from '../../slack-app/slack/slack-client';
import {
	ANSWER_EVENT,
	REQUEST_EVENT,
	RESULT_EVENT,
	SlackThreads,
} from '../../slack-app/slack/slack-thread';
import { BOT, startStandin, type Standin } from '../../slack-standin';
import { content, Stack } from './harness';

/**
 * Slack did what the app asked, and its answer was lost on the way (the connection dropped, or the
 * answer came after the client's timeout). A message posted again blindly would show twice: each
 * result, parent, image and answer must still show exactly once, and the request run to its end.
 */

let stack: Stack;

let channelCounter = 0;
/** Each test has its own channel, so parents and threads never mix. */
function freshChannel(): string {
	channelCounter++;
	return `C0LOST${channelCounter}`;
}

function lostCalls(method: string): number {
	return stack.standin.api.callsOf(method).filter((call) => call.lost).length;
}

/** Posts of messages carrying this kind of metadata into a channel, whatever their answer. */
function postsOf(eventType: string, channel: string): number {
	return stack.standin.api
		.callsOf('chat.postMessage')
		.filter(
			(call) => call.params.channel === channel && call.params.metadata?.includes(`"${eventType}"`),
		).length;
}

/** Sends a /gpu command and waits until its parent shows it ended (`ended`) and the app is idle. */
async function runToTheEnd(text: string, user: string, channel: string, ended = /Succeeded in/) {
	const reply = await stack.command(text, user, channel);
	expect(reply.status).toBe(200);
	const parent = await stack.waitForParent(1, channel);
	await stack.waitForParentText(parent.ts, ended, 20_000, channel);
	await stack.app.idle();
	return parent;
}

function jobToTheEnd(channel: string, user: string) {
	return runToTheEnd(`job ${stack.emulator.genericEndpoint} {"prompt": "${user}"}`, user, channel);
}

function resultsIn(channel: string, parentTs: string) {
	return stack
		.replies(parentTs, channel)
		.filter((message) => message.metadata?.event_type === RESULT_EVENT);
}

describe('an answer from Slack that never arrives', () => {
	beforeAll(async () => {
		stack = await Stack.start({ nativeStreaming: false });
	});
	afterAll(() => stack.close());

	it("a job's result: shown once in the thread", async () => {
		const channel = freshChannel();
		stack.standin.api.loseAnswers('chat.postMessage', 1, { eventType: RESULT_EVENT });
		const parent = await jobToTheEnd(channel, 'U0LR');
		expect(lostCalls('chat.postMessage')).toBe(1);
		const results = resultsIn(channel, parent.ts);
		expect(results.map((message) => message.metadata?.event_payload.key)).toEqual([
			expect.stringMatching(/:result$/),
		]);
		expect(content(results[0])).toContain('Output');
		// The thread showed it: not posted again.
		expect(postsOf(RESULT_EVENT, channel)).toBe(1);
	});

	it('the parent: one parent in the channel, and the request still runs to its result', async () => {
		const channel = freshChannel();
		const lostBefore = lostCalls('chat.postMessage');
		stack.standin.api.loseAnswers('chat.postMessage', 1, { eventType: REQUEST_EVENT });
		const parent = await jobToTheEnd(channel, 'U0LP');
		expect(lostCalls('chat.postMessage')).toBe(lostBefore + 1);
		expect(stack.parents(channel)).toHaveLength(1);
		expect(resultsIn(channel, parent.ts)).toHaveLength(1);
		// Nothing private told the asker it failed.
		expect(stack.ephemeralTexts('U0LP')).toEqual([]);
		// Found in the channel's history: not posted again.
		expect(postsOf(REQUEST_EVENT, channel)).toBe(1);
		expect(
			stack.standin.api
				.callsOf('conversations.history')
				.some((call) => call.params.channel === channel),
		).toBe(true);
	});

	it('the parent, when the post never reached Slack: looked for, not found, posted again once', async () => {
		const channel = freshChannel();
		stack.standin.api.loseAnswers('chat.postMessage', 1, {
			eventType: REQUEST_EVENT,
			carriedOut: false,
		});
		const parent = await jobToTheEnd(channel, 'U0LA');
		expect(postsOf(REQUEST_EVENT, channel)).toBe(2);
		expect(stack.parents(channel)).toHaveLength(1);
		expect(resultsIn(channel, parent.ts)).toHaveLength(1);
	});

	it('an image upload: each image once in the thread', async () => {
		const channel = freshChannel();
		stack.standin.api.loseAnswers('files.completeUploadExternal', 1);
		const parent = await runToTheEnd('image a lighthouse at dusk --count 2', 'U0LI', channel);
		expect(lostCalls('files.completeUploadExternal')).toBe(1);
		const names = stack
			.replies(parent.ts, channel)
			.flatMap((message) =>
				message.fileIds.map((id) => stack.standin.workspace.files.get(id)?.name ?? id),
			);
		expect(names).toHaveLength(2);
		expect(new Set(names).size).toBe(2);
		expect(
			stack.standin.api
				.callsOf('files.completeUploadExternal')
				.filter((call) => call.params.thread_ts === parent.ts),
		).toHaveLength(1);
	});

	it('a chat answer (edited as it grows): one answer, finished', async () => {
		const channel = freshChannel();
		const lostBefore = lostCalls('chat.postMessage');
		stack.standin.api.loseAnswers('chat.postMessage', 1, { eventType: ANSWER_EVENT });
		const parent = await runToTheEnd('chat Why are spot GPUs cheaper?', 'U0LC', channel);
		expect(lostCalls('chat.postMessage')).toBe(lostBefore + 1);
		const answers = stack
			.replies(parent.ts, channel)
			.filter((message) => message.metadata?.event_type === ANSWER_EVENT);
		expect(answers).toHaveLength(1);
		expect(answers[0].text.length).toBeGreaterThan(0);
		expect(content(answers[0])).not.toMatch(/failed|stopped/i);
		expect(postsOf(ANSWER_EVENT, channel)).toBe(1);
	});
});

describe('an answer from Slack that never arrives, while an answer streams natively', () => {
	beforeAll(async () => {
		stack = await Stack.start({ nativeStreaming: true });
	});
	afterAll(() => stack.close());

	const question = 'chat What does a spot GPU cost?';

	function answersIn(channel: string, parentTs: string) {
		return stack
			.replies(parentTs, channel)
			.filter((message) => message.metadata?.event_type === ANSWER_EVENT);
	}

	/** The answer to `question` when nothing is lost, to compare with. */
	async function cleanAnswer(): Promise<string> {
		const channel = freshChannel();
		const parent = await runToTheEnd(question, 'U0LN', channel);
		return answersIn(channel, parent.ts)[0].text;
	}

	it('stopping the stream: one finished answer, the stop not sent again', async () => {
		const channel = freshChannel();
		const stopsBefore = stack.standin.api.callsOf('chat.stopStream').length;
		stack.standin.api.loseAnswers('chat.stopStream', 1);
		const parent = await runToTheEnd(question, 'U0LS', channel);
		const answers = answersIn(channel, parent.ts);
		expect(answers).toHaveLength(1);
		expect(answers[0].streaming).toBe(false);
		expect(content(answers[0])).not.toMatch(/stopped/);
		expect(stack.standin.api.callsOf('chat.stopStream').length).toBe(stopsBefore + 1);
	});

	it('starting the stream, lost on the way: that answer goes by edits, native streaming stays on', async () => {
		const channel = freshChannel();
		stack.standin.api.loseAnswers('chat.startStream', 1, { carriedOut: false });
		const parent = await runToTheEnd(question, 'U0LT', channel);
		const answers = answersIn(channel, parent.ts);
		expect(answers).toHaveLength(1);
		expect(answers[0].streamed).toBe(false);
		expect(stack.replies(parent.ts, channel)).toHaveLength(1);
		// The next answer streams natively again.
		const next = freshChannel();
		const nextParent = await runToTheEnd(question, 'U0LT', next);
		expect(answersIn(next, nextParent.ts)[0].streamed).toBe(true);
	});

	it('appending to the stream: no text shown twice; the answer says it stopped', async () => {
		const clean = await cleanAnswer();
		const channel = freshChannel();
		// The second piece: the first starts the stream.
		stack.standin.api.loseAnswers('chat.appendStream', 1);
		const parent = await runToTheEnd(question, 'U0LA', channel, /Failed after|Succeeded in/);
		const answers = answersIn(channel, parent.ts);
		expect(answers).toHaveLength(1);
		expect(answers[0].streaming).toBe(false);
		expect(clean.startsWith(answers[0].text)).toBe(true);
		expect(content(answers[0])).toMatch(/The answer stopped: Slack did not answer in time/);
	});
});

describe("an answer later than the client's timeout", () => {
	let standin: Standin;
	let threads: SlackThreads;
	beforeAll(async () => {
		const credentials = localSlackCredentials();
		standin = await startStandin(credentials);
		// The app's own client options, with a timeout short enough for a test.
		const client = new webApi.WebClient(credentials.botToken, {
			...slackClientOptions(standin.apiUrl),
			timeout: 300,
			logLevel: webApi.LogLevel.ERROR,
		});
		threads = new SlackThreads(client, () => BOT.userId, systemClock);
	});
	afterAll(() => standin.close());

	function newThread(channel: string) {
		const parent = standin.workspace.post({
			channel,
			user: BOT.userId,
			botId: BOT.botId,
			text: 'a parent',
		});
		return { channel, threadTs: parent.ts };
	}

	const callsIn = (method: string, channel: string) =>
		standin.api.callsOf(method).filter((call) => call.params.channel === channel);

	const part = (key: string) => ({
		kind: 'message' as const,
		key,
		message: { text: `result ${key}`, blocks: [] },
	});

	it('a post is not sent again: the thread shows it, once', async () => {
		const thread = newThread('C0LATE1');
		standin.api.loseAnswers('chat.postMessage', 1, { lateByMs: 1000 });
		await threads.postParts(thread, [part('late:result')]);
		expect(standin.workspace.replies(thread.channel, thread.threadTs)).toHaveLength(1);
		expect(callsIn('chat.postMessage', thread.channel)).toHaveLength(1);
	});

	it('a read is asked again, as before', async () => {
		const thread = newThread('C0LATE2');
		standin.api.loseAnswers('conversations.replies', 1, { lateByMs: 1000 });
		await threads.postParts(thread, [part('read:result')]);
		expect(standin.workspace.replies(thread.channel, thread.threadTs)).toHaveLength(1);
		expect(callsIn('conversations.replies', thread.channel)).toHaveLength(2);
	});
});
