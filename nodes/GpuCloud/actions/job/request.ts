import type { IExecuteFunctions } from 'n8n-workflow';
import {
	metadataSchema,
	webhookUrlSchema,
	type CreateJobRequest,
	type JobMetadata,
} from '../../../../shared';
import { linkLifetimeSchema, type BinaryUploads } from '../../helpers/binary-upload';
import { readMediaFiles, type MediaFiles } from '../../helpers/media-files';
import { check, parseJsonValue, readCollection, readJson } from '../../helpers/parameters';

/** The "Metadata" option, if the user added one. */
export function readMetadata(options: Record<string, unknown>): JobMetadata | undefined {
	const { metadata } = options;
	if (metadata === undefined || (typeof metadata === 'string' && metadata.trim() === ''))
		return undefined;
	return check(metadataSchema, parseJsonValue(metadata, 'Metadata'), 'Metadata');
}

/** The values of the endpoint's fields as the item fills them (expressions resolved, types checked by n8n). */
function readInputFields(context: IExecuteFunctions, itemIndex: number): Record<string, unknown> {
	const value: unknown = context.getNodeParameter('inputFields.value', itemIndex, {});
	return typeof value === 'object' && value !== null && !Array.isArray(value) ? { ...value } : {};
}

/**
 * The body of a job from the item's input and "Options" (metadata, webhook URL). An input given as
 * fields comes back as `fields`: it becomes the body's input once the endpoint's schema is read.
 */
export function readJobRequest(
	context: IExecuteFunctions,
	itemIndex: number,
): { request: CreateJobRequest; fields?: Record<string, unknown> } {
	const byFields =
		context.getNode().typeVersion >= 2 &&
		context.getNodeParameter('inputMode', itemIndex, 'fields') === 'fields';
	const request: CreateJobRequest = {
		input: byFields ? {} : readJson(context, 'input', itemIndex, 'Input'),
	};
	const options = readCollection(context, 'options', itemIndex);
	const metadata = readMetadata(options);
	if (metadata !== undefined) request.metadata = metadata;
	if (typeof options.webhookUrl === 'string' && options.webhookUrl.trim() !== '') {
		request.webhook_url = check(webhookUrlSchema, options.webhookUrl.trim(), 'Webhook URL');
	}
	return byFields ? { request, fields: readInputFields(context, itemIndex) } : { request };
}

/** The "Link Lifetime (Minutes)" option in seconds, or `fallbackSeconds` when the user did not add it. */
export function readLinkLifetimeSeconds(
	context: IExecuteFunctions,
	itemIndex: number,
	fallbackSeconds: number,
): number {
	const minutes = readCollection(context, 'options', itemIndex).linkLifetimeMinutes;
	return minutes === undefined
		? fallbackSeconds
		: check(linkLifetimeSchema, minutes, 'Link Lifetime (Minutes)') * 60;
}

/**
 * `readJobRequest` with the item's "Files for Media Fields" (version 2, input as fields), checked
 * here and uploaded when the job is about to be created.
 */
export async function readJobWithFiles(
	context: IExecuteFunctions,
	itemIndex: number,
	uploads: BinaryUploads,
	link: { lifetimeSeconds: number; keep: boolean },
): Promise<{
	request: CreateJobRequest;
	fields?: Record<string, unknown>;
	mediaFiles?: MediaFiles;
}> {
	const job = readJobRequest(context, itemIndex);
	if (!job.fields) return job;
	const mediaFiles = await readMediaFiles(context, itemIndex, job.fields, uploads, link);
	return mediaFiles ? { ...job, mediaFiles } : job;
}
