import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod/v4';
import { REQUEST_ID_METADATA_KEY } from '../../shared/client';
import type { Job } from '../../shared/schemas';
import { LIMITS } from '../../shared/schemas';
import type { ThreadRef } from '../model';

/**
 * Which Slack thread a job belongs to travels with the job, in its metadata. A restarted app reads
 * it back from `jobs.list`, so nothing about a job lives only in this process. Anyone with an API
 * key of the organization can write such metadata, so the app seals what it writes: an HMAC, under
 * a key only the app holds, over the job's request id and every field that says where to post.
 */

export const APP_MARKER = 'gpu-cloud-slack';
export const JOB_KINDS = ['job', 'transcribe'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

export const slackJobMetadataSchema = z.looseObject({
	slack_app: z.literal(APP_MARKER),
	slack_team: z.string().min(1),
	slack_channel: z.string().min(1),
	slack_thread_ts: z.string().regex(/^\d+\.\d+$/),
	slack_user: z.string().min(1),
	slack_kind: z.enum(JOB_KINDS),
	[REQUEST_ID_METADATA_KEY]: z.string().min(1),
	slack_seal: z.string().regex(/^v1,[A-Za-z0-9_-]{43}$/),
});
export type SlackJobMetadata = z.infer<typeof slackJobMetadataSchema>;

/** Our keys (the client's request id among them): what is left is the user's. */
const RESERVED_PROPERTIES = Object.keys(slackJobMetadataSchema.shape).length;
export const USER_METADATA_MAX_PROPERTIES = LIMITS.metadataMaxProperties - RESERVED_PROPERTIES;

export interface JobOrigin {
	team: string;
	thread: ThreadRef;
	user: string;
	kind: JobKind;
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
			thread: { channel: m.slack_channel, threadTs: m.slack_thread_ts },
			user: m.slack_user,
			kind: m.slack_kind,
		};
	}

	private unsealed(job: Job): undefined {
		if (!this.refused.has(job.id)) {
			this.refused.add(job.id);
			if (this.refused.size > REFUSALS_REMEMBERED)
				this.refused.delete(this.refused.values().next().value ?? '');
			this.warn(
				`Ignored job ${job.id} on ${job.inference_endpoint_name}: its Slack metadata is not sealed by this app (created elsewhere, or changed after creation); nothing is posted for it.`,
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
		]);
		return createHmac('sha256', this.key).update(covered).digest();
	}
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
