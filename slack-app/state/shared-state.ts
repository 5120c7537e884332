import { randomUUID } from 'node:crypto';
import type { Logger } from '@slack/bolt';
import { createClient } from 'redis';
import { z } from 'zod/v4';
import type { CallLedger } from '../slack/call-budget';
import { errorSummary } from '../slack/errors';
import { SLACK_TIMEOUT_MS } from '../slack/slack-client';
import { RedisCallLedger } from './shared-call-ledger';
import type { CreatedJobs, UnfinishedRequest } from './job-metadata';
import { inflightSchema, type InflightRequest, type StateFile } from './state-file';

/**
 * What the replicas of the app agree on: who follows and who delivers which job (leases that expire
 * when their holder dies), what was delivered, each user's running work (slots), which signed Slack
 * requests, events, webhook deliveries and thread replies were seen already, the images and answers
 * under way, and which job each request created. Always injected, in one of two implementations:
 * RedisSharedState when `REDIS_URL` is set (several replicas), LocalSharedState for one process
 * (memory and its state file). Its users never ask which; test/slack/shared-state-contract.ts holds
 * both to the same promises.
 *
 * When Redis cannot be reached every call waits and retries until it answers: a replica then does
 * nothing it cannot agree on (no post, no new job), and picks up where it was once Redis is back.
 */
export interface SharedState extends CreatedJobs {
	/** True the first time `key` is claimed within `ttlMs` by any replica (replays, webhook ids). */
	claimOnce(key: string, ttlMs: number): Promise<boolean>;
	/** Takes `name` for this replica, or keeps it if held already; renewed until released or this replica dies. */
	lease(name: string): Promise<boolean>;
	releaseLease(name: string): Promise<void>;
	isDelivered(ref: string): Promise<boolean>;
	markDelivered(ref: string): Promise<void>;
	/** Reserves one of `user`'s `max` slots for `ref`; undefined when reserved, else how many are in use. */
	acquireSlot(user: string, ref: string, max: number): Promise<number | undefined>;
	/** Counts `ref` even past the limit (work taken over from another replica runs already). */
	adoptSlot(user: string, ref: string): Promise<void>;
	releaseSlot(user: string, ref: string): Promise<void>;
	/** How long a dead replica's leases and slots stay held. */
	readonly leaseMs: number;
	/** Resolves when Redis answers (the `store` readiness probe). */
	ping(): Promise<void>;
	close(): Promise<void>;
	/** How many of `user`'s slots are held now, by any replica (the Home tab's count). */
	slotsInUse(user: string): Promise<number>;
	/** How many of `user`'s slots this replica holds: known without asking (when the store is slow). */
	slotsHere(user: string): number;
	/**
	 * Records an image or answer under way, held by this replica's `inflightLease(ref)` (renewed with
	 * its other leases) until `endInflight`. False, recording nothing, when another replica holds it.
	 */
	startInflight(request: InflightRequest): Promise<boolean>;
	/** Forgets the request (it ended) and gives its lease back. */
	endInflight(ref: string): Promise<void>;
	/** Every image or answer any replica recorded as under way; each names its workspace. */
	inflightRequests(): Promise<RecordedInflight[]>;
	/**
	 * Takes `ref` over when it is still recorded and no replica holds it (its holder died and the lease
	 * expired); false when held, this replica included, or ended meanwhile.
	 */
	takeOverInflight(ref: string): Promise<boolean>;
	/**
	 * Keeps `value` under `key` for `ttlMs`, readable by every replica (a served file's capability,
	 * which any replica behind the load balancer may be asked for).
	 */
	putRecord(key: string, value: string, ttlMs: number): Promise<void>;
	/** The value under `key`; undefined once deleted or expired. */
	getRecord(key: string): Promise<string | undefined>;
	deleteRecord(key: string): Promise<void>;
	/** Where the Slack call budget counts calls, so that every replica's calls count against one workspace's limits. */
	readonly callLedger: CallLedger;
}

/** A request that is creating or created a job, until it is finished (Redis hash `requests:open`). */
const openRequestSchema = z.strictObject({
	team: z.string().min(1),
	request: z.string().min(1),
	endpoint: z.string().min(1).optional(),
	at: z.number(),
});
type OpenRequest = z.infer<typeof openRequestSchema>;

