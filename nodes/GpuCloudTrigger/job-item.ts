import type { IDataObject } from 'n8n-workflow';
import { isTerminalStatus, type Job } from '../../shared';
import { toDataObject, toGeneric } from '../GpuCloud/helpers/output';

/** The job endings a trigger can start the workflow on. */
export const EVENTS = [
	{ name: 'Job Succeeded', value: 'succeeded' },
	{ name: 'Job Failed', value: 'failed' },
	{ name: 'Job Cancelled', value: 'cancelled' },
];

/** The webhook event type the service sends for each ending (note its single "l" in `canceled`). */
const EVENT_TYPES: Record<string, string> = {
	succeeded: 'inference_endpoint.job.succeeded',
	failed: 'inference_endpoint.job.failed',
	cancelled: 'inference_endpoint.job.canceled',
};

function timeOf(job: Job, action: string): string | undefined {
	return job.events.find((event) => event.action === action)?.time;
}

/** When the job ended: its ending event, else (events trimmed) its last update. */
export function endTimeOf(job: Job): string | undefined {
	return timeOf(job, job.status) ?? (isTerminalStatus(job.status) ? job.update_time : undefined);
}

/**
 * The job as one flat item: what ended, how, its output and when each step happened. Both triggers
 * emit this shape; the webhook trigger adds when and under which id the service reported it.
 */
export function jobItem(
	job: Job,
	report: { event?: string; reportedAt?: string; webhookId?: string } = {},
): IDataObject {
	const started = timeOf(job, 'started');
	const ended = endTimeOf(job);
	const runSeconds =
		started && ended ? (Date.parse(ended) - Date.parse(started)) / 1000 : undefined;
	const item: IDataObject = {
		event: report.event ?? EVENT_TYPES[job.status],
		id: job.id,
		status: job.status,
		endpoint: job.inference_endpoint_name,
		organization: job.organization_name,
		output: toGeneric(job.output),
		metadata: job.metadata ? toDataObject(job.metadata) : {},
		createTime: job.create_time,
		startTime: started,
		endTime: ended,
		runSeconds: runSeconds !== undefined && Number.isFinite(runSeconds) ? runSeconds : undefined,
		reportedAt: report.reportedAt,
		webhookId: report.webhookId,
	};
	return Object.fromEntries(Object.entries(item).filter(([, value]) => value !== undefined));
}
