import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisSharedState } from '../../slack-app/state/shared-state';
import { describeSharedStateContract } from '../slack/shared-state-contract';
import { CapturingLogger } from '../slack/harness';
import { Redis } from '../support/services';

/** Several replicas: the same promises as one process, kept in Debian's redis-server. */

const LEASE_MS = 600;
let dir: string;
let redis: Redis;
const open = new Set<RedisSharedState>();

beforeAll(async () => {
	dir = await mkdtemp(join(tmpdir(), 'gpu-cloud-shared-contract-'));
	redis = await Redis.start(dir);
});

afterAll(async () => {
	await Promise.all([...open].map((store) => store.close()));
	await redis?.stop();
	await rm(dir, { recursive: true, force: true });
});

describeSharedStateContract('replicas (RedisSharedState)', {
	open: async (stateFile) => {
		const store = await RedisSharedState.connect({
			url: redis.url,
			logger: new CapturingLogger(),
			leaseMs: LEASE_MS,
			stateFile,
		});
		open.add(store);
		return store;
	},
	die: async (store) => {
		// Gone without giving anything back: its leases and slots expire, unrenewed.
		(store as unknown as { client: { destroy(): void } }).client.destroy();
		open.delete(store as RedisSharedState);
		await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 2));
	},
});
