import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod/v4';
import { REQUEST_ID_METADATA_KEY } from '../../shared/client';
import type { Job } from '../../shared/schemas';
import { LIMITS } from '../../shared/schemas';
import type { ThreadRef } from '../model';

/**
 * Which Slack thread a job belongs to travels with the job, in its metadata. A restarted app reads
 * it back from `jobs.list`. Anyone with an API key of the organization can write such metadata, so
 * the app seals what it writes: an HMAC, under a key only the app holds, over the job's request id
 * and every field that says where to post. Anyone with the key can also read a job and copy its
 * metadata, seal and all, onto a new job; so the app also records, per workspace, which job each of
 * its requests created (JobOrigins): a job is the app's only when it is sealed and recorded.
 */

export const APP_MARKER = 'gpu-cloud-slack';
export const JOB_KINDS = ['job', 'transcribe'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

const originSchema = z.looseObject({
	slack_app: z.literal(APP_MARKER),
	slack_team: z.string().min(1),
	slack_channel: z.string().min(1),
	slack_thread_ts: z.string().regex(/^\d+\.\d+$/),
	slack_user: z.string().min(1),
	slack_kind: z.enum(JOB_KINDS),
	[REQUEST_ID_METADATA_KEY]: z.string().min(1),
	slack_seal: z.string().regex(/^v1,[A-Za-z0-9_-]{43}$/),
});

export const slackJobMetadataSchema = originSchema.extend({
	/** The Workflow Builder step the job runs for, completed when the job ends. */
	slack_step: z
		.string()
		.regex(/^Fx[0-9A-Za-z]{1,64}$/)
		.optional(),
	/** The parent message, when it is a reply in a thread that is not the app's (a shared file's). */
	slack_parent_ts: z
		.string()
		.regex(/^\d+\.\d+$/)
		.optional(),
});
export type SlackJobMetadata = z.infer<typeof slackJobMetadataSchema>;

/**
 * Our keys (the client's request id among them): what is left is the user's. A step's job carries
 * `slack_step` or `slack_parent_ts` too, and no metadata of the user's.
 */
const RESERVED_PROPERTIES = Object.keys(originSchema.shape).length;
export const USER_METADATA_MAX_PROPERTIES = LIMITS.metadataMaxProperties - RESERVED_PROPERTIES;

export interface JobOrigin {
	team: string;
	thread: ThreadRef;
	user: string;
	kind: JobKind;
	/** The workflow step (function execution id) the job completes when it ends. */
	step?: string;
}

/** Keeps this many refused job ids, so each is logged once. */
const REFUSALS_REMEMBERED = 10_000;

/**
 * Seals and checks job metadata for one workspace. The key is derived from the app's secret
 * (`SLACK_APP_SECRET`, else the signing secret) for this one purpose, so the secret itself is never
 * used twice and nothing outside the app can compute a seal.
 */
export class JobOriginSeal {
	private readonly key: Buffer;
	private readonly refused = new Set<string>();

	constructor(
		appSecret: string,
		readonly team: string,
		private readonly warn: (message: string) => void,
	) {
		this.key = createHmac('sha256', appSecret)
			.update('gpu-cloud-slack job metadata seal v1')
			.digest();
	}

	/** The metadata of a job the app is about to create; `requestId` also makes the create idempotent. */
	metadata(origin: JobOrigin, requestId: string): SlackJobMetadata {
		const fields = {
			slack_app: APP_MARKER,
			slack_team: origin.team,
			slack_channel: origin.thread.channel,
			slack_thread_ts: origin.thread.threadTs,
			slack_user: origin.user,
			slack_kind: origin.kind,
			...(origin.step ? { slack_step: origin.step } : {}),
			...(origin.thread.parentTs ? { slack_parent_ts: origin.thread.parentTs } : {}),
			[REQUEST_ID_METADATA_KEY]: requestId,
		} as const;
		return { ...fields, slack_seal: `v1,${this.mac(fields).toString('base64url')}` };
	}

	/**
	 * The job's origin when this app (for this workspace) sealed it, else undefined. A job that claims
	 * this app and workspace without a valid seal is logged, once.
	 */
	origin(job: Job): JobOrigin | undefined {
		const parsed = slackJobMetadataSchema.safeParse(job.metadata);
		const claimsUs =
			job.metadata?.slack_app === APP_MARKER && job.metadata.slack_team === this.team;
		if (!parsed.success || parsed.data.slack_team !== this.team)
			return claimsUs ? this.unsealed(job) : undefined;
		const m = parsed.data;
		const given = Buffer.from(m.slack_seal.slice(3), 'base64url');
		const expected = this.mac(m);
		if (given.length !== expected.length || !timingSafeEqual(given, expected))
			return this.unsealed(job);
		return {
			team: m.slack_team,
			thread: {
				channel: m.slack_channel,
				threadTs: m.slack_thread_ts,
				...(m.slack_parent_ts ? { parentTs: m.slack_parent_ts } : {}),
			},
			user: m.slack_user,
			kind: m.slack_kind,
			...(m.slack_step ? { step: m.slack_step } : {}),
		};
	}

	private unsealed(job: Job): undefined {
		return this.ignore(
			job,
			'its Slack metadata is not sealed by this app (created elsewhere, or changed after creation)',
		);
	}

	/** Logs, once per job, why a job that claims this app and workspace is not taken as its own. */
	ignore(job: Job, why: string): undefined {
		if (!this.refused.has(job.id)) {
			this.refused.add(job.id);
			if (this.refused.size > REFUSALS_REMEMBERED)
				this.refused.delete(this.refused.values().next().value ?? '');
			this.warn(
				`Ignored job ${job.id} on ${job.inference_endpoint_name}: ${why}; nothing is posted for it.`,
			);
		}
		return undefined;
	}

	private mac(m: Omit<SlackJobMetadata, 'slack_seal'>): Buffer {
		// A JSON array: no field can spill into the next one.
		const covered = JSON.stringify([
			m[REQUEST_ID_METADATA_KEY],
			m.slack_team,
			m.slack_channel,
			m.slack_thread_ts,
			m.slack_user,
			m.slack_kind,
			// Only when present, so jobs sealed before steps existed keep their seal.
			...(m.slack_step ? [m.slack_step] : []),
			...(m.slack_parent_ts ? ['parent', m.slack_parent_ts] : []),
		]);
		return createHmac('sha256', this.key).update(covered).digest();
	}
}

/**
 * Which job each request of a workspace created, recorded where every replica and the next start
 * find it (the state file, or Redis with several replicas).
 */
/** A request that created (or was creating) a job and has not finished: what a restart resumes. */
export interface UnfinishedRequest {
	team: string;
	request: string;
	/** '' while not known: the app stopped before the service's reply to the create. */
	job: string;
	/** Where the job was created (absent in records of older versions). */
	endpoint?: string;
	/** When the request was recorded (epoch ms). */
	at: number;
}

export interface CreatedJobs {
	/** Before the create: `requestId` is one of the workspace's requests, creating a job on `endpoint`. */
	expectJob(team: string, requestId: string, endpoint?: string): Promise<void>;
	/** After it: the job the request created; false when the request names another job already. */
	bindJob(team: string, requestId: string, jobId: string): Promise<boolean>;
	/**
	 * The job the request created; '' while it is not known (the app stopped between the create and
	 * its record); undefined when the app has no record of the request (made elsewhere, or older than
	 * the records are kept).
	 */
	createdJob(team: string, requestId: string): Promise<string | undefined>;
	/** The request is done with (its job delivered, gone, or never created): a restart leaves it. */
	finishRequest(team: string, requestId: string): Promise<void>;
	/** The requests recorded since `since` (epoch ms) and not finished, oldest first, every workspace's. */
	unfinishedRequests(since: number): Promise<UnfinishedRequest[]>;
}

/**
 * The jobs a workspace's app created: the seal says where a job posts, the record of which job each
 * request created says the job is the one the app created, so a seal copied onto another job is
 * worthless. Every path that posts for a job (webhook, poll, resume) and every command that acts
 * on one asks here.
 */
export class JobOrigins {
	constructor(
		readonly seal: JobOriginSeal,
		private readonly records: CreatedJobs,
	) {}

	get team(): string {
		return this.seal.team;
	}

	/** The metadata of a job about to be created; its request is recorded first, so a restart between the create and `created` still finds the job. */
	async metadata(
		origin: JobOrigin,
		requestId: string,
		endpoint?: string,
	): Promise<SlackJobMetadata> {
		await this.records.expectJob(this.team, requestId, endpoint);
		return this.seal.metadata(origin, requestId);
	}

	/** Records the job a request created. */
	async created(job: Pick<Job, 'id' | 'metadata'>): Promise<void> {
		const requestId = requestIdOf(job);
		if (!requestId || !(await this.records.bindJob(this.team, requestId, job.id)))
			throw new Error(`Job ${job.id} could not be recorded as this workspace's.`);
	}

	/** The job's request is done with (delivered, gone): a restart no longer looks at it. */
	async finished(job: Pick<Job, 'metadata'>): Promise<void> {
		const requestId = requestIdOf(job);
		if (requestId) await this.records.finishRequest(this.team, requestId);
	}

	/** A request whose create the service refused: it made no job, and a restart leaves it. */
	async refused(requestId: string): Promise<void> {
		await this.records.finishRequest(this.team, requestId);
	}

	/**
	 * The job's origin when this workspace's app created it, else undefined. `claim` (resume, which
	 * looks at jobs oldest first): a request whose job was never recorded takes the first job that
	 * carries its sealed request id; a copy of it can only have been created later.
	 */
	async origin(job: Job, options: { claim?: boolean } = {}): Promise<JobOrigin | undefined> {
		const origin = this.seal.origin(job);
		const requestId = requestIdOf(job);
		if (!origin || !requestId) return undefined;
		const recorded = await this.records.createdJob(this.team, requestId);
		if (recorded === job.id) return origin;
		if (recorded === '') {
			if (options.claim && (await this.records.bindJob(this.team, requestId, job.id)))
				return origin;
			// Not decided yet: the next resume takes the oldest job of the request.
			return undefined;
		}
		return this.seal.ignore(
			job,
			recorded === undefined
				? 'this workspace has no record of creating it (its seal was copied, or it is older than the resume window)'
				: `its seal was copied from job ${recorded}, which the app created`,
		);
	}
}

/** The request id the app sealed into a job's metadata, if it carries one. */
export function requestIdOf(job: Pick<Job, 'metadata'>): string | undefined {
	const value = job.metadata?.[REQUEST_ID_METADATA_KEY];
	return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** Checks metadata a user typed into the job form: a JSON object that leaves room for ours. */
export function userMetadataProblem(value: unknown): string | undefined {
	if (!value || typeof value !== 'object' || Array.isArray(value))
		return 'Metadata must be a JSON object, like {"project": "demo"}.';
	const keys = Object.keys(value);
	if (keys.length > USER_METADATA_MAX_PROPERTIES) {
		return `Metadata can have at most ${USER_METADATA_MAX_PROPERTIES} properties (the app keeps the rest of the service's ${LIMITS.metadataMaxProperties} for itself).`;
	}
	const reserved = keys.filter(
		(key) => key.startsWith('slack_') || key === REQUEST_ID_METADATA_KEY,
	);
	if (reserved.length)
		return `Metadata property ${reserved.map((key) => `"${key}"`).join(', ')} is reserved for the app.`;
	return undefined;
}
