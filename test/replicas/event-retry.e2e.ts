import { DIRECT_MESSAGE } from '../../slack-standin';
import {
	assistantQuestion,
	deliver,
	directMessage,
	finishedAnswers,
	modelCalls,
} from '../slack/retried-events';
import { USER } from '../slack/harness';
import { eventually } from '../support/eventually';
import { Cluster, type Replica } from './cluster';
import { whileRedisRefuses } from './redis-refusing';

/**
 * Two replicas sharing Redis (`npm run test:replicas`). Slack sends an event again (same event_id,
 * new signature, `X-Slack-Retry-Num`) when it saw no 2xx within 3 s, and the load balancer may hand
 * the retry to the other replica: the message is still answered once, by whichever replica claims
 * the event first. When Redis cannot say in time whether the event was taken up, the delivery is
 * refused for now (503) and nothing is started twice or lost.
 */

jest.setTimeout(120_000);

let cluster: Cluster;

beforeAll(async () => {
	cluster = await Cluster.start({ replicas: 2, redis: true, env: { LOG_LEVEL: 'info' } });
});

afterAll(() => cluster?.close());

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const now = () => Math.floor(Date.now() / 1000);

/** Delivers `body` to one replica as Slack signs it; `retryNum` marks Slack's retry. */
function deliverTo(replica: Replica, body: string, timestampSeconds: number, retryNum?: number) {
	return deliver(
		`http://127.0.0.1:${replica.port}/slack/events`,
		cluster.stack.credentials.signingSecret,
		body,
		{ timestampSeconds, retryNum },
	);
}

/** Waits for the answer in `threadTs`, then long enough for a second one, were a replica to make one. */
async function answersOnceFinished(threadTs: string): Promise<number> {
	const { stack } = cluster;
	await stack.standin.waitFor(() => finishedAnswers(stack, threadTs), 30_000, 'the answer');
	await pause(4000);
	return finishedAnswers(stack, threadTs)?.length ?? 0;
}

it('a message in an assistant thread, retried to the other replica, is answered once', async () => {
	const { stack, replicas } = cluster;
	const callsBefore = modelCalls(stack);
	const question = assistantQuestion(stack, 'Which GPU suits a 7B model?');
	const body = stack.standin.app.messageEventBody(question);
	const sent = now();
	expect(await deliverTo(replicas[0], body, sent)).toBe(200);
	expect(await deliverTo(replicas[1], body, sent + 1, 1)).toBe(200);
	expect({
		answers: await answersOnceFinished(question.threadTs ?? ''),
		modelCalls: modelCalls(stack) - callsBefore,
	}).toEqual({ answers: 1, modelCalls: 1 });
});

it('a direct message, retried to the other replica, starts one chat', async () => {
	const { stack, replicas } = cluster;
	const callsBefore = modelCalls(stack);
	const parentsBefore = stack.parents(DIRECT_MESSAGE.id).length;
	const message = directMessage(stack, 'Can a job outlive its node?');
	const body = stack.standin.app.messageEventBody(message);
	const sent = now();
	// Slack's retry may even reach the other replica first, while the first copy is still on its way.
	expect(await deliverTo(replicas[1], body, sent + 1, 1)).toBe(200);
	expect(await deliverTo(replicas[0], body, sent)).toBe(200);
	// The person's message is the conversation's thread; the app posts no parent beside it.
	const parent = message;
	expect({
		answers: await answersOnceFinished(parent.ts),
		parents: stack.parents(DIRECT_MESSAGE.id).length - parentsBefore,
		modelCalls: modelCalls(stack) - callsBefore,
	}).toEqual({ answers: 1, parents: 0, modelCalls: 1 });
});

it('an event Redis cannot claim in time is refused for now (503), then answered once', async () => {
	const { stack, replicas, redis } = cluster;
	if (!redis) throw new Error('The cluster runs without Redis.');
	const callsBefore = modelCalls(stack);
	const question = assistantQuestion(stack, 'What happens to my job at preemption?');
	const body = stack.standin.app.messageEventBody(question);
	const eventId = (JSON.parse(body) as { event_id: string }).event_id;
	// Redis keeps answering everything else (the signature replay check lets the delivery in) but
	// refuses event claims: to the replica, Redis does not answer them.
	const firstStatus = await whileRedisRefuses(redis.url, 'once:slack-event', async () => {
		const status = await deliverTo(replicas[0], body, now());
		await pause(1000);
		expect(finishedAnswers(stack, question.threadTs ?? '')).toBeUndefined();
		expect(modelCalls(stack) - callsBefore).toBe(0);
		return status;
	});
	expect(firstStatus).toBe(503);
	// Redis answers again; the first replica's claim lands and it takes the event up. Slack's retry
	// of the refused delivery, to the other replica, finds it taken.
	const answered = await stack.standin.waitFor(
		() => finishedAnswers(stack, question.threadTs ?? ''),
		30_000,
		'the answer once Redis answers',
	);
	expect(answered).toHaveLength(1);
	expect(await deliverTo(replicas[1], body, now(), 1)).toBe(200);
	expect({
		answers: await answersOnceFinished(question.threadTs ?? ''),
		modelCalls: modelCalls(stack) - callsBefore,
	}).toEqual({ answers: 1, modelCalls: 1 });
	expect(replicas[1].output).toContain(`Ignored event ${eventId} (Slack's retry #1)`);
});

it("Slack's stop button clicked twice, each click reaching another replica, cancels the job once", async () => {
	const { stack, replicas } = cluster;
	const cancelsBefore = stack.serviceCalls('DELETE', /\/jobs\/[^/]+$/);
	const parentsBefore = stack.parents().length;
	await stack.command(`job ${stack.emulator.slowEndpoint} {"stopped": "twice"}`);
	const parent = await stack.waitForParent(parentsBefore + 1, undefined, 20_000);
	await stack.waitForParentText(parent.ts, /Cancel/, 20_000);
	await stack.standin.waitFor(
		() => stack.standin.workspace.session(parent.channel, parent.ts)?.status === 'processing',
		20_000,
		'the job’s session processing',
	);
	const click = () =>
		stack.standin.app.eventBody({
			type: 'agent_session_stopped',
			user: USER,
			channel: parent.channel,
			thread_ts: parent.ts,
			streaming_message_ts: [],
			event_ts: String(Date.now() / 1000),
		});
	expect(await deliverTo(replicas[0], click(), now())).toBe(200);
	expect(await deliverTo(replicas[1], click(), now())).toBe(200);
	await stack.waitForParentText(parent.ts, /Cancelled/, 30_000);
	// The other click was heard, and let go.
	await eventually('the second click ignored', () =>
		replicas.some((replica) => replica.output.includes('already taken up; ignored')),
	);
	expect(stack.serviceCalls('DELETE', /\/jobs\/[^/]+$/) - cancelsBefore).toBe(1);
	// Closed once the job's end is delivered; never back in processing or left active.
	const session = await stack.standin.waitFor(
		() => {
			const found = stack.standin.workspace.session(parent.channel, parent.ts);
			return found?.status === 'closed' ? found : undefined;
		},
		20_000,
		'the session closed',
	);
	expect(session.history).toEqual(['processing', 'active', 'closed']);
});
