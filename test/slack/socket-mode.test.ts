import { DIRECT_MESSAGE } from '../../slack-app/standin';
import { eventually } from '../support/eventually';
import { Stack } from './harness';
import { directMessage, finishedAnswers, modelCalls } from './retried-events';

/**
 * Socket Mode end to end: the app calls apps.connections.open with its app-level token, connects to
 * the stand-in's WebSocket and acknowledges each envelope; the stand-in redelivers what it heard no
 * acknowledgement for, as Slack does. Work starts once, however often an event arrives.
 */

let stack: Stack;
beforeAll(async () => {
	// Slack's 3 s to acknowledge; its first retry comes at once, the later ones sooner than Slack's.
	stack = await Stack.start({ socketMode: { retryDelaysMs: [0, 1000, 2000] } });
});
afterAll(() => stack.close());

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const socketMode = () => stack.standin.socketMode ?? fail('Socket Mode is off in the stand-in.');

/** A direct message to the app and its delivery; resolves once its chat is answered and settled. */
async function directMessageAnswered(text: string) {
	const parentsBefore = stack.parents(DIRECT_MESSAGE.id).length;
	const callsBefore = modelCalls(stack);
	const message = directMessage(stack, text);
	await stack.standin.app.messageEvent(message);
	const parent = await stack.waitForParent(parentsBefore + 1, DIRECT_MESSAGE.id);
	await stack.standin.waitFor(
		() => finishedAnswers(stack, parent.ts),
		15_000,
		"the direct message's answer",
	);
	return { parentsBefore, callsBefore, message };
}

describe('exactly once', () => {
	it('an event whose acknowledgement was lost is delivered again and starts one chat', async () => {
		socketMode().loseAcks(1);
		const sentBefore = socketMode().sent.length;
		const { parentsBefore, callsBefore } = await directMessageAnswered('How long may a job run?');
		// The redelivery: the same event, retry_attempt 1, after Slack's 3 s without an ack.
		await eventually('the redelivered envelope, acknowledged', () =>
			socketMode()
				.sent.slice(sentBefore)
				.find((sent) => sent.retryAttempt === 1 && sent.acked),
		);
		await pause(1000);
		await stack.app.idle();
		const deliveries = socketMode().sent.slice(sentBefore);
		expect(new Set(deliveries.map((sent) => sent.eventId)).size).toBe(1);
		expect({
			parents: stack.parents(DIRECT_MESSAGE.id).length - parentsBefore,
			modelCalls: modelCalls(stack) - callsBefore,
		}).toEqual({ parents: 1, modelCalls: 1 });
		expect(stack.logger.lines).toContainEqual(
			expect.stringContaining(`Ignored event ${deliveries[0].eventId} (Slack's retry #1)`),
		);
	});
});