function openRequestField(team: string, requestId: string): string {
	return `${team}:${requestId}`;
}

/** In Redis, an in-flight request always says whose it is. */
export type RecordedInflight = InflightRequest & { team: string };
const recordedInflightSchema = inflightSchema.extend({ team: z.string().min(1) });

/** Held by the replica that runs the image or answer `ref`; free once it died. */
export function inflightLease(ref: string): string {
	return `inflight:${ref}`;
}

/** A dead replica's leases and slots are free again this long after its last renewal. */
const DEFAULT_LEASE_MS = 10_000;
/** A delivered mark outlives the longest resume window (14 days). */
const DELIVERED_TTL_SECONDS = 15 * 24 * 3600;
const RETRY_PAUSE_MS = 500;
/** Which job a request created is kept as long as a delivered mark. */
const CREATED_TTL_MS = DELIVERED_TTL_SECONDS * 1000;

/** Takes the lease when free, renews it when ours; 1 when ours afterwards. */
const LEASE_SCRIPT = `
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if holder then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0`;

/** Slots are a sorted set per user, scored by when each expires; -1 when `ref` holds one afterwards. */
const SLOT_SCRIPT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZSCORE', KEYS[1], ARGV[3]) or ARGV[4] == '-1' then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
  redis.call('PEXPIREAT', KEYS[1], ARGV[2])
  return -1
end
local running = redis.call('ZCARD', KEYS[1])
if running >= tonumber(ARGV[4]) then return running end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return -1`;

/** The lease and the record of an image or answer under way, together: no replica sees one without the other. */
const START_INFLIGHT_SCRIPT = `
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
return 1`;

const END_INFLIGHT_SCRIPT = `
redis.call('HDEL', KEYS[2], ARGV[2])
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0`;

/** 1 when the request is still recorded and its lease was free (now this replica's). */
const TAKE_OVER_INFLIGHT_SCRIPT = `
if redis.call('HEXISTS', KEYS[2], ARGV[3]) == 0 then return 0 end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0`;

/** A state file's record of a version before Redis kept them: recorded, held by none, unless delivered already. */
const MOVE_INFLIGHT_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2])
return 1`;

