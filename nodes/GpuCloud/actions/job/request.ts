import type { IExecuteFunctions } from 'n8n-workflow';
import {
	metadataSchema,
	webhookUrlSchema,
	type CreateJobRequest,
	type JobMetadata,
} from '../../../../shared';
import { check, parseJsonValue, readCollection, readJson } from '../../helpers/parameters';

/** The "Metadata" option, if the user added one. */
export function readMetadata(options: Record<string, unknown>): JobMetadata | undefined {
	const { metadata } = options;
	if (metadata === undefined || (typeof metadata === 'string' && metadata.trim() === ''))
		return undefined;
	return check(metadataSchema, parseJsonValue(metadata, 'Metadata'), 'Metadata');
}

/** The body of a job from the item's "Input" and "Options" (metadata, webhook URL). */
export function readJobRequest(context: IExecuteFunctions, itemIndex: number): CreateJobRequest {
	const request: CreateJobRequest = { input: readJson(context, 'input', itemIndex, 'Input') };
	const options = readCollection(context, 'options', itemIndex);
	const metadata = readMetadata(options);
	if (metadata !== undefined) request.metadata = metadata;
	if (typeof options.webhookUrl === 'string' && options.webhookUrl.trim() !== '') {
		request.webhook_url = check(webhookUrlSchema, options.webhookUrl.trim(), 'Webhook URL');
	}
	return request;
}
