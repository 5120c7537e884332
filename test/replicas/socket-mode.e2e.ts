import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../slack-app/local';
import { DIRECT_MESSAGE } from '../../slack-standin';
import { appProcessEnv, Stack } from '../slack/harness';
import { directMessage, finishedAnswers, modelCalls } from '../slack/retried-events';
import { eventually } from '../support/eventually';
import { Redis } from '../support/services';
import { Replica } from './cluster';

/**
 * Two replicas in Socket Mode sharing Redis (`npm run test:replicas`), each with its own WebSocket
 * to Slack. Slack sends an Events API envelope nobody acknowledged again, on another of the app's
 * connections when its own closed (https://docs.slack.dev/apis/events-api/using-socket-mode): the
 * replica that gets the redelivery finds the event claimed in Redis, acknowledges it and starts
 * nothing, so the message is answered once.
 */

jest.setTimeout(120_000);

let dir: string;
let stack: Stack;
let redis: Redis;
const replicas: Replica[] = [];

beforeAll(async () => {
	dir = await mkdtemp(join(tmpdir(), 'gpu-cloud-socket-replicas-'));
	// Longer than Slack's 3 s to acknowledge, so that the answer is finished before the redelivery.
	stack = await Stack.start({ socketMode: { ackTimeoutMs: 20_000 }, app: false });
	redis = await Redis.start(dir, { appendOnly: true });
	for (const index of [0, 1]) {
		const port = await freePort();
		replicas.push(
			await Replica.start(port, {
				...appProcessEnv(stack, port),
				SLACK_STATE_FILE: join(dir, `replica-${index}.json`),
				REDIS_URL: redis.url,
				LOG_LEVEL: 'info',
			}),
		);
		// Connected, in this order: the second replica's is the newest connection, which Slack's
		// stand-in sends to.
		await stack.standin.socketMode?.waitForConnections(index + 1, 30_000);
	}
});

afterAll(async () => {
	await Promise.all(replicas.map((replica) => replica.kill('SIGKILL')));
	await redis?.stop();
	await stack?.close();
	await rm(dir, { recursive: true, force: true });
});

it('an event whose acknowledgement was lost, redelivered to the other replica when the first one died, is answered once', async () => {
	const socketMode = stack.standin.socketMode;
	if (!socketMode) throw new Error('Socket Mode is off in the stand-in.');
	const [survivor, first] = replicas;
	const parentsBefore = stack.parents(DIRECT_MESSAGE.id).length;
	const callsBefore = modelCalls(stack);
	const sentBefore = socketMode.sent.length;
	socketMode.loseAcks(1);
	const message = directMessage(stack, 'Who answers this?');
	const delivery = stack.standin.app.messageEvent(message);
	await eventually('the acknowledgement lost', () => socketMode.lostAcks.length === 1, {
		timeoutMs: 15_000,
	});
	// The replica that took the event answers it in full...
	// The person's message is the conversation's thread; the app posts no parent beside it.
	const parent = message;
	await stack.standin.waitFor(() => finishedAnswers(stack, parent.ts), 20_000, 'the answer');
	// ...and dies before Slack heard its acknowledgement: the envelope goes to the other connection.
	await first.kill('SIGKILL');
	const again = await eventually(
		'the envelope redelivered and acknowledged',
		() => socketMode.sent.slice(sentBefore).find((sent) => sent.retryAttempt > 0 && sent.acked),
		{ timeoutMs: 15_000 },
	);
	const [original] = socketMode.sent.slice(sentBefore);
	expect(again).toMatchObject({ eventId: original.eventId, retryReason: 'connection_closed' });
	expect([original.connection, again.connection]).toEqual([2, 1]);
	expect((await delivery).status).toBe(200);
	await eventually('the retry ignored by the survivor', () =>
		survivor.output.includes(`Ignored event ${original.eventId} (Slack's retry #1)`),
	);
	// Long enough for a second answer, were the survivor to start one.
	await new Promise((resolve) => setTimeout(resolve, 3000));
	expect({
		parents: stack.parents(DIRECT_MESSAGE.id).length - parentsBefore,
		answers: finishedAnswers(stack, parent.ts)?.length,
		modelCalls: modelCalls(stack) - callsBefore,
	}).toEqual({ parents: 0, answers: 1, modelCalls: 1 });
});