/** Records the job of a request unless it names another already; 1 when it names this one afterwards. */
const BIND_JOB_SCRIPT = `
local job = redis.call('GET', KEYS[1])
if job and job ~= '' and job ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

/** HGETALL's reply: field to value (RESP3, and this client's RESP2 default), or field, value, ... */
const hashReplySchema = z.union([
	z.record(z.string(), z.string()),
	z
		.array(z.string())
		.transform((flat) =>
			Object.fromEntries(
				Array.from({ length: Math.floor(flat.length / 2) }, (_, i) => [
					flat[2 * i],
					flat[2 * i + 1],
				]),
			),
		),
]);

/** What this module uses of the client: raw commands, so no typing of Redis replies leaks out. */
interface RedisClient {
	readonly isReady: boolean;
	sendCommand(args: string[]): Promise<unknown>;
	destroy(): void;
}

export interface RedisSharedStateOptions {
	url: string;
	logger: Logger;
	leaseMs?: number;
	/**
	 * This replica's state file, where a version before Redis kept them recorded its images and
	 * answers under way: they move to Redis when the records are read (see `inflightRequests`).
	 */
	stateFile?: Pick<StateFile, 'inflight' | 'endInflight'>;
}

/** Every key of this app starts so, apart from other data in the same Redis. */
const KEY_PREFIX = 'gpu-cloud-slack:';

export class RedisSharedState implements SharedState {
	readonly leaseMs: number;
	/** When this replica last opened a request (see `expectJob`). */
	private lastOpenedAt = 0;
	readonly callLedger: CallLedger = new RedisCallLedger(
		(args) => this.command(args),
		KEY_PREFIX,
		SLACK_TIMEOUT_MS,
	);
	/** Names this replica's leases and slot values. */
	private readonly replica = randomUUID();
	private readonly leases = new Set<string>();
	private readonly slots = new Map<string, string>();
	private readonly renewer: NodeJS.Timeout;
	private readonly stateFile: RedisSharedStateOptions['stateFile'];
	private closed = false;
	private renewing = false;
	private unreachable = false;

	private constructor(
		private readonly client: RedisClient,
		private readonly logger: Logger,
		options: RedisSharedStateOptions,
	) {
		this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
		this.stateFile = options.stateFile;
		this.renewer = setInterval(
			() => void this.renew(),
			Math.max(100, Math.floor(this.leaseMs / 3)),
		);
		this.renewer.unref();
	}

	/** Connects (waiting for Redis if it is not up yet) and starts renewing what this replica holds. */
	static async connect(options: RedisSharedStateOptions): Promise<RedisSharedState> {
		const client = createClient({
			url: options.url,
			// Reconnect for ever, at most a second apart: a Redis restart is waited out, not fatal.
			socket: {
				reconnectStrategy: (retries: number) => Math.min(100 * 2 ** Math.min(retries, 4), 1000),
				connectTimeout: 5000,
			},
		});
		const store = new RedisSharedState(client, options.logger, options);
		client.on('error', (error: unknown) => store.noteUnreachable(error));
		client.on('ready', () => store.noteReachable());
		await client.connect();
		return store;
	}

	async claimOnce(key: string, ttlMs: number): Promise<boolean> {
		// Each claim stores its own token: when Redis stored it but the reply was lost, the retry's
		// SET NX fails, and the token read back says whether the claim that stands is this one.
		const token = `${this.replica}:${randomUUID()}`;
		const claimed = this.key('once', key);
		if ((await this.command(['SET', claimed, token, 'NX', 'PX', String(ttlMs)])) === 'OK')
			return true;
		return (await this.command(['GET', claimed])) === token;
	}

	async lease(name: string): Promise<boolean> {
		const ours = (await this.command(this.leaseCommand(name))) === 1;
		if (ours) this.leases.add(name);
		return ours;
	}

	async releaseLease(name: string): Promise<void> {
		this.leases.delete(name);
		await this.command(['EVAL', RELEASE_SCRIPT, '1', this.key('lease', name), this.replica]);
	}

	async isDelivered(ref: string): Promise<boolean> {
		return (await this.command(['EXISTS', this.key('delivered', ref)])) === 1;
	}

	async markDelivered(ref: string): Promise<void> {
		await this.command([
			'SET',
			this.key('delivered', ref),
			'1',
			'EX',
			String(DELIVERED_TTL_SECONDS),
		]);
	}

	async acquireSlot(user: string, ref: string, max: number): Promise<number | undefined> {
		const running = await this.slot(user, ref, max);
		return running < 0 ? undefined : running;
	}

	async adoptSlot(user: string, ref: string): Promise<void> {
		// Counted here at once: it runs already, whenever Redis answers.
		this.slots.set(ref, user);
		await this.slot(user, ref, -1);
	}

	async releaseSlot(user: string, ref: string): Promise<void> {
		this.slots.delete(ref);
		await this.command(['ZREM', this.key('slots', user), ref]);
	}

	async putRecord(key: string, value: string, ttlMs: number): Promise<void> {
		await this.command(['SET', this.key('record', key), value, 'PX', String(Math.max(1, ttlMs))]);
	}

	async getRecord(key: string): Promise<string | undefined> {
		const value = await this.command(['GET', this.key('record', key)]);
		return typeof value === 'string' ? value : undefined;
	}

	async deleteRecord(key: string): Promise<void> {
		await this.command(['DEL', this.key('record', key)]);
	}

	async ping(): Promise<void> {
		if (!this.client.isReady) throw new Error('Redis is not connected');
		await this.client.sendCommand(['PING']);
	}

	async close(): Promise<void> {
		this.closed = true;
		clearInterval(this.renewer);
		// Whatever this replica still holds is free for the others at once, not after the lease time.
		await Promise.race([
			this.giveBack(),
			new Promise((resolve) => setTimeout(resolve, 2000).unref()),
		]);
		this.client.destroy();
	}

	private async giveBack(): Promise<void> {
		try {
			for (const name of [...this.leases])
				await this.client.sendCommand([
					'EVAL',
					RELEASE_SCRIPT,
					'1',
					this.key('lease', name),
					this.replica,
				]);
		} catch {
			// Redis is away: the leases expire by themselves.
		}
	}

	private async slot(user: string, ref: string, max: number): Promise<number> {
		const now = Date.now();
		const running = Number(
			await this.command([
				'EVAL',
				SLOT_SCRIPT,
				'1',
				this.key('slots', user),
				String(now),
				String(now + this.leaseMs),
				ref,
				String(max),
			]),
		);
		if (running < 0) this.slots.set(ref, user);
		return running;
	}

	/** Takes or extends the lease `name` for this replica; Redis answers 1 when it is this replica's. */
	private leaseCommand(name: string): string[] {
		return ['EVAL', LEASE_SCRIPT, '1', this.key('lease', name), this.replica, String(this.leaseMs)];
	}

	/** Extends every lease and slot this replica holds; a lease another replica took meanwhile is dropped. */
	private async renew(): Promise<void> {
		if (this.closed || this.renewing || !this.client.isReady) return;
		this.renewing = true;
		try {
			// Sent together, so the client pipelines them: thousands of leases cost one round trip, and a
			// busy replica renews well within the lease time.
			const leases = [...this.leases];
			const held = await Promise.all(
				leases.map((name) => this.client.sendCommand(this.leaseCommand(name))),
			);
			leases.forEach((name, i) => {
				if (held[i] !== 1) this.leases.delete(name);
			});
			const expiresAt = String(Date.now() + this.leaseMs);
			await Promise.all(
				[...this.slots].flatMap(([ref, user]) => [
					// Re-added if Redis lost it (restarted without it): the work still runs.
					this.client.sendCommand(['ZADD', this.key('slots', user), expiresAt, ref]),
					this.client.sendCommand(['PEXPIREAT', this.key('slots', user), expiresAt]),
				]),
			);
		} catch (error) {
			this.noteUnreachable(error);
		} finally {
			this.renewing = false;
		}
	}

	/** One command, retried until Redis answers: a replica waits for Redis rather than act alone. */
	private async command(args: string[]): Promise<unknown> {
		for (;;) {
			try {
				return await this.client.sendCommand(args);
			} catch (error) {
				if (this.closed) throw error;
				this.noteUnreachable(error);
				await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
			}
		}
	}

	private key(kind: string, name: string): string {
		return `${KEY_PREFIX}${kind}:${name}`;
	}

	private noteUnreachable(error: unknown): void {
		if (this.unreachable || this.closed) return;
		this.unreachable = true;
		this.logger.warn(
			`Redis is unreachable; waiting for it before delivering or starting work: ${errorSummary(error)}`,
		);
	}

	private noteReachable(): void {
		if (!this.unreachable) return;
		this.unreachable = false;
		this.logger.info('Redis is reachable again.');
	}

	async expectJob(team: string, requestId: string, endpoint?: string): Promise<void> {
		// Strictly increasing within a replica: requests opened in one millisecond keep their order
		// (a hash keeps none), so a restart resumes them oldest first.
		this.lastOpenedAt = Math.max(Date.now(), this.lastOpenedAt + 1);
		const record: OpenRequest = {
			team,
			request: requestId,
			...(endpoint ? { endpoint } : {}),
			at: this.lastOpenedAt,
		};
		await this.command([
			'HSET',
			this.key('requests', 'open'),
			openRequestField(team, requestId),
			JSON.stringify(record),
		]);
		await this.command([
			'SET',
			this.createdKey(team, requestId),
			'',
			'NX',
			'PX',
			String(CREATED_TTL_MS),
		]);
	}

	async bindJob(team: string, requestId: string, jobId: string): Promise<boolean> {
		return (
			(await this.command([
				'EVAL',
				BIND_JOB_SCRIPT,
				'1',
				this.createdKey(team, requestId),
				jobId,
				String(CREATED_TTL_MS),
			])) === 1
		);
	}

	async createdJob(team: string, requestId: string): Promise<string | undefined> {
		const job = await this.command(['GET', this.createdKey(team, requestId)]);
		return typeof job === 'string' ? job : undefined;
	}

	async finishRequest(team: string, requestId: string): Promise<void> {
		await this.command(['HDEL', this.key('requests', 'open'), openRequestField(team, requestId)]);
	}

	async unfinishedRequests(since: number): Promise<UnfinishedRequest[]> {
		const open = this.key('requests', 'open');
		const reply = hashReplySchema.parse(await this.command(['HGETALL', open]));
		const found: UnfinishedRequest[] = [];
		for (const [field, value] of Object.entries(reply)) {
			const parsed = openRequestSchema.safeParse(parseJson(value));
			const job = parsed.success
				? await this.createdJob(parsed.data.team, parsed.data.request)
				: undefined;
			// Unreadable, or its record of the job expired with the resume window: nothing to resume.
			if (!parsed.success || job === undefined) {
				await this.command(['HDEL', open, field]);
				continue;
			}
			if (parsed.data.at >= since) found.push({ ...parsed.data, job });
		}
		return found.sort((a, b) => a.at - b.at);
	}

	private createdKey(team: string, requestId: string): string {
		return this.key('created', `${team}:${requestId}`);
	}

	async slotsInUse(user: string): Promise<number> {
		// Expired slots (a dead replica's) are not in use, though not yet removed.
		return Number(
			await this.command(['ZCOUNT', this.key('slots', user), `(${Date.now()}`, '+inf']),
		);
	}

	slotsHere(user: string): number {
		return [...this.slots.values()].filter((holder) => holder === user).length;
	}

	async startInflight(request: InflightRequest): Promise<boolean> {
		const ours = await this.inflightScript(
			START_INFLIGHT_SCRIPT,
			request.ref,
			String(this.leaseMs),
			request.ref,
			JSON.stringify(request),
		);
		if (ours) this.leases.add(inflightLease(request.ref));
		return ours;
	}

	async endInflight(ref: string): Promise<void> {
		this.leases.delete(inflightLease(ref));
		await this.inflightScript(END_INFLIGHT_SCRIPT, ref, ref);
	}

	/** Every replica's records, once this replica's state file's (of a version before Redis) moved in. */
	async inflightRequests(): Promise<RecordedInflight[]> {
		await this.moveStateFileRecords();
		const reply = hashReplySchema.parse(await this.command(['HGETALL', this.inflightKey()]));
		const requests: RecordedInflight[] = [];
		for (const [ref, record] of Object.entries(reply)) {
			const parsed = recordedInflightSchema.safeParse(parseJson(record));
			if (parsed.success && parsed.data.ref === ref) {
				requests.push(parsed.data);
				continue;
			}
			// Nothing could resume it: it would only be read again and again.
			this.logger.warn(`Dropped an in-flight record in Redis that is not one of this app's.`);
			await this.command(['HDEL', this.inflightKey(), ref]);
		}
		return requests;
	}

	async takeOverInflight(ref: string): Promise<boolean> {
		const taken = await this.inflightScript(
			TAKE_OVER_INFLIGHT_SCRIPT,
			ref,
			String(this.leaseMs),
			ref,
		);
		if (taken) this.leases.add(inflightLease(ref));
		return taken;
	}

	/**
	 * Moves each record of the state file that names its workspace (`StateFile.ownUnmarked` names
	 * them first) to Redis, with no holder, so it is taken over like a dead replica's; one another
	 * replica delivered meanwhile is dropped. Out of the file once in Redis.
	 */
	private async moveStateFileRecords(): Promise<void> {
		for (const request of [...(this.stateFile?.inflight ?? [])]) {
			if (request.team === undefined) continue;
			await this.command([
				'EVAL',
				MOVE_INFLIGHT_SCRIPT,
				'2',
				this.key('delivered', request.ref),
				this.inflightKey(),
				request.ref,
				JSON.stringify(request),
			]);
			await this.stateFile?.endInflight(request.ref);
		}
	}

	/** The records of every replica's images and answers under way: ref to record. */
	private inflightKey(): string {
		return this.key('inflight', 'requests');
	}

	/** Runs an in-flight script on `ref`'s lease and the records (ARGV: this replica, then `args`); true when it answers 1. */
	private async inflightScript(script: string, ref: string, ...args: string[]): Promise<boolean> {
		const keys = [this.key('lease', inflightLease(ref)), this.inflightKey()];
		return (await this.command(['EVAL', script, '2', ...keys, this.replica, ...args])) === 1;
	}
}

function parseJson(text: string): unknown {
	try {
		return JSON.parse(text);
	} catch {
		return undefined;
	}
}
