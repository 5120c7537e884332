import type { GenericValue, IDataObject, IExecuteFunctions, IWebhookFunctions } from 'n8n-workflow';
import { jobAnswer, jobFailureReason, transcriptionOutputSchema, type Job } from '../../../shared';
import { isToolRun } from './tool';

/** JSON that came from the service (already parsed from text) as n8n item data. */
export function toGeneric(value: unknown): GenericValue {
	if (value === undefined || value === null || typeof value === 'object') return value;
	if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
		return value;
	return String(value);
}

export function toDataObject(record: object): IDataObject {
	return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, toGeneric(value)]));
}

/** A job as the service returned it. */
export function jobOutput(job: Job): IDataObject {
	return toDataObject(job);
}

/**
 * A transcription job as one flat item: the text and what was asked for next to it, instead of
 * the raw job whose result sits in `output` under the service's field names.
 */
export function transcriptionOutput(job: Job): IDataObject {
	const parsed = transcriptionOutputSchema.safeParse(job.output ?? {});
	const output = parsed.success ? parsed.data : {};
	const result: IDataObject = { jobId: job.id, status: job.status };
	const put = (key: string, value: unknown) => {
		if (value !== undefined) result[key] = toGeneric(value);
	};
	put('text', output.text);
	put('summary', output.summary);
	put('translations', output.llm_translation);
	put('segments', output.sentence_level_timestamps);
	put('words', output.word_segments);
	put('srt', output.srt_content);
	put('durationSeconds', output.duration_in_seconds);
	put('durationHours', output.duration);
	put('processingTimeSeconds', output.processing_time);
	put('resultFileUrl', output.url);
	put('error', output.error ?? jobFailureReason(job));
	if (!parsed.success) put('output', job.output);
	put('createTime', job.create_time);
	put('updateTime', job.update_time);
	return result;
}

/**
 * How an operation's jobs are output: as the service returned them, or, run as a tool, as the
 * model's answer (shared/tool-answers.ts: id, status, timings, the output cut at its budget).
 */
export function jobFormat(
	context: IExecuteFunctions | IWebhookFunctions,
	format: (job: Job) => IDataObject = jobOutput,
): (job: Job) => IDataObject {
	return isToolRun(context) ? (job) => toDataObject(jobAnswer(job)) : format;
}
