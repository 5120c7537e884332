import { DIRECT_MESSAGE } from '../../slack-standin';
import { Stack } from './harness';
import {
	assistantQuestion,
	deliver,
	directMessage,
	finishedAnswers,
	modelCalls,
} from './retried-events';

/**
 * Slack sends an Events API delivery again (same event_id, new timestamp and signature,
 * `X-Slack-Retry-Num`) when its 2xx came later than 3 s. The retry must not start the work again:
 * a message in an assistant thread or a direct message is answered once, whichever copy comes first.
 */

let stack: Stack;
beforeAll(async () => {
	stack = await Stack.start();
});
afterAll(() => stack.close());

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const now = () => Math.floor(Date.now() / 1000);

/** The first delivery, then Slack's retry of it a second later; both answered 200. */
async function deliverTwice(body: string): Promise<void> {
	const { eventsUrl } = stack.app;
	if (!eventsUrl) throw new Error('The app does not listen over HTTP.');
	const { signingSecret } = stack.credentials;
	const sent = now();
	expect(await deliver(eventsUrl, signingSecret, body, { timestampSeconds: sent })).toBe(200);
	expect(
		await deliver(eventsUrl, signingSecret, body, { timestampSeconds: sent + 1, retryNum: 1 }),
	).toBe(200);
}

/** Time for a second answer, were the retry to start one; then everything started has finished. */
async function settle(): Promise<void> {
	await pause(1500);
	await stack.app.idle();
}

it('a retried message in an assistant thread is answered once (one model call)', async () => {
	const callsBefore = modelCalls(stack);
	const question = assistantQuestion(stack, 'What does an interruptible GPU cost?');
	const body = stack.standin.app.messageEventBody(question);
	await deliverTwice(body);
	await stack.standin.waitFor(
		() => finishedAnswers(stack, question.threadTs ?? ''),
		15_000,
		'the answer in the assistant thread',
	);
	await settle();
	expect({
		answers: finishedAnswers(stack, question.threadTs ?? '')?.length,
		modelCalls: modelCalls(stack) - callsBefore,
	}).toEqual({ answers: 1, modelCalls: 1 });
	const { event_id: eventId } = JSON.parse(body) as { event_id: string };
	expect(stack.logger.lines).toContainEqual(
		expect.stringContaining(`Ignored event ${eventId} (Slack's retry #1)`),
	);
});

it('a retried direct message starts one chat (one parent, one model call)', async () => {
	const callsBefore = modelCalls(stack);
	const parentsBefore = stack.parents(DIRECT_MESSAGE.id).length;
	const message = directMessage(stack, 'How long may a job run?');
	await deliverTwice(stack.standin.app.messageEventBody(message));
	// The person's message is the conversation's thread; the app posts no parent beside it.
	const parent = message;
	await stack.standin.waitFor(
		() => finishedAnswers(stack, parent.ts),
		15_000,
		"the direct message's answer",
	);
	await settle();
	expect({
		parents: stack.parents(DIRECT_MESSAGE.id).length - parentsBefore,
		modelCalls: modelCalls(stack) - callsBefore,
	}).toEqual({ parents: 0, modelCalls: 1 });
});

it('the same message sent again as a new event (a new event_id) is answered again', async () => {
	const callsBefore = modelCalls(stack);
	const question = assistantQuestion(stack, 'And a queue?');
	const { eventsUrl = '' } = stack.app;
	for (const timestampSeconds of [now(), now() + 1])
		expect(
			await deliver(
				eventsUrl,
				stack.credentials.signingSecret,
				stack.standin.app.messageEventBody(question),
				{
					timestampSeconds,
				},
			),
		).toBe(200);
	await stack.standin.waitFor(
		() => (finishedAnswers(stack, question.threadTs ?? '')?.length ?? 0) >= 2 || undefined,
		15_000,
		'two answers',
	);
	await stack.app.idle();
	expect(modelCalls(stack) - callsBefore).toBe(2);
});

/** A correctly signed event_callback whose ids are not Slack's: refused before anything runs. */
it.each([
	['no event_id', { event_id: undefined }],
	['an event_id that is not a string', { event_id: 42 }],
	['an event_id that is not Slack’s form', { event_id: 'Ev0:once:../x' }],
	['an event_id 10,000 characters long', { event_id: `Ev${'0'.repeat(10_000)}` }],
	['no team_id', { team_id: undefined }],
	['a team_id that is not Slack’s form', { team_id: 'T0 STANDIN' }],
])('an event with %s is answered 400 and not dispatched', async (_case, change) => {
	const callsBefore = modelCalls(stack);
	const parentsBefore = stack.parents(DIRECT_MESSAGE.id).length;
	const message = directMessage(stack, 'Hello?');
	const body = JSON.stringify({
		...JSON.parse(stack.standin.app.messageEventBody(message)),
		...change,
	});
	const { eventsUrl = '' } = stack.app;
	expect(
		await deliver(eventsUrl, stack.credentials.signingSecret, body, { timestampSeconds: now() }),
	).toBe(400);
	await settle();
	expect({
		parents: stack.parents(DIRECT_MESSAGE.id).length - parentsBefore,
		modelCalls: modelCalls(stack) - callsBefore,
	}).toEqual({ parents: 0, modelCalls: 0 });
});
