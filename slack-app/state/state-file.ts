import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod/v4';
import { imageRequestSchema } from '../messages/actions';
import { isMissingFile, writeFileAtomically } from './files';
import type { CreatedJobs, UnfinishedRequest } from './job-metadata';

/**
 * A small local file of what the app should not forget across a restart. Jobs carry their thread in
 * the service's metadata and posted results are visible in the Slack thread; what only this file
 * knows (one process, no Redis) is which job each of the app's requests created (CreatedJobs). Each write is atomic (writeFileAtomically): a SIGKILL at any moment
 * leaves either the old or the new state, never a torn file.
 */

const DELIVERED_MEMORY = 5000;

export const inflightSchema = z.strictObject({
	ref: z.string().min(1),
	/**
	 * The workspace whose container redoes or flags it after a restart. Absent in state files of
	 * versions before it was recorded: see `StateFile.ownUnmarked`.
	 */
	team: z.string().min(1).optional(),
	kind: z.enum(['image', 'chat']),
	channel: z.string().min(1),
	threadTs: z.string().min(1),
	/** The message the app edits for this request (the parent, or a chat answer). */
	messageTs: z.string().min(1),
	user: z.string().min(1),
	startedAt: z.number(),
	/** For images: what to generate again after a restart. */
	image: imageRequestSchema.optional(),
	/** For a chat question: shown again on the parent when the answer was interrupted. */
	prompt: z.string().optional(),
});
export type InflightRequest = z.infer<typeof inflightSchema>;

/** Where a request under way is recorded while it runs: this state file, or Redis with several replicas. */
export interface InflightRecords {
	startInflight(request: InflightRequest): Promise<unknown>;
	endInflight(ref: string): Promise<void>;
}

/** Which job a request of a workspace created ('' until known), and when it was recorded. */
const createdJobSchema = z.strictObject({
	team: z.string().min(1),
	request: z.string().min(1),
	job: z.string(),
	at: z.number(),
	// Absent in records of versions before restarts resumed each request alone.
	endpoint: z.string().min(1).optional(),
	/** Delivered, gone or never created: a restart leaves it (the record still vouches for the job). */
	finished: z.literal(true).optional(),
});

const stateSchema = z.strictObject({
	version: z.literal(1),
	endpoints: z.array(z.string()),
	posted: z.array(z.string()),
	inflight: z.array(inflightSchema),
	// Absent in state files of versions before the app recorded the jobs it created.
	created: z.array(createdJobSchema).default([]),
	/** Short-lived records that must outlive a restart (a shared file's link while its job runs). */
	records: z
		.array(z.strictObject({ key: z.string(), value: z.string(), until: z.number() }))
		.default([]),
});
type State = z.infer<typeof stateSchema>;
type CreatedJob = z.infer<typeof createdJobSchema>;

function createdKey(team: string, request: string): string {
	return `${team}\n${request}`;
}

const emptyState = (): State => ({
	version: 1,
	endpoints: [],
	posted: [],
	inflight: [],
	created: [],
	records: [],
});

/** A record of a created job outlives the longest resume window (14 days). */
const DEFAULT_KEEP_CREATED_MS = 15 * 24 * 3600_000;

export class StateFile implements InflightRecords, CreatedJobs {
	private state: State = emptyState();
	/** What was delivered (the file calls it `posted`). */
	private delivered = new Set<string>();
	private createdIndex = new Map<string, CreatedJob>();
	/** Requests recorded or taken over by this process: the others were left by an earlier run. */
	private readonly underway = new Set<string>();
	private writing: Promise<void> = Promise.resolve();

	private constructor(
		private readonly path: string,
		private readonly keepCreatedMs: number,
		private readonly now: () => number,
	) {}

	/**
	 * Reads the file; a missing or unreadable one starts empty (the service and Slack still know,
	 * but jobs created before are no longer taken as the app's: their record is gone).
	 */
	static async open(
		path: string,
		warn: (message: string) => void,
		options: { keepCreatedMs?: number; now?: () => number } = {},
	): Promise<StateFile> {
		const store = new StateFile(
			path,
			options.keepCreatedMs ?? DEFAULT_KEEP_CREATED_MS,
			options.now ?? Date.now,
		);
		try {
			const parsed = stateSchema.safeParse(JSON.parse(await readFile(path, 'utf8')));
			if (parsed.success) store.state = parsed.data;
			else warn(`Ignoring ${path}: it is not a state file of this app.`);
		} catch (error) {
			if (!isMissingFile(error)) warn(`Ignoring ${path}: it cannot be read.`);
		}
		store.delivered = new Set(store.state.posted);
		store.indexCreated();
		return store;
	}

	get endpoints(): readonly string[] {
		return this.state.endpoints;
	}

	get inflight(): readonly InflightRequest[] {
		return this.state.inflight;
	}

	isDelivered(ref: string): boolean {
		return this.delivered.has(ref);
	}

	addEndpoint(name: string): Promise<void> {
		if (this.state.endpoints.includes(name)) return this.writing;
		this.state.endpoints.push(name);
		return this.save();
	}

