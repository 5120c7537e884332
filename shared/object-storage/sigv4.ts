import { createHash, createHmac } from 'node:crypto';

/** The longest a presigned URL may live, as S3 allows: 7 days. */
export const PRESIGN_MAX_SECONDS = 7 * 24 * 3600;

/** The payload hash S3 accepts when the body is streamed without being hashed first. */
export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';

export interface SigningKeys {
	accessKeyId: string;
	secretAccessKey: string;
	region: string;
}

export interface SignableRequest {
	method: string;
	url: URL;
	/** Headers to sign besides host, x-amz-date and x-amz-content-sha256 (names any case). */
	headers?: Readonly<Record<string, string>>;
	/** Hex SHA-256 of the body, or UNSIGNED_PAYLOAD. */
	payloadHash: string;
}

const SERVICE = 's3';
const ALGORITHM = 'AWS4-HMAC-SHA256';

export function sha256Hex(data: string | Buffer): string {
	return createHash('sha256').update(data).digest('hex');
}

function hmac(key: string | Buffer, data: string): Buffer {
	return createHmac('sha256', key).update(data, 'utf8').digest();
}

/** RFC 3986 encoding, as SigV4 wants it: only A-Z a-z 0-9 - _ . ~ stay as they are. */
function encode(text: string): string {
	return encodeURIComponent(text).replace(
		/[!'()*]/g,
		(char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
	);
}

/** S3 signs the path with each segment encoded once (the URL's own escapes undone first). */
function canonicalPath(url: URL): string {
	return url.pathname
		.split('/')
		.map((segment) => encode(decodeURIComponent(segment)))
		.join('/');
}

function canonicalQuery(url: URL): string {
	return [...url.searchParams]
		.map(([key, value]) => [encode(key), encode(value)] as const)
		.sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : 1) : a < b ? -1 : 1))
		.map(([key, value]) => `${key}=${value}`)
		.join('&');
}

/** `20130524T000000Z` */
export function amzDate(date: Date): string {
	return date
		.toISOString()
		.replace(/[-:]/g, '')
		.replace(/\.\d{3}/, '');
}

function signingKey(keys: SigningKeys, day: string): Buffer {
	const dated = hmac(`AWS4${keys.secretAccessKey}`, day);
	return hmac(hmac(hmac(dated, keys.region), SERVICE), 'aws4_request');
}

interface Canonical {
	request: string;
	signedHeaders: string;
}

function canonicalRequest(
	method: string,
	url: URL,
	headers: Readonly<Record<string, string>>,
	payloadHash: string,
): Canonical {
	const entries = Object.entries(headers)
		.map(([name, value]) => [name.toLowerCase(), value.trim().replace(/\s+/g, ' ')] as const)
		.sort(([a], [b]) => (a < b ? -1 : 1));
	const signedHeaders = entries.map(([name]) => name).join(';');
	const request = [
		method,
		canonicalPath(url),
		canonicalQuery(url),
		entries.map(([name, value]) => `${name}:${value}\n`).join(''),
		signedHeaders,
		payloadHash,
	].join('\n');
	return { request, signedHeaders };
}

function signature(keys: SigningKeys, time: string, canonical: string): string {
	const day = time.slice(0, 8);
	const scope = `${day}/${keys.region}/${SERVICE}/aws4_request`;
	const stringToSign = [ALGORITHM, time, scope, sha256Hex(canonical)].join('\n');
	return createHmac('sha256', signingKey(keys, day)).update(stringToSign, 'utf8').digest('hex');
}

/**
 * The headers a request needs to be accepted by S3 (AWS Signature Version 4, Authorization
 * header): the given ones plus host, x-amz-date, x-amz-content-sha256 and authorization.
 */
export function signedHeaders(
	request: SignableRequest,
	keys: SigningKeys,
	now: Date,
): Record<string, string> {
	const time = amzDate(now);
	const headers: Record<string, string> = {
		...request.headers,
		host: request.url.host,
		'x-amz-date': time,
		'x-amz-content-sha256': request.payloadHash,
	};
	const canonical = canonicalRequest(request.method, request.url, headers, request.payloadHash);
	const scope = `${time.slice(0, 8)}/${keys.region}/${SERVICE}/aws4_request`;
	return {
		...headers,
		authorization: `${ALGORITHM} Credential=${keys.accessKeyId}/${scope}, SignedHeaders=${canonical.signedHeaders}, Signature=${signature(keys, time, canonical.request)}`,
	};
}

/**
 * A URL anyone can GET without a header until it expires (query-string SigV4): what a service that
 * downloads files "from a signed URL" is given. `expiresInSeconds` is 1 to 604800 (7 days).
 */
export function presignedGetUrl(
	url: URL,
	keys: SigningKeys,
	now: Date,
	expiresInSeconds: number,
): string {
	if (
		!Number.isInteger(expiresInSeconds) ||
		expiresInSeconds < 1 ||
		expiresInSeconds > PRESIGN_MAX_SECONDS
	)
		throw new RangeError(
			`The link's lifetime must be a whole number of seconds from 1 to ${PRESIGN_MAX_SECONDS} (7 days, the most S3 allows); got ${expiresInSeconds}.`,
		);
	const time = amzDate(now);
	const signed = new URL(url);
	const query = signed.searchParams;
	query.set('X-Amz-Algorithm', ALGORITHM);
	query.set(
		'X-Amz-Credential',
		`${keys.accessKeyId}/${time.slice(0, 8)}/${keys.region}/${SERVICE}/aws4_request`,
	);
	query.set('X-Amz-Date', time);
	query.set('X-Amz-Expires', String(expiresInSeconds));
	query.set('X-Amz-SignedHeaders', 'host');
	const canonical = canonicalRequest('GET', signed, { host: signed.host }, UNSIGNED_PAYLOAD);
	query.set('X-Amz-Signature', signature(keys, time, canonical.request));
	return signed.href;
}
