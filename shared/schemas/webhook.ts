import { z } from 'zod/v4';
import { dateTimeSchema } from './common';
import { jobSchema } from './job';

/** Note the single "l" in `canceled`: that is what the service sends. */
export const JOB_WEBHOOK_EVENT_TYPES = [
	'inference_endpoint.job.succeeded',
	'inference_endpoint.job.failed',
	'inference_endpoint.job.canceled',
	'queue.job.succeeded',
	'queue.job.failed',
	'queue.job.canceled',
] as const;
export type JobWebhookEventType = (typeof JOB_WEBHOOK_EVENT_TYPES)[number];

export const jobWebhookPayloadSchema = z.looseObject({
	type: z.string().min(1),
	timestamp: dateTimeSchema,
	data: jobSchema,
});
export type JobWebhookPayload = z.infer<typeof jobWebhookPayloadSchema>;

/** The outcome a job webhook reports, whichever family (`inference_endpoint` or `queue`) it comes from. */
export function webhookOutcome(type: string): 'succeeded' | 'failed' | 'cancelled' | undefined {
	if (type.endsWith('.succeeded')) return 'succeeded';
	if (type.endsWith('.failed')) return 'failed';
	if (type.endsWith('.canceled') || type.endsWith('.cancelled')) return 'cancelled';
	return undefined;
}
