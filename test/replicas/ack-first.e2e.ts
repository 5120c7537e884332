import { createClient } from 'redis';
import { slackSignature } from '../../slack-standin';
import { Cluster } from './cluster';

/**
 * One replica on Redis (`npm run test:replicas`): Slack does not send a slash command again, so its
 * ack waits for nothing that can wait. With redis-server stopped (SIGSTOP: connections stay open,
 * nothing is answered) a signed /gpu command is still acknowledged, is carried out once Redis
 * answers again, and a replay of the same signed request is still ignored. While Redis does not
 * answer, the replica's own memory of signatures decides whether the command is the first.
 */

jest.setTimeout(120_000);

const CHANNEL = 'C0ACKFIRST';
/** Far longer than any ack: an answer within it arrived while Redis was stopped. */
const WHILE_STOPPED_MS = 15_000;

let cluster: Cluster;

beforeAll(async () => {
	cluster = await Cluster.start({ replicas: 1, redis: true, env: { LOG_LEVEL: 'info' } });
});

afterAll(() => cluster?.close());

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until the replica has logged a line matching `pattern`. */
async function logged(pattern: RegExp, timeoutMs: number): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!pattern.test(cluster.replicas[0].output)) {
		if (Date.now() > deadline) throw new Error(`The replica did not log ${pattern} in time`);
		await pause(100);
	}
}

async function redisPid(url: string): Promise<number> {
	const admin = createClient({ url });
	await admin.connect();
	try {
		const info = String(await admin.sendCommand(['INFO', 'server']));
		return Number(/process_id:(\d+)/.exec(info)?.[1]);
	} finally {
		await admin.quit();
	}
}

it('a signed /gpu command is acknowledged while Redis is stopped, carried out once, and its replay ignored', async () => {
	const { stack, replicas, redis } = cluster;
	const body = stack.standin.app.slashCommandBody({
		channel: CHANNEL,
		user: 'U0ACKFIRST',
		text: `job ${stack.emulator.genericEndpoint} {"ack": "first"}`,
	});
	const timestamp = Math.floor(Date.now() / 1000);
	const send = () =>
		fetch(`http://127.0.0.1:${replicas[0].port}/slack/events`, {
			method: 'POST',
			headers: {
				'content-type': 'application/x-www-form-urlencoded',
				'x-slack-request-timestamp': String(timestamp),
				'x-slack-signature': slackSignature(stack.credentials.signingSecret, timestamp, body),
			},
			body,
		}).then((response) => response.status);
	const pid = await redisPid(redis?.url ?? '');
	process.kill(pid, 'SIGSTOP');
	let whileStopped: number | string;
	try {
		whileStopped = await Promise.race([
			send(),
			pause(WHILE_STOPPED_MS).then(() => 'no answer while Redis was stopped'),
		]);
		// Still stopped once the claim gave up on Redis: this replica's own memory decided.
		if (whileStopped === 200) await logged(/against this replica's memory only/, WHILE_STOPPED_MS);
	} finally {
		process.kill(pid, 'SIGCONT');
	}
	expect(whileStopped).toBe(200);
	await stack.waitForParent(1, CHANNEL, 30_000);
	expect(await send()).toBe(200);
	// Long enough for a second parent, were the replay carried out.
	await pause(3000);
	expect(stack.parents(CHANNEL)).toHaveLength(1);
	expect(replicas[0].output).toMatch(/Ignored a replayed request/);
});
