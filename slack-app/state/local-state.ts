import type { Clock } from '../../shared/clock';
import { LocalCallLedger, type CallLedger } from '../slack/call-budget';
import type { UnfinishedRequest } from './job-metadata';
import type { SharedState, RecordedInflight } from './shared-state';
import type { InflightRequest, StateFile } from './state-file';

/** Keys one table remembers at most (the oldest go first): a bound on memory, far above real traffic. */
const MAX_CLAIMED_KEYS = 100_000;

/**
 * The one in-memory "claim once" primitive: keys claimed in this process, each held until released
 * or `ttlMs` after its claim, at most MAX_CLAIMED_KEYS. What one process alone must see once (a
 * Slack event, a signature, a webhook delivery, a thread reply) and what it holds until done (a
 * user's slots) are claims in such a table.
 */
export class ClaimedWithin {
	/** In claim order, so in expiry order (one ttl per table): the oldest are forgotten first. */
	private readonly expiry = new Map<string, number>();

	constructor(private readonly ttlMs = Number.POSITIVE_INFINITY) {}

	/** True when `key` was free (never claimed, released, or expired); it is then held. */
	claim(key: string, now: number): boolean {
		for (const [held, until] of this.expiry) {
			if (until > now && this.expiry.size < MAX_CLAIMED_KEYS) break;
			this.expiry.delete(held);
		}
		if (this.holds(key, now)) return false;
		this.expiry.set(key, now + this.ttlMs);
		return true;
	}

	holds(key: string, now: number): boolean {
		return (this.expiry.get(key) ?? Number.NEGATIVE_INFINITY) > now;
	}

	release(key: string): void {
		this.expiry.delete(key);
	}

	/** Keys held now (a table without ttl: exactly those claimed and not released). */
	count(now: number): number {
		let held = 0;
		for (const until of this.expiry.values()) if (until > now) held++;
		return held;
	}
}

/** Each user's slots, held in this process until released: one claim per running request. */
export class LocalSlots
	implements
		Pick<SharedState, 'acquireSlot' | 'adoptSlot' | 'releaseSlot' | 'slotsInUse' | 'slotsHere'>
{
	private readonly byUser = new Map<string, ClaimedWithin>();

	acquireSlot(user: string, ref: string, max: number): Promise<number | undefined> {
		const mine = this.of(user);
		if (mine.holds(ref, 0)) return Promise.resolve(undefined);
		const running = mine.count(0);
		if (running >= max) return Promise.resolve(running);
		mine.claim(ref, 0);
		return Promise.resolve(undefined);
	}

	adoptSlot(user: string, ref: string): Promise<void> {
		this.of(user).claim(ref, 0);
		return Promise.resolve();
	}

	releaseSlot(user: string, ref: string): Promise<void> {
		const mine = this.byUser.get(user);
		mine?.release(ref);
		if (mine?.count(0) === 0) this.byUser.delete(user);
		return Promise.resolve();
	}

	slotsInUse(user: string): Promise<number> {
		return Promise.resolve(this.slotsHere(user));
	}

	slotsHere(user: string): number {
		return this.byUser.get(user)?.count(0) ?? 0;
	}

	private of(user: string): ClaimedWithin {
		let mine = this.byUser.get(user);
		if (!mine) this.byUser.set(user, (mine = new ClaimedWithin()));
		return mine;
	}
}

/** Leases in one process: always its own (there is no other replica), none outliving it. */
export const oneProcessLeases: Pick<SharedState, 'lease' | 'releaseLease' | 'leaseMs'> = {
	lease: () => Promise.resolve(true),
	releaseLease: () => Promise.resolve(),
	leaseMs: 0,
};

/**
 * The app as one process (no `REDIS_URL`): the same promises as RedisSharedState, kept by the one
 * replica there is. First sightings and slots are claims in memory (a restart forgets them, as the
 * process that held them is gone); leases are always this process's, and expire with it; what must
 * outlive a restart (what was delivered, the requests under way, which job each request created) is
 * the state file's.
 */
export class LocalSharedState implements SharedState {
	readonly leaseMs = oneProcessLeases.leaseMs;
	/** One table per ttl, so each forgets in claim order. */
	private readonly claims = new Map<number, ClaimedWithin>();
	private readonly slots = new LocalSlots();
	readonly callLedger: CallLedger;

	constructor(
		private readonly state: StateFile,
		private readonly clock: Pick<Clock, 'now'>,
	) {
		this.callLedger = new LocalCallLedger(clock);
	}

	claimOnce(key: string, ttlMs: number): Promise<boolean> {
		let table = this.claims.get(ttlMs);
		if (!table) this.claims.set(ttlMs, (table = new ClaimedWithin(ttlMs)));
		return Promise.resolve(table.claim(key, this.clock.now()));
	}

	lease(name: string): Promise<boolean> {
		return oneProcessLeases.lease(name);
	}

	releaseLease(name: string): Promise<void> {
		return oneProcessLeases.releaseLease(name);
	}

	isDelivered(ref: string): Promise<boolean> {
		return Promise.resolve(this.state.isDelivered(ref));
	}

	markDelivered(ref: string): Promise<void> {
		return this.state.markDelivered(ref);
	}

	acquireSlot(user: string, ref: string, max: number): Promise<number | undefined> {
		return this.slots.acquireSlot(user, ref, max);
	}

	adoptSlot(user: string, ref: string): Promise<void> {
		return this.slots.adoptSlot(user, ref);
	}

	releaseSlot(user: string, ref: string): Promise<void> {
		return this.slots.releaseSlot(user, ref);
	}

	slotsInUse(user: string): Promise<number> {
		return this.slots.slotsInUse(user);
	}

	slotsHere(user: string): number {
		return this.slots.slotsHere(user);
	}

	async startInflight(request: InflightRequest): Promise<boolean> {
		await this.state.startInflight(request);
		return true;
	}

	endInflight(ref: string): Promise<void> {
		return this.state.endInflight(ref);
	}

	inflightRequests(): Promise<RecordedInflight[]> {
		return Promise.resolve(
			this.state.inflight.flatMap((request) =>
				request.team === undefined ? [] : [{ ...request, team: request.team }],
			),
		);
	}

	takeOverInflight(ref: string): Promise<boolean> {
		return Promise.resolve(this.state.takeOverInflight(ref));
	}

	expectJob(team: string, requestId: string, endpoint?: string): Promise<void> {
		return this.state.expectJob(team, requestId, endpoint);
	}

	finishRequest(team: string, requestId: string): Promise<void> {
		return this.state.finishRequest(team, requestId);
	}

	unfinishedRequests(since: number): Promise<UnfinishedRequest[]> {
		return this.state.unfinishedRequests(since);
	}

	bindJob(team: string, requestId: string, jobId: string): Promise<boolean> {
		return this.state.bindJob(team, requestId, jobId);
	}

	createdJob(team: string, requestId: string): Promise<string | undefined> {
		return this.state.createdJob(team, requestId);
	}

	/** In the state file: a shared file's link outlives a restart while its job runs. */
	putRecord(key: string, value: string, ttlMs: number): Promise<void> {
		return this.state.putRecord(key, value, ttlMs);
	}

	getRecord(key: string): Promise<string | undefined> {
		return Promise.resolve(this.state.getRecord(key));
	}

	deleteRecord(key: string): Promise<void> {
		return this.state.deleteRecord(key);
	}

	ping(): Promise<void> {
		return Promise.resolve();
	}

	close(): Promise<void> {
		return Promise.resolve();
	}
}