	markDelivered(ref: string): Promise<void> {
		if (this.delivered.has(ref)) return this.writing;
		this.delivered.add(ref);
		this.state.posted.push(ref);
		if (this.state.posted.length > DELIVERED_MEMORY) {
			for (const old of this.state.posted.splice(0, this.state.posted.length - DELIVERED_MEMORY))
				this.delivered.delete(old);
		}
		return this.save();
	}

	/**
	 * Takes up `ref`, a request an earlier run left unfinished, unless this process runs it already:
	 * true once. From then on it counts as under way here, so a workspace's services built again do
	 * not take it twice.
	 */
	takeOverInflight(ref: string): boolean {
		if (this.underway.has(ref) || !this.state.inflight.some((entry) => entry.ref === ref))
			return false;
		this.underway.add(ref);
		return true;
	}

	/**
	 * Records from before requests named their workspace: they are the workspace's when the app serves
	 * exactly one (`teams`), and unknown otherwise, so dropped (no container could tell whether a thread
	 * is its own). Resolves with how many were dropped.
	 */
	async ownUnmarked(teams: readonly string[]): Promise<number> {
		const unmarked = this.state.inflight.filter((entry) => entry.team === undefined);
		if (unmarked.length === 0) return 0;
		const [only] = teams;
		this.state.inflight =
			teams.length === 1
				? this.state.inflight.map((entry) => ({ ...entry, team: entry.team ?? only }))
				: this.state.inflight.filter((entry) => entry.team !== undefined);
		await this.save();
		return teams.length === 1 ? 0 : unmarked.length;
	}

	startInflight(request: InflightRequest): Promise<void> {
		this.underway.add(request.ref);
		this.state.inflight = [
			...this.state.inflight.filter((entry) => entry.ref !== request.ref),
			request,
		];
		return this.save();
	}

	endInflight(ref: string): Promise<void> {
		this.underway.delete(ref);
		if (!this.state.inflight.some((entry) => entry.ref === ref)) return this.writing;
		this.state.inflight = this.state.inflight.filter((entry) => entry.ref !== ref);
		return this.save();
	}

	expectJob(team: string, request: string, endpoint?: string): Promise<void> {
		if (this.createdRecord(team, request)) return this.writing;
		this.forgetOldCreated();
		this.addCreated({ team, request, job: '', at: this.now(), ...(endpoint ? { endpoint } : {}) });
		return this.save();
	}

	finishRequest(team: string, request: string): Promise<void> {
		const record = this.createdRecord(team, request);
		if (!record || record.finished) return this.writing;
		record.finished = true;
		return this.save();
	}

	async unfinishedRequests(since: number): Promise<UnfinishedRequest[]> {
		// Recorded in time order: already oldest first.
		return this.state.created
			.filter((entry) => entry.at >= since && !entry.finished)
			.map(({ team, request, job, endpoint, at }) => ({
				team,
				request,
				job,
				at,
				...(endpoint ? { endpoint } : {}),
			}));
	}

	async bindJob(team: string, request: string, job: string): Promise<boolean> {
		const record = this.createdRecord(team, request);
		if (record && record.job !== '') return record.job === job;
		if (record) record.job = job;
		else this.addCreated({ team, request, job, at: this.now() });
		await this.save();
		return true;
	}

	async createdJob(team: string, request: string): Promise<string | undefined> {
		return this.createdRecord(team, request)?.job;
	}

	/** Keeps `value` under `key` until `ttlMs` from now (SharedState's records, for one process). */
	putRecord(key: string, value: string, ttlMs: number): Promise<void> {
		const now = this.now();
		this.state.records = [
			...this.state.records.filter((record) => record.key !== key && record.until > now),
			{ key, value, until: now + ttlMs },
		];
		return this.save();
	}

	getRecord(key: string): string | undefined {
		return this.state.records.find((record) => record.key === key && record.until > this.now())
			?.value;
	}

	deleteRecord(key: string): Promise<void> {
		if (!this.state.records.some((record) => record.key === key)) return this.writing;
		this.state.records = this.state.records.filter((record) => record.key !== key);
		return this.save();
	}

	private addCreated(record: CreatedJob): void {
		this.state.created.push(record);
		this.createdIndex.set(createdKey(record.team, record.request), record);
	}

	private createdRecord(team: string, request: string): CreatedJob | undefined {
		const record = this.createdIndex.get(createdKey(team, request));
		return record && record.at >= this.now() - this.keepCreatedMs ? record : undefined;
	}

	private forgetOldCreated(): void {
		const cutoff = this.now() - this.keepCreatedMs;
		if ((this.state.created[0]?.at ?? cutoff) >= cutoff) return;
		this.state.created = this.state.created.filter((entry) => entry.at >= cutoff);
		this.indexCreated();
	}

	private indexCreated(): void {
		this.createdIndex = new Map(
			this.state.created.map((entry) => [createdKey(entry.team, entry.request), entry]),
		);
	}

	/** Writes are queued so they land in order; each one writes the whole (small) state. */
	private save(): Promise<void> {
		// A failed write does not block later ones; each writes the whole state anyway.
		this.writing = this.writing.catch(() => undefined).then(() => this.write());
		return this.writing;
	}

	private async write(): Promise<void> {
		await mkdir(dirname(this.path), { recursive: true });
		await writeFileAtomically(this.path, JSON.stringify(this.state));
	}
}
