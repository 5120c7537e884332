import { z } from 'zod/v4';
import {
	LIMITS,
	dateTimeSchema,
	jsonValueSchema,
	pageSchema,
	resourceNameSchema,
	uuidSchema,
	webhookUrlSchema,
} from './common';

export const JOB_STATUSES = ['pending', 'running', 'succeeded', 'cancelled', 'failed'] as const;
export const TERMINAL_JOB_STATUSES = ['succeeded', 'cancelled', 'failed'] as const;
export const jobStatusSchema = z.enum(JOB_STATUSES);
export type JobStatus = z.infer<typeof jobStatusSchema>;
export type TerminalJobStatus = (typeof TERMINAL_JOB_STATUSES)[number];

export function isTerminalStatus(status: JobStatus): status is TerminalJobStatus {
	return (TERMINAL_JOB_STATUSES as readonly string[]).includes(status);
}

export const JOB_EVENT_ACTIONS = [
	'created',
	'started',
	'succeeded',
	'cancelled',
	'failed',
] as const;

/** Webhook payloads were seen carrying `type` where the API says `action`: accept both, expose `action`. */
export const jobEventSchema = z.preprocess(
	(raw) => {
		if (raw && typeof raw === 'object' && !('action' in raw) && 'type' in raw) {
			const { type, ...rest } = raw as Record<string, unknown>;
			return { ...rest, action: type };
		}
		return raw;
	},
	z.looseObject({ action: z.string().min(1), time: dateTimeSchema }),
);
export type JobEvent = z.infer<typeof jobEventSchema>;

export const metadataSchema = z
	.record(z.string(), z.unknown(), { error: 'must be a JSON object' })
	.refine((value) => Object.keys(value).length <= LIMITS.metadataMaxProperties, {
		error: `must have at most ${LIMITS.metadataMaxProperties} properties`,
	});
export type JobMetadata = z.infer<typeof metadataSchema>;

export const jobSchema = z.looseObject({
	id: uuidSchema,
	inference_endpoint_name: resourceNameSchema,
	organization_name: resourceNameSchema,
	input: jsonValueSchema,
	status: jobStatusSchema,
	events: z.array(jobEventSchema).max(LIMITS.jobEventsMax),
	create_time: dateTimeSchema,
	update_time: dateTimeSchema,
	metadata: metadataSchema.optional(),
	webhook: webhookUrlSchema.optional(),
	webhook_url: webhookUrlSchema.optional(),
	output: z.unknown().optional(),
});
export type Job = z.infer<typeof jobSchema>;

export const jobPageSchema = pageSchema(jobSchema);
export type JobPage = z.infer<typeof jobPageSchema>;

export const createJobRequestSchema = z.strictObject({
	input: jsonValueSchema,
	metadata: metadataSchema.optional(),
	webhook: webhookUrlSchema.optional(),
	webhook_url: webhookUrlSchema.optional(),
});
export type CreateJobRequest = z.infer<typeof createJobRequestSchema>;
