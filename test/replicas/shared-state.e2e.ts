import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { systemClock } from '../../shared/runtime';
import { errorParts } from '../../slack-app/messages/results';
import { DeliveryRecord } from '../../slack-app/requests/delivery-record';
import { RedisSharedState } from '../../slack-app/state/shared-state';
import { StateFile } from '../../slack-app/state/state-file';
import { BOT } from '../../slack-standin';
import { CapturingLogger } from '../slack/harness';
import { standinThreads } from '../slack/standin-threads';
import { Redis } from '../support/services';

/**
 * The Redis store on its own, against Debian's redis-server: two "replicas" (two connections with
 * their own identity) agree on leases, slots and first sightings; what a dead one held expires.
 */

const LEASE_MS = 600;
let dir: string;
let redis: Redis;
const open: RedisSharedState[] = [];

async function replica(logger = new CapturingLogger()): Promise<RedisSharedState> {
	const store = await RedisSharedState.connect({
		url: redis.url,
		logger,
		leaseMs: LEASE_MS,
	});
	open.push(store);
	return store;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A replica that can die: it reaches Redis through a proxy the test cuts (no release, no renewal,
 * as a SIGKILLed process), without reaching into the store's own fields.
 */
async function mortalReplica(): Promise<{ store: RedisSharedState; die(): void }> {
	const target = new URL(redis.url);
	const sockets = new Set<Socket>();
	const server = createServer((client) => {
		const upstream = connect(Number(target.port), target.hostname);
		sockets.add(client).add(upstream);
		client.pipe(upstream).pipe(client);
		for (const socket of [client, upstream])
			socket.on('error', () => undefined).on('close', () => (client.destroy(), upstream.destroy()));
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	const store = await RedisSharedState.connect({
		url: `redis://127.0.0.1:${port}`,
		logger: new CapturingLogger(),
		leaseMs: LEASE_MS,
	});
	open.push(store);
	return {
		store,
		die: () => {
			server.close();
			for (const socket of sockets) socket.destroy();
		},
	};
}

beforeAll(async () => {
	dir = await mkdtemp(join(tmpdir(), 'gpu-cloud-shared-state-'));
	redis = await Redis.start(dir, { appendOnly: true });
});

afterEach(async () => {
	await Promise.all(open.splice(0).map((store) => store.close()));
});

afterAll(async () => {
	await redis.stop();
	await rm(dir, { recursive: true, force: true });
});

it('gives a lease to one replica, keeps it renewed while held, and frees it on release', async () => {
	const [a, b] = [await replica(), await replica()];
	expect(await a.lease('follow:j1')).toBe(true);
	expect(await b.lease('follow:j1')).toBe(false);
	// Well past the lease time: renewed by its holder, still not free.
	await pause(LEASE_MS * 3);
	expect(await b.lease('follow:j1')).toBe(false);
	await a.releaseLease('follow:j1');
	expect(await b.lease('follow:j1')).toBe(true);
});

it("lets another replica take a dead replica's lease and slots once they expire", async () => {
	const [{ store: a, die }, b] = [await mortalReplica(), await replica()];
	expect(await a.lease('deliver:r1')).toBe(true);
	expect(await a.acquireSlot('U1', 'r1', 1)).toBeUndefined();
	expect(await b.acquireSlot('U1', 'r2', 1)).toBe(1);
	// A dies: no release, no renewal (its connection to Redis is gone, nothing given back).
	die();
	expect(await b.lease('deliver:r1')).toBe(false);
	await pause(LEASE_MS * 2);
	expect(await b.lease('deliver:r1')).toBe(true);
	expect(await b.acquireSlot('U1', 'r2', 1)).toBeUndefined();
});

it("records an image under way with its holder's lease: another replica takes it over only once the holder died", async () => {
	const [{ store: a, die }, b, c] = [await mortalReplica(), await replica(), await replica()];
	const request = {
		ref: 'img-1',
		team: 'T0ONE',
		kind: 'image' as const,
		channel: 'C1',
		threadTs: '1.0',
		messageTs: '1.0',
		user: 'U1',
		startedAt: 1,
		image: { prompt: 'fox', count: 1 },
	};
	expect(await a.startInflight(request)).toBe(true);
	expect(await b.inflightRequests()).toEqual([request]);
	// Held (and renewed) by A, the holder itself included: nobody takes it over.
	await pause(LEASE_MS * 2);
	expect(await b.takeOverInflight('img-1')).toBe(false);
	expect(await a.takeOverInflight('img-1')).toBe(false);
	expect(await b.startInflight(request)).toBe(false);
	die();
	await pause(LEASE_MS * 2);
	expect(await b.takeOverInflight('img-1')).toBe(true);
	expect(await c.takeOverInflight('img-1')).toBe(false);
	await b.endInflight('img-1');
	expect(await c.inflightRequests()).toEqual([]);
	// Ended: nothing left to take over, even with its lease free.
	expect(await c.takeOverInflight('img-1')).toBe(false);
});

it('drops what Redis holds under the in-flight records that is not a record of this app', async () => {
	const logger = new CapturingLogger();
	const a = await replica(logger);
	// Someone else writing to the same Redis: a client of its own, not the store's.
	const raw = createClient({ url: redis.url });
	await raw.connect();
	try {
		await raw.sendCommand(['HSET', 'gpu-cloud-slack:inflight:requests', 'bad', '{"ref":"bad"}']);
		await raw.sendCommand(['HSET', 'gpu-cloud-slack:inflight:requests', 'worse', 'not json']);
		expect(await a.inflightRequests()).toEqual([]);
		expect(await raw.sendCommand(['HLEN', 'gpu-cloud-slack:inflight:requests'])).toBe(0);
		expect(logger.lines.filter((line) => /not one of this app's/.test(line))).toHaveLength(2);
	} finally {
		raw.destroy();
	}
});

it('counts slots across replicas, lets adopted work past the limit, and frees released ones', async () => {
	const [a, b] = [await replica(), await replica()];
	expect(await a.acquireSlot('U2', 'x', 2)).toBeUndefined();
	expect(await b.acquireSlot('U2', 'y', 2)).toBeUndefined();
	expect(await a.acquireSlot('U2', 'z', 2)).toBe(2);
	await b.adoptSlot('U2', 'taken-over');
	expect(await a.acquireSlot('U2', 'z', 2)).toBe(3);
	await a.releaseSlot('U2', 'x');
	await b.releaseSlot('U2', 'taken-over');
	expect(await a.acquireSlot('U2', 'z', 2)).toBeUndefined();
});

it('sees a key first once across replicas, and waits for Redis while it restarts', async () => {
	const [a, b] = [await replica(), await replica()];
	expect(await a.claimOnce('webhook:w1', 60_000)).toBe(true);
	expect(await b.claimOnce('webhook:w1', 60_000)).toBe(false);
	await a.markDelivered('r9');
	await redis.stop();
	await expect(a.ping()).rejects.toThrow();
	// Asked while Redis is down: it waits, then answers from the data Redis kept.
	const waiting = b.isDelivered('r9');
	const claim = b.claimOnce('webhook:w2', 60_000);
	await pause(1000);
	await redis.restart();
	expect(await waiting).toBe(true);
	expect(await claim).toBe(true);
	// The readiness probe recovers by itself once the client has reconnected.
	const deadline = Date.now() + 5000;
	while (
		!(await a.ping().then(
			() => true,
			() => false,
		))
	) {
		if (Date.now() > deadline) throw new Error('the store probe did not recover');
		await pause(100);
	}
}, 30_000);

it("never lets one replica's status refresh land after another replica's end of the same request", async () => {
	const { standin, threads } = await standinThreads();
	try {
		const [a, b] = await Promise.all(
			[await replica(), await replica()].map(
				async (store, i) =>
					new DeliveryRecord(
						threads,
						await StateFile.open(join(dir, `state-${i}.json`), () => undefined),
						systemClock,
						store,
					),
			),
		);
		const thread = {
			channel: 'C0EDITS',
			threadTs: standin.workspace.post({
				channel: 'C0EDITS',
				user: BOT.userId,
				botId: BOT.botId,
				text: 'pending',
			}).ts,
		};
		const shown = () => standin.workspace.find(thread.channel, thread.threadTs)?.text;
		const show = (text: string) => () =>
			threads.update(thread.channel, thread.threadTs, { text, blocks: [] });
		const parts = errorParts('r-end', 'Following the job', 'gone');

		// A refreshes first and is slow to reach Slack: B's end waits for it, and lands last.
		let slowEdit = () => {};
		const editing = a.editUnlessDelivered('r-end', async () => {
			await new Promise<void>((resolve) => (slowEdit = resolve));
			await show('running')();
		});
		await pause(100);
		let endShown = false;
		const delivering = b.deliver('r-end', thread, {
			parts,
			finish: () => show('ended')().then(() => void (endShown = true)),
		});
		await pause(LEASE_MS);
		expect(endShown).toBe(false);
		slowEdit();
		expect(await editing).toBe(true);
		await delivering;
		expect(shown()).toBe('ended');

		// Once B delivered (or while it delivers), A's refresh is skipped.
		expect(await a.editUnlessDelivered('r-end', show('running'))).toBe(false);
		expect(shown()).toBe('ended');
		expect(standin.workspace.replies(thread.channel, thread.threadTs)).toHaveLength(1);
	} finally {
		await standin.close();
	}
}, 30_000);

/**
 * Stands between a replica and Redis and, once, forwards a command naming `marker` but drops the
 * connection instead of passing Redis' reply back: the command was carried out, its answer lost.
 */
async function losingFirstReply(
	target: URL,
	marker: string,
): Promise<{ url: string; close(): void }> {
	let lost = false;
	const sockets = new Set<Socket>();
	const server = createServer((client) => {
		const upstream = connect(Number(target.port), target.hostname);
		sockets.add(client).add(upstream);
		let dropping = false;
		client.on('data', (chunk) => {
			upstream.write(chunk);
			if (!lost && chunk.includes(marker)) {
				lost = dropping = true;
				// Redis carries the command out; the reply goes nowhere.
				setTimeout(() => (client.destroy(), upstream.destroy()), 100);
			}
		});
		upstream.on('data', (chunk) => {
			if (!dropping) client.write(chunk);
		});
		for (const socket of [client, upstream])
			socket.on('error', () => undefined).on('close', () => (client.destroy(), upstream.destroy()));
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `redis://127.0.0.1:${port}`,
		close: () => {
			for (const socket of sockets) socket.destroy();
			server.close();
		},
	};
}

it('keeps a first sighting its own when Redis stored the claim and the reply was lost', async () => {
	const proxy = await losingFirstReply(new URL(redis.url), 'lost-reply');
	try {
		const a = await RedisSharedState.connect({
			url: proxy.url,
			logger: new CapturingLogger(),
			leaseMs: LEASE_MS,
		});
		open.push(a);
		const b = await replica();
		// A's SET went through, its answer did not: A asks again, and must learn the claim is its own.
		expect(await a.claimOnce('slack-event:T1:Evlost-reply', 60_000)).toBe(true);
		expect(await b.claimOnce('slack-event:T1:Evlost-reply', 60_000)).toBe(false);
		expect(await a.claimOnce('slack-event:T1:Evlost-reply', 60_000)).toBe(false);
	} finally {
		proxy.close();
	}
}, 30_000);
