import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SharedState } from '../../slack-app/state/shared-state';
import { StateFile, type InflightRequest } from '../../slack-app/state/state-file';
import { eventually } from '../support/eventually';

/**
 * The promises every SharedState keeps, whichever the deployment: LocalSharedState (one process,
 * in `npm test`: test/slack/shared-state.test.ts) and RedisSharedState (replicas, against
 * redis-server in `npm run test:replicas`: test/replicas/shared-state-contract.e2e.ts). What only
 * several replicas can show (one replica refused what another holds) is in
 * test/replicas/shared-state.e2e.ts.
 */
export interface SharedStateSubject {
	/** The shared state as a process starting with `stateFile` has it. */
	open(stateFile: StateFile): Promise<SharedState>;
	/**
	 * The process that opened `store` dies: nothing is released or given back, and this resolves
	 * once what it held is free for the next process (at once for one process; after its leases
	 * expire with Redis).
	 */
	die(store: SharedState): Promise<void>;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function describeSharedStateContract(name: string, subject: SharedStateSubject): void {
	describe(`SharedState contract: ${name}`, () => {
		/** A process of the app: its state file and its shared state. */
		async function process(path?: string) {
			const statePath =
				path ?? join(await mkdtemp(join(tmpdir(), 'gpu-shared-contract-')), 's.json');
			const stateFile = await StateFile.open(statePath, () => undefined);
			return { statePath, stateFile, shared: await subject.open(stateFile) };
		}
		/** The process after `before` died, started again on its state file. */
		async function successor(before: { statePath: string; shared: SharedState }) {
			await subject.die(before.shared);
			return process(before.statePath);
		}
		/** Keys of their own: the suite shares one Redis with itself. */
		const unique = (what: string) => `${what}-${randomUUID()}`;
		const inflight = (team: string): InflightRequest & { team: string } => ({
			ref: unique('ref'),
			team,
			kind: 'image',
			channel: 'C0CONTRACT',
			threadTs: '1700000000.000100',
			messageTs: '1700000000.000100',
			user: 'U0CONTRACT',
			startedAt: 1,
			image: { prompt: 'a fox', count: 1 },
		});

		it('sees a key first once within its time, and first again once it expired', async () => {
			const { shared } = await process();
			const key = unique('webhook');
			expect(await shared.claimOnce(key, 300)).toBe(true);
			expect(await shared.claimOnce(key, 300)).toBe(false);
			expect(await shared.claimOnce(unique('webhook'), 300)).toBe(true);
			await pause(450);
			expect(await shared.claimOnce(key, 300)).toBe(true);
			expect(await shared.claimOnce(key, 300)).toBe(false);
		});

		it('keeps a lease for its holder, and gives it back', async () => {
			const { shared } = await process();
			const lease = unique('follow');
			expect(await shared.lease(lease)).toBe(true);
			expect(await shared.lease(lease)).toBe(true);
			await shared.releaseLease(lease);
			expect(await shared.lease(lease)).toBe(true);
		});

		it('remembers what was delivered, past the death of the process that delivered it', async () => {
			const first = await process();
			const [ref, other] = [unique('ref'), unique('ref')];
			expect(await first.shared.isDelivered(ref)).toBe(false);
			await first.shared.markDelivered(ref);
			expect(await first.shared.isDelivered(ref)).toBe(true);
			expect(await first.shared.isDelivered(other)).toBe(false);
			const next = await successor(first);
			expect(await next.shared.isDelivered(ref)).toBe(true);
			expect(await next.shared.isDelivered(other)).toBe(false);
		});

		it("counts a user's slots up to the limit, lets adopted work past it, and frees released ones", async () => {
			const { shared } = await process();
			const [user, someoneElse] = [unique('U'), unique('U')];
			expect(await shared.acquireSlot(user, 'r1', 2)).toBeUndefined();
			expect(await shared.acquireSlot(user, 'r2', 2)).toBeUndefined();
			expect(await shared.acquireSlot(user, 'r3', 2)).toBe(2);
			// A slot its request holds already is its own again.
			expect(await shared.acquireSlot(user, 'r1', 2)).toBeUndefined();
			expect(await shared.acquireSlot(someoneElse, 'r9', 2)).toBeUndefined();
			await shared.adoptSlot(user, 'resumed');
			expect(shared.slotsHere(user)).toBe(3);
			expect(await shared.slotsInUse(user)).toBe(3);
			await shared.releaseSlot(user, 'r1');
			expect(await shared.acquireSlot(user, 'r4', 2)).toBe(2);
			await shared.releaseSlot(user, 'resumed');
			expect(await shared.acquireSlot(user, 'r4', 2)).toBeUndefined();
			expect(shared.slotsHere(user)).toBe(2);
			expect(await shared.slotsInUse(someoneElse)).toBe(1);
		});

		it('frees the slots and leases of a process that died', async () => {
			const first = await process();
			const [user, lease] = [unique('U'), unique('deliver')];
			expect(await first.shared.acquireSlot(user, 'r1', 1)).toBeUndefined();
			expect(await first.shared.lease(lease)).toBe(true);
			const next = await successor(first);
			expect(await next.shared.slotsInUse(user)).toBe(0);
			expect(next.shared.slotsHere(user)).toBe(0);
			expect(await next.shared.acquireSlot(user, 'r2', 1)).toBeUndefined();
			expect(await next.shared.lease(lease)).toBe(true);
		});

		it('records which job each request created, past the death of its process', async () => {
			const first = await process();
			const [team, request, job] = [unique('T'), unique('req'), unique('job')];
			expect(await first.shared.createdJob(team, request)).toBeUndefined();
			await first.shared.expectJob(team, request);
			expect(await first.shared.createdJob(team, request)).toBe('');
			expect(await first.shared.bindJob(team, request, job)).toBe(true);
			expect(await first.shared.bindJob(team, request, job)).toBe(true);
			expect(await first.shared.bindJob(team, request, unique('copy'))).toBe(false);
			expect(await first.shared.createdJob(unique('T'), request)).toBeUndefined();
			const next = await successor(first);
			expect(await next.shared.createdJob(team, request)).toBe(job);
			// Bound without being expected first (recorded only after the create).
			const late = unique('req');
			expect(await next.shared.bindJob(team, late, job)).toBe(true);
			expect(await next.shared.createdJob(team, late)).toBe(job);
		});

		it('keeps requests opened within the same millisecond in the order they were opened', async () => {
			const first = await process();
			const team = unique('T');
			const since = Date.now() - 1000;
			const requests = Array.from({ length: 20 }, () => unique('req'));
			for (const request of requests) await first.shared.expectJob(team, request, 'echo');
			const next = await successor(first);
			const mine = (await next.shared.unfinishedRequests(since)).filter(
				(record) => record.team === team,
			);
			expect(mine.map((record) => record.request)).toEqual(requests);
		});

		it('lists the requests left unfinished, oldest first, past the death of their process; finished ones no more', async () => {
			const first = await process();
			const team = unique('T');
			const [lost, running, done] = [unique('req'), unique('req'), unique('req')];
			const since = Date.now() - 1000;
			await first.shared.expectJob(team, lost, 'echo');
			await first.shared.expectJob(team, running, 'echo');
			const job = unique('job');
			await first.shared.bindJob(team, running, job);
			await first.shared.expectJob(team, done, 'echo');
			await first.shared.bindJob(team, done, unique('job'));
			await first.shared.finishRequest(team, done);
			const next = await successor(first);
			const mine = (await next.shared.unfinishedRequests(since)).filter(
				(record) => record.team === team,
			);
			expect(mine.map(({ request, job, endpoint }) => ({ request, job, endpoint }))).toEqual([
				{ request: lost, job: '', endpoint: 'echo' },
				{ request: running, job, endpoint: 'echo' },
			]);
			// Finished, it still vouches for its job.
			expect(await next.shared.createdJob(team, done)).not.toBe('');
		});

		it('holds a request under way for the process that started it; the next one takes it over once', async () => {
			const first = await process();
			const request = inflight(unique('T'));
			expect(await first.shared.startInflight(request)).toBe(true);
			expect(await first.shared.inflightRequests()).toContainEqual(request);
			expect(await first.shared.takeOverInflight(request.ref)).toBe(false);
			const next = await successor(first);
			expect(await next.shared.inflightRequests()).toContainEqual(request);
			expect(await next.shared.takeOverInflight(request.ref)).toBe(true);
			expect(await next.shared.takeOverInflight(request.ref)).toBe(false);
			await next.shared.endInflight(request.ref);
			expect(await next.shared.inflightRequests()).not.toContainEqual(request);
			expect(await next.shared.takeOverInflight(request.ref)).toBe(false);
		});

		it('forgets an ended request: nothing is left to take over', async () => {
			const first = await process();
			const request = inflight(unique('T'));
			await first.shared.startInflight(request);
			await first.shared.endInflight(request.ref);
			expect(await first.shared.inflightRequests()).not.toContainEqual(request);
			const next = await successor(first);
			expect(await next.shared.inflightRequests()).not.toContainEqual(request);
			expect(await next.shared.takeOverInflight(request.ref)).toBe(false);
		});

		it('takes over, once, what the state file recorded as under way when the app stopped', async () => {
			const statePath = join(await mkdtemp(join(tmpdir(), 'gpu-shared-contract-')), 's.json');
			const request = inflight(unique('T'));
			// Recorded by the state file alone: one process, or a version before Redis kept them.
			await (await StateFile.open(statePath, () => undefined)).startInflight(request);
			const { shared } = await process(statePath);
			expect(await shared.inflightRequests()).toContainEqual(request);
			expect(await shared.takeOverInflight(request.ref)).toBe(true);
			expect(await shared.takeOverInflight(request.ref)).toBe(false);
			await shared.endInflight(request.ref);
			expect(await shared.inflightRequests()).not.toContainEqual(request);
		});

		it('keeps a record for its time, until it is deleted', async () => {
			const { shared } = await process();
			const kept = unique('record');
			const short = unique('record');
			await shared.putRecord(kept, 'value', 60_000);
			await shared.putRecord(short, 'brief', 50);
			expect(await shared.getRecord(kept)).toBe('value');
			expect(await shared.getRecord(unique('record'))).toBeUndefined();
			// It expires by itself, with nobody deleting it.
			await eventually(
				'the short record to expire',
				async () => (await shared.getRecord(short)) === undefined,
			);
			expect(await shared.getRecord(kept)).toBe('value');
			await shared.deleteRecord(kept);
			expect(await shared.getRecord(kept)).toBeUndefined();
		});

		it('keeps a record across a restart of the process', async () => {
			const first = await process();
			const key = unique('record');
			await first.shared.putRecord(key, 'kept', 60_000);
			const next = await successor(first);
			expect(await next.shared.getRecord(key)).toBe('kept');
			await next.shared.deleteRecord(key);
			expect(await next.shared.getRecord(key)).toBeUndefined();
		});

		it('answers its readiness probe', async () => {
			const { shared } = await process();
			await expect(shared.ping()).resolves.toBeUndefined();
		});
	});
}
