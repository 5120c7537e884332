import type { IExecuteFunctions, IWebhookFunctions } from 'n8n-workflow';
import { z } from 'zod/v4';
import {
	ObjectStorage,
	TransportError,
	storedSettingsSchema,
	type ObjectStorageLabels,
	type StorageBody,
	type StorageRequest,
	type StorageResponse,
	type StorageTransport,
} from '../../../shared';
import { n8nClock, toN8nTransportError } from './index';

export const OBJECT_STORAGE_CREDENTIAL = 'gpuCloudObjectStorageApi';

/** The credential's field names, as errors name them. */
export const OBJECT_STORAGE_LABELS: ObjectStorageLabels = {
	endpoint: 'Endpoint',
	region: 'Region',
	bucket: 'Bucket',
	keyPrefix: 'Key Prefix',
	accessKeyId: 'Access Key ID',
	secretAccessKey: 'Secret Access Key',
	addressing: 'Addressing Style',
};

const responseSchema = z.object({
	statusCode: z.number().int(),
	headers: z.unknown(),
	body: z.unknown(),
});

/** A readable stream, which n8n's HTTP library sends as it reads it; a bare iterable it cannot send. */
function isReadableStream(body: StorageBody): boolean {
	return 'pipe' in body && typeof body.pipe === 'function';
}

function bodyText(body: unknown): string {
	if (typeof body === 'string') return body;
	if (Buffer.isBuffer(body)) return body.toString('utf8');
	return body === undefined || body === null ? '' : JSON.stringify(body);
}

function headerRecord(headers: unknown): Record<string, string> {
	const parsed = z.record(z.string(), z.unknown()).safeParse(headers);
	if (!parsed.success) return {};
	return Object.fromEntries(
		Object.entries(parsed.data).flatMap(([name, value]) =>
			value === undefined || value === null ? [] : [[name.toLowerCase(), String(value)]],
		),
	);
}

/**
 * Object storage requests through n8n's request helper (its proxy settings apply). They are signed
 * by the shared client before they get here, so the helper adds no authentication of its own.
 */
/** A node run, or the webhook call that resumes a paused one. */
export type StorageContext = IExecuteFunctions | IWebhookFunctions;

class N8nStorageTransport implements StorageTransport {
	constructor(private readonly context: StorageContext) {}

	async send(request: StorageRequest): Promise<StorageResponse> {
		const { body } = request;
		if (body !== undefined && !(body instanceof Uint8Array) && !isReadableStream(body))
			throw new TransportError('other', 'The file to upload is neither bytes nor a stream.', {
				mayHaveReachedServer: false,
			});
		let raw: unknown;
		try {
			raw = await this.context.helpers.httpRequest({
				method: request.method,
				url: request.url,
				headers: request.headers,
				body: body instanceof Uint8Array ? Buffer.from(body) : body,
				returnFullResponse: true,
				ignoreHttpStatusErrors: true,
				json: false,
				encoding: 'text',
				timeout: request.timeoutMs,
				abortSignal: request.signal,
			});
		} catch (error) {
			throw toN8nTransportError(error);
		}
		const parsed = responseSchema.safeParse(raw);
		if (!parsed.success)
			throw new TransportError('other', 'n8n returned an HTTP response of an unexpected shape.', {
				mayHaveReachedServer: true,
			});
		const response = parsed.data;
		return {
			status: response.statusCode,
			headers: headerRecord(response.headers),
			body: bodyText(response.body),
		};
	}
}

/** Whether the node was given a GPU Cloud Object Storage credential (it is optional). */
export function hasObjectStorage(context: IExecuteFunctions): boolean {
	return context.getNode().credentials?.[OBJECT_STORAGE_CREDENTIAL] !== undefined;
}

/** The bucket of the node's GPU Cloud Object Storage credential; wrong settings are named by field. */
export async function objectStorage(context: StorageContext): Promise<ObjectStorage> {
	const credentials = storedSettingsSchema.parse(
		await context.getCredentials(OBJECT_STORAGE_CREDENTIAL),
	);
	return new ObjectStorage(credentials, {
		transport: new N8nStorageTransport(context),
		clock: n8nClock,
		labels: OBJECT_STORAGE_LABELS,
	});
}
