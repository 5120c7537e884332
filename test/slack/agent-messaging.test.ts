import { DIRECT_MESSAGE } from '../../slack-standin';
import { SUGGESTED_PROMPTS } from '../../slack-app/messages/assistant';
import { content, Stack, USER } from './harness';
import { legacyManifest } from './legacy-app';
import { assistantQuestion, finishedAnswers, modelCalls } from './retried-events';
import { eventually } from '../support/eventually';
import { ManualClock } from '../support/manual-clock';

/**
 * The app as a new Slack app has it (agent messaging, https://docs.slack.dev/ai/agent-sessions),
 * through signed requests on the stand-in created from slack-app/manifest.yaml: the Messages tab,
 * conversations in their own threads, sessions and Slack's stop button; and an installation of the
 * app as created before agent messaging, which keeps the assistant container.
 */

const CANCELS = /\/jobs\/[^/]+$/;

describe('agent messaging (an app created now)', () => {
	let stack: Stack;
	beforeAll(async () => {
		stack = await Stack.start({ emulator: { jobDurationMs: 300 } });
	});
	afterAll(() => stack.close());

	it('offers its suggested prompts at the top of the Messages tab when the person opens it', async () => {
		const reply = await stack.standin.app.appHomeOpened(USER, 'messages');
		expect(reply.status).toBe(200);
		const channel = stack.standin.workspace.directMessageOf(USER);
		const offered = await stack.standin.waitFor(
			() => stack.standin.workspace.messagesTabPrompts.get(channel),
			10_000,
			'suggested prompts in the Messages tab',
		);
		expect(offered.prompts).toEqual(SUGGESTED_PROMPTS);
		// Not the assistant container's call: no thread is named.
		const call = stack.standin.api.callsOf('assistant.threads.setSuggestedPrompts').at(-1);
		expect(call?.params.thread_ts).toBeUndefined();
	});

	it('answers a message in its own thread, as a session titled after it, and takes the next turn there', async () => {
		const parentsBefore = stack.parents(DIRECT_MESSAGE.id).length;
		const callsBefore = modelCalls(stack);
		const { message } = await stack.standin.postAsUser(
			USER,
			DIRECT_MESSAGE.id,
			'How do interruptible nodes work?',
		);
		const answers = await stack.standin.waitFor(
			() => finishedAnswers(stack, message.ts),
			15_000,
			'the answer in the message’s thread',
		);
		expect(answers).toHaveLength(1);
		// The person's message is the thread; the app posts no parent of its own beside it.
		expect(stack.parents(DIRECT_MESSAGE.id)).toHaveLength(parentsBefore);
		const session = await stack.standin.waitFor(
			() => {
				const found = stack.standin.workspace.session(DIRECT_MESSAGE.id, message.ts);
				return found?.status === 'active' ? found : undefined;
			},
			10_000,
			'the session to be active again',
		);
		expect(session.title).toBe('How do interruptible nodes work?');
		expect(session.history).toEqual(['processing', 'active']);

		await stack.standin.postAsUser(USER, DIRECT_MESSAGE.id, 'And queues?', message.ts);
		await stack.standin.waitFor(
			() => (finishedAnswers(stack, message.ts)?.length ?? 0) >= 2 || undefined,
			15_000,
			'the second turn’s answer',
		);
		expect(modelCalls(stack) - callsBefore).toBe(2);
		const lastRequest = stack.emulator.requests.filter((request) =>
			/\/v1\/chat\/completions$/.test(request.path),
		);
		expect(lastRequest.at(-1)?.body).toContain('How do interruptible nodes work?');
	});

	it('cancels the GPU job once when the stop button of its thread is clicked, and leaves processing', async () => {
		const cancelsBefore = stack.serviceCalls('DELETE', CANCELS);
		await stack.command(`job ${stack.emulator.slowEndpoint} {"n": 1}`);
		const parent = await stack.waitForParent(stack.parents().length + 1);
		await stack.waitForParentText(parent.ts, /Cancel/);
		const session = await stack.standin.waitFor(
			() => stack.standin.workspace.session(parent.channel, parent.ts),
			10_000,
			'the job’s session',
		);
		expect(session).toMatchObject({ status: 'processing', title: 'GPU job on batch-echo' });

		expect(await stack.standin.stopSession(USER, parent.channel, parent.ts)).toBe(true);
		await stack.waitForParentText(parent.ts, /Cancelled/, 15_000);
		await stack.waitForEphemeral(/Cancelling job/);
		// A second click that reached the app before the first was acted on: nothing more is asked.
		await stack.standin.app.agentSessionStopped(USER, parent.channel, parent.ts, []);
		await stack.app.idle();
		const closed = await stack.standin.waitFor(
			() => session.status === 'closed' || undefined,
			10_000,
			'the session closed with the job',
		);
		expect(closed).toBe(true);
		expect(stack.serviceCalls('DELETE', CANCELS) - cancelsBefore).toBe(1);
		expect(session.history).toEqual(['processing', 'active', 'closed']);
		expect(stack.replies(parent.ts).map(content).join('\n')).toMatch(
			/The job was cancelled by <@U0ALICE>/,
		);
	});

	it('does not let someone else stop a person’s job', async () => {
		const cancelsBefore = stack.serviceCalls('DELETE', CANCELS);
		await stack.command(`job ${stack.emulator.slowEndpoint} {"n": 2}`);
		const parent = await stack.waitForParent(stack.parents().length + 1);
		await stack.waitForParentText(parent.ts, /Cancel/);
		await stack.standin.waitFor(
			() => stack.standin.workspace.session(parent.channel, parent.ts),
			10_000,
			'the job’s session',
		);
		await stack.standin.stopSession('U0MALLORY', parent.channel, parent.ts);
		await stack.waitForEphemeral(/Only <@U0ALICE>, who started job/, 'U0MALLORY');
		expect(stack.serviceCalls('DELETE', CANCELS)).toBe(cancelsBefore);
		expect(stack.standin.workspace.session(parent.channel, parent.ts)?.status).toBe('processing');
		await stack.waitForParentText(parent.ts, /Succeeded in/, 20_000);
	});
});

