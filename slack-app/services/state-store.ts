import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod/v4';
import { imageRequestSchema } from '../messages/actions';
import { isMissingFile, writeFileAtomically } from './files';

/**
 * A small local file of what the app should not forget across a restart. It is a cache and a hint,
 * never the only record: jobs carry their thread in the service's metadata and posted results are
 * visible in the Slack thread. Each write is atomic (writeFileAtomically): a SIGKILL at any moment
 * leaves either the old or the new state, never a torn file.
 */

const POSTED_MEMORY = 5000;

export const inflightSchema = z.strictObject({
	ref: z.string().min(1),
	/**
	 * The workspace whose container redoes or flags it after a restart. Absent in state files of
	 * versions before it was recorded: see `StateStore.ownUnmarked`.
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

const stateSchema = z.strictObject({
	version: z.literal(1),
	endpoints: z.array(z.string()),
	posted: z.array(z.string()),
	inflight: z.array(inflightSchema),
});
type State = z.infer<typeof stateSchema>;

const emptyState = (): State => ({ version: 1, endpoints: [], posted: [], inflight: [] });

export class StateStore implements InflightRecords {
	private state: State = emptyState();
	private posted = new Set<string>();
	/** Requests recorded or taken over by this process: the others were left by an earlier run. */
	private readonly underway = new Set<string>();
	private writing: Promise<void> = Promise.resolve();

	private constructor(private readonly path: string) {}

	/** Reads the file; a missing or unreadable one starts empty (the service and Slack still know). */
	static async open(path: string, warn: (message: string) => void): Promise<StateStore> {
		const store = new StateStore(path);
		try {
			const parsed = stateSchema.safeParse(JSON.parse(await readFile(path, 'utf8')));
			if (parsed.success) store.state = parsed.data;
			else warn(`Ignoring ${path}: it is not a state file of this app.`);
		} catch (error) {
			if (!isMissingFile(error)) warn(`Ignoring ${path}: it cannot be read.`);
		}
		store.posted = new Set(store.state.posted);
		return store;
	}

	get endpoints(): readonly string[] {
		return this.state.endpoints;
	}

	get inflight(): readonly InflightRequest[] {
		return this.state.inflight;
	}

	isPosted(ref: string): boolean {
		return this.posted.has(ref);
	}

	addEndpoint(name: string): Promise<void> {
		if (this.state.endpoints.includes(name)) return this.writing;
		this.state.endpoints.push(name);
		return this.save();
	}

	markPosted(ref: string): Promise<void> {
		if (this.posted.has(ref)) return this.writing;
		this.posted.add(ref);
		this.state.posted.push(ref);
		if (this.state.posted.length > POSTED_MEMORY) {
			for (const old of this.state.posted.splice(0, this.state.posted.length - POSTED_MEMORY))
				this.posted.delete(old);
		}
		return this.save();
	}

	/**
	 * The requests of `team` an earlier run left unfinished and nothing in this process runs yet; from
	 * now on they count as under way here, so a workspace's services built again do not take them twice.
	 */
	takeOverInflight(team: string): InflightRequest[] {
		const left = this.state.inflight.filter(
			(entry) => entry.team === team && !this.underway.has(entry.ref),
		);
		for (const entry of left) this.underway.add(entry.ref);
		return left;
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
