import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisSharedState } from '../../slack-app/state/shared-state';
import { BOT } from '../../slack-standin';
import { CapturingLogger, content, Stack } from '../slack/harness';
import { eventually } from '../support/eventually';
import { Redis } from '../support/services';
import { inflightKinds } from '../support/state-file';

/**
 * A replica started with `REDIS_URL` and a state file that still lists images under way (written
 * before Redis kept them, by an older version that did not name the workspace): the one another
 * replica already delivered is neither generated nor posted again (its delivered mark decides); the
 * other moves to Redis, is generated again and posted once; neither stays in the file.
 */

const CHANNEL = 'C0MIGRATE';

let dir: string;
let redis: Redis;
let stack: Stack;

beforeAll(async () => {
	dir = await mkdtemp(join(tmpdir(), 'gpu-cloud-inflight-migration-'));
	redis = await Redis.start(dir, { appendOnly: true });
	stack = await Stack.start({ app: false });
});

afterAll(async () => {
	await stack?.close();
	await redis?.stop();
	await rm(dir, { recursive: true, force: true });
});

it('moves the state file’s images under way to Redis, unless another replica delivered them', async () => {
	const parent = (text: string) =>
		stack.standin.workspace.post({ channel: CHANNEL, user: BOT.userId, botId: BOT.botId, text }).ts;
	const delivered = { ref: '0d1c5e7a-0000-4000-8000-00000000d0e1', threadTs: parent('a fox') };
	const left = { ref: '0d1c5e7a-0000-4000-8000-00000000ab1e', threadTs: parent('an owl') };
	await writeFile(
		stack.stateFile,
		JSON.stringify({
			version: 1,
			endpoints: [],
			posted: [],
			inflight: [delivered, left].map(({ ref, threadTs }, i) => ({
				ref,
				kind: 'image',
				channel: CHANNEL,
				threadTs,
				messageTs: threadTs,
				user: 'U0MOVE',
				startedAt: Date.now() - 1000,
				image: { prompt: i === 0 ? 'a fox' : 'an owl', count: 1 },
			})),
		}),
	);
	const observer = await RedisSharedState.connect({
		url: redis.url,
		logger: new CapturingLogger(),
	});
	try {
		// Another replica took the fox over and posted it before this one came back.
		await observer.markDelivered(delivered.ref);
		await stack.startApp({ env: { REDIS_URL: redis.url } });
		await stack.waitForParentText(left.threadTs, /Succeeded in/, 20_000, CHANNEL);
		const files = (threadTs: string) =>
			stack.replies(threadTs, CHANNEL).flatMap((message) => message.fileIds);
		await eventually('the owl in its thread', () => files(left.threadTs).length === 1);
		await stack.app.idle();
		expect(files(delivered.threadTs)).toEqual([]);
		expect(content(stack.standin.workspace.find(CHANNEL, delivered.threadTs))).toContain('a fox');
		// One image generated: the owl's.
		expect(stack.serviceCalls('POST', /^\/workloads\/image\//)).toBe(1);
		expect(await inflightKinds(stack.stateFile)).toEqual([]);
		expect(await observer.inflightRequests()).toEqual([]);
	} finally {
		await observer.close();
	}
}, 60_000);
