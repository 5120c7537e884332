import { z } from 'zod/v4';
import type { Job } from '../../shared/schemas';
import { LIMITS } from '../../shared/schemas';
import type { ThreadRef } from '../model';

/**
 * Which Slack thread a job belongs to travels with the job, in its metadata. A restarted app reads
 * it back from `jobs.list`, so nothing about a job lives only in this process.
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
});
export type SlackJobMetadata = z.infer<typeof slackJobMetadataSchema>;

/** Our keys, plus one the client adds to find a create whose reply was lost. */
const RESERVED_PROPERTIES = Object.keys(slackJobMetadataSchema.shape).length + 1;
export const USER_METADATA_MAX_PROPERTIES = LIMITS.metadataMaxProperties - RESERVED_PROPERTIES;

export interface JobOrigin {
  team: string;
  thread: ThreadRef;
  user: string;
  kind: JobKind;
}

export function jobMetadata(origin: JobOrigin): SlackJobMetadata {
  return {
    slack_app: APP_MARKER,
    slack_team: origin.team,
    slack_channel: origin.thread.channel,
    slack_thread_ts: origin.thread.threadTs,
    slack_user: origin.user,
    slack_kind: origin.kind,
  };
}

/** The job's Slack origin when this app (for this workspace) started it, else undefined. */
export function readJobOrigin(job: Job, team: string): JobOrigin | undefined {
  const parsed = slackJobMetadataSchema.safeParse(job.metadata);
  if (!parsed.success || parsed.data.slack_team !== team) return undefined;
  const m = parsed.data;
  return { team: m.slack_team, thread: { channel: m.slack_channel, threadTs: m.slack_thread_ts }, user: m.slack_user, kind: m.slack_kind };
}

/** Checks metadata a user typed into the job form: a JSON object that leaves room for ours. */
export function userMetadataProblem(value: unknown): string | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return 'Metadata must be a JSON object, like {"project": "demo"}.';
  const keys = Object.keys(value);
  if (keys.length > USER_METADATA_MAX_PROPERTIES) {
    return `Metadata can have at most ${USER_METADATA_MAX_PROPERTIES} properties (the app keeps the rest of the service's ${LIMITS.metadataMaxProperties} for itself).`;
  }
  const reserved = keys.filter((key) => key.startsWith('slack_') || key === 'client_request_id');
  if (reserved.length) return `Metadata property ${reserved.map((key) => `"${key}"`).join(', ')} is reserved for the app.`;
  return undefined;
}