describe("Slack's stop button on an answer being written", () => {
	// The emulator's model streams one piece per tick of this clock: the answer waits mid-way.
	const modelClock = new ManualClock(Date.now());
	let stack: Stack;
	beforeAll(async () => {
		stack = await Stack.start({ emulator: { clock: modelClock } });
	});
	afterAll(() => stack.close());

	/** The answer in `threadTs` once the model has said a few words (it then waits for the clock). */
	const answerStreaming = (threadTs: string) =>
		eventually('the answer streaming', async () => {
			if (modelClock.pendingTimers > 0) await modelClock.advance(5);
			return stack
				.replies(threadTs, DIRECT_MESSAGE.id)
				.find((reply) => reply.streaming && reply.text.trim().length > 0);
		});

	it('ends the answer where it is, closes the model stream and leaves the session active', async () => {
		const { message } = await stack.standin.postAsUser(
			USER,
			DIRECT_MESSAGE.id,
			'Tell me everything about interruptible GPUs',
		);
		const streaming = await answerStreaming(message.ts);
		expect(await stack.standin.stopSession(USER, DIRECT_MESSAGE.id, message.ts)).toBe(true);
		const stopped = await stack.standin.waitFor(
			() => {
				const answer = stack.standin.workspace.find(DIRECT_MESSAGE.id, streaming.ts);
				return answer && /Stopped\./.test(content(answer)) ? answer : undefined;
			},
			10_000,
			'the answer marked as stopped',
		);
		expect(content(stopped)).toMatch(/Regenerate/);
		await stack.app.idle();
		expect(stack.standin.workspace.session(DIRECT_MESSAGE.id, message.ts)?.status).toBe('active');
		// The model's stream was closed: time moving on brings no more of the answer.
		const appendsBefore = stack.standin.api.callsOf('chat.appendStream').length;
		await modelClock.advance(10_000);
		await stack.app.idle();
		expect(stack.standin.api.callsOf('chat.appendStream')).toHaveLength(appendsBefore);
		expect(modelClock.pendingTimers).toBe(0);
	});

	it('ends an answer Slack stopped while another replica heard the click, at its next piece', async () => {
		const { message } = await stack.standin.postAsUser(
			USER,
			DIRECT_MESSAGE.id,
			'And their prices?',
		);
		const streaming = await answerStreaming(message.ts);
		// Slack ends the stream on the click; the event went to a replica that does not write it.
		stack.standin.workspace.update(DIRECT_MESSAGE.id, streaming.ts, { streaming: false });
		const stopped = await eventually('the answer marked as stopped', async () => {
			if (modelClock.pendingTimers > 0) await modelClock.advance(300);
			const answer = stack.standin.workspace.find(DIRECT_MESSAGE.id, streaming.ts);
			return answer && /Stopped\./.test(content(answer)) ? answer : undefined;
		});
		expect(content(stopped)).toMatch(/Regenerate/);
	});
});

describe('an installation of the app created before agent messaging', () => {
	let stack: Stack;
	beforeAll(async () => {
		stack = await Stack.start({
			slackApp: { manifest: legacyManifest(), createdBeforeAgentMessaging: true },
		});
	});
	afterAll(() => stack.close());

	it('ignores a malformed assistant_thread_started and answers a well-formed one with prompts', async () => {
		const root = stack.standin.workspace.post({
			channel: DIRECT_MESSAGE.id,
			user: 'U0GPUBOT',
			botId: 'B0GPUBOT',
			text: 'New assistant thread',
		});
		const before = stack.standin.api.callsOf('assistant.threads.setSuggestedPrompts').length;
		await stack.standin.app.assistantThreadStarted(
			'U0AI',
			DIRECT_MESSAGE.id,
			'not-a-ts',
			'C0GENERAL',
		);
		await stack.app.idle();
		expect(stack.standin.api.callsOf('assistant.threads.setSuggestedPrompts')).toHaveLength(before);
		await stack.standin.app.assistantThreadStarted('U0AI', DIRECT_MESSAGE.id, root.ts, 'C0GENERAL');
		await stack.standin.waitFor(
			() =>
				stack.standin.api.callsOf('assistant.threads.setSuggestedPrompts').length === before + 1,
			10_000,
			'suggested prompts',
		);
	});

	it('still titles its assistant threads and answers in them, without agent sessions', async () => {
		const question = assistantQuestion(stack, 'What is a queue?');
		await stack.standin.app.messageEvent(question);
		await stack.standin.waitFor(
			() => finishedAnswers(stack, question.threadTs ?? ''),
			15_000,
			'the answer in the assistant thread',
		);
		const thread = stack.standin.workspace.assistantThreads.get(
			`${DIRECT_MESSAGE.id}/${question.threadTs}`,
		);
		expect(thread?.title).toBe('What is a queue?');
		// Slack refuses sessions to an app not declared as an agent; the work is not held up by it.
		expect(
			stack.standin.api
				.callsOf('agents.sessions.setStatus')
				.every((call) => call.error === 'not_allowed'),
		).toBe(true);
		expect(stack.standin.workspace.sessions.size).toBe(0);
	});
});
