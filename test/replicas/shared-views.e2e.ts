import { ANSWER_EVENT } from '../../slack-app/slack/slack-thread';
import { TEAM } from '../../slack-standin';
import { content } from '../slack/harness';
import { Cluster, type Replica } from './cluster';
import { whileRedisRefuses } from './redis-refusing';

/**
 * Two replicas sharing Redis (`npm run test:replicas`): what one replica did must be seen by the
 * other. Slack redelivers an event it saw no 2xx for within 3 s, possibly to another replica, which
 * must not answer the same thread reply again; the Home tab opened on one replica counts the slots
 * the person's work holds on the other.
 */

const CHANNEL = 'C0SHARED';
const LIMIT = 3;

jest.setTimeout(120_000);

let cluster: Cluster;

beforeAll(async () => {
	cluster = await Cluster.start({
		replicas: 2,
		redis: true,
		// The slow endpoint's jobs run 20 times this: long enough to look at the Home tab meanwhile.
		emulator: { jobDurationMs: 3000 },
		env: { SLACK_MAX_JOBS_PER_USER: String(LIMIT), LOG_LEVEL: 'info' },
	});
});

afterAll(() => cluster?.close());

const eventsUrlOf = (replica: Replica) => `http://127.0.0.1:${replica.port}/slack/events`;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What the stand-in sends meanwhile goes to one replica, not through the proxy. */
async function viaReplica<T>(replica: Replica, send: () => Promise<T>): Promise<T> {
	const { standin } = cluster.stack;
	standin.setAppUrl(eventsUrlOf(replica));
	try {
		return await send();
	} finally {
		standin.setAppUrl(`${cluster.proxy.url}/slack/events`);
	}
}

/** Sends a signed request to one replica. */
function sendTo(
	replica: Replica,
	body: string,
	contentType: string,
	timestampSeconds = Math.floor(Date.now() / 1000),
) {
	return viaReplica(replica, () =>
		cluster.stack.standin.app.send(body, contentType, { timestampSeconds }),
	);
}

const chatCalls = () => cluster.stack.serviceCalls('POST', /\/v1\/chat\/completions$/);

it('a thread reply redelivered to another replica is answered once', async () => {
	const { stack, replicas } = cluster;
	const user = 'U0ASKER';
	await stack.command('chat What is an interruptible GPU node?', user, CHANNEL);
	const parent = await stack.waitForParent(1, CHANNEL, 20_000);
	await stack.waitForParentText(parent.ts, /Succeeded in/, 30_000, CHANNEL);
	const answers = () =>
		stack
			.replies(parent.ts, CHANNEL)
			.filter((message) => message.metadata?.event_type === ANSWER_EVENT);
	expect(answers()).toHaveLength(1);
	const callsBefore = chatCalls();

	const reply = stack.standin.workspace.post({
		channel: CHANNEL,
		user,
		text: 'And how do I survive one?',
		threadTs: parent.ts,
	});
	const body = stack.standin.app.eventBody({
		type: 'message',
		channel: CHANNEL,
		user,
		text: reply.text,
		ts: reply.ts,
		thread_ts: parent.ts,
		channel_type: 'channel',
		event_ts: reply.ts,
		team: TEAM.id,
	});
	const now = Math.floor(Date.now() / 1000);
	// The first delivery, then Slack's retry of it (a new timestamp, so a new signature) to the other replica.
	expect((await sendTo(replicas[0], body, 'application/json', now)).status).toBe(200);
	expect((await sendTo(replicas[1], body, 'application/json', now + 1)).status).toBe(200);

	await stack.standin.waitFor(
		() => (answers().length >= 2 && answers().every((answer) => !answer.streaming)) || undefined,
		30_000,
		'the answer to the thread reply',
	);
	// Time for a second answer, were a replica to make one.
	await pause(4000);
	expect({ answers: answers().length, modelCalls: chatCalls() - callsBefore }).toEqual({
		answers: 2,
		modelCalls: 1,
	});
});

it('a thread reply no replica can claim in time is not answered: the person is asked to send it again', async () => {
	const { stack, replicas, redis } = cluster;
	if (!redis) throw new Error('The cluster runs without Redis.');
	const user = 'U0ASKER';
	const parent = stack
		.parents(CHANNEL)
		.find((message) => /What is an interruptible GPU node/.test(content(message)));
	if (!parent) throw new Error('The chat thread of the first test is missing.');
	const answersBefore = stack.replies(parent.ts, CHANNEL).length;
	const callsBefore = chatCalls();
	// Redis stays up for everything else (the receiver's signature and event claims let the event
	// in), but refuses the thread-reply claim: to the replica, Redis does not answer it.
	await whileRedisRefuses(redis.url, 'once:followed-up', async () => {
		const { message } = await viaReplica(replicas[1], () =>
			stack.standin.postAsUser(user, CHANNEL, 'Still there?', parent.ts),
		);
		await stack.waitForEphemeral(/Send it again in a moment/, user, 15_000);
		await pause(1000);
		expect({
			replies: stack.replies(parent.ts, CHANNEL).length,
			modelCalls: chatCalls() - callsBefore,
		}).toEqual({ replies: answersBefore + 1, modelCalls: 0 });
		expect(stack.replies(parent.ts, CHANNEL).at(-1)?.ts).toBe(message.ts);
	});
});

it("the Home tab opened on one replica counts the slots the person's work holds on another", async () => {
	const { stack, replicas } = cluster;
	const user = 'U0HOMER';
	const command = stack.standin.app.slashCommandBody({
		user,
		channel: CHANNEL,
		text: `job ${stack.emulator.slowEndpoint} {"wait": "long"}`,
	});
	expect((await sendTo(replicas[0], command, 'application/x-www-form-urlencoded')).status).toBe(
		200,
	);
	await stack.standin.waitFor(
		() =>
			stack
				.parents(CHANNEL)
				.find((parent) => content(parent).includes(user) && /Job `/.test(content(parent))),
		30_000,
		"the job's parent",
	);
	const home = stack.standin.app.eventBody({
		type: 'app_home_opened',
		user,
		channel: `D${user.slice(1)}`,
		tab: 'home',
		event_ts: String(Date.now() / 1000),
	});
	expect((await sendTo(replicas[1], home, 'application/json')).status).toBe(200);
	const shown = await stack.standin.waitFor(
		() => {
			const view = stack.standin.workspace.homes.get(user);
			return view && /job slots in use/.test(JSON.stringify(view.view)) ? view : undefined;
		},
		20_000,
		'the Home tab',
	);
	expect(JSON.stringify(shown.view)).toContain(`You have *1* of *${LIMIT}* GPU job slots in use.`);
});
