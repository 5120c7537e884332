import { z } from 'zod/v4';
import { parseObjectStorageSettings } from './client';
import { storedSettingsSchema, type ObjectStorageLabels } from './settings';
import { sha256Hex, signedHeaders, UNSIGNED_PAYLOAD } from './sigv4';

/** The parts of an HTTP request description (n8n's request options have this shape) that are signed. */
const describedRequestSchema = z.object({
	url: z.string(),
	baseURL: z.string().optional(),
	method: z.string().default('GET'),
	qs: z.record(z.string(), z.unknown()).optional(),
	body: z.unknown().optional(),
});

/** The full URL a request description names: base URL joined as an HTTP library joins it, then the query. */
function requestUrl(request: z.output<typeof describedRequestSchema>): URL {
	const joined =
		request.baseURL && !/^https?:\/\//i.test(request.url)
			? `${request.baseURL.replace(/\/+$/, '')}/${request.url.replace(/^\/+/, '')}`
			: request.url;
	const url = new URL(joined);
	for (const [name, value] of Object.entries(request.qs ?? {}))
		if (value !== undefined) url.searchParams.append(name, String(value));
	return url;
}

/**
 * The AWS Signature Version 4 headers for a request described by URL parts (a credential's
 * `authenticate` step): host, x-amz-date, x-amz-content-sha256 and authorization. A request with a
 * body is signed with an unsigned payload, so a stream need not be read to be signed.
 */
export function signedStorageHeaders(
	credentials: unknown,
	request: unknown,
	now: number,
	labels?: ObjectStorageLabels,
): Record<string, string> {
	const settings = parseObjectStorageSettings(storedSettingsSchema.parse(credentials), labels);
	const described = describedRequestSchema.parse(request);
	const method = described.method.toUpperCase();
	return signedHeaders(
		{
			method,
			url: requestUrl(described),
			payloadHash: described.body === undefined ? sha256Hex('') : UNSIGNED_PAYLOAD,
		},
		settings,
		new Date(now),
	);
}
