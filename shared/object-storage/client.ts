import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock';
import {
	DEFAULT_LABELS,
	objectStorageSettingsSchema,
	type ObjectStorageField,
	type ObjectStorageLabels,
	type ObjectStorageSettings,
} from './settings';
import { presignedGetUrl, sha256Hex, signedHeaders, UNSIGNED_PAYLOAD } from './sigv4';

export type StorageMethod = 'PUT' | 'DELETE';

/** A Node stream (n8n's binary data store gives one) is an async iterable of chunks too. */
export type StorageBody = Uint8Array | AsyncIterable<Uint8Array>;

export interface StorageRequest {
	method: StorageMethod;
	url: string;
	headers: Record<string, string>;
	/** Bytes in hand, or a stream read as it is sent: a large file is never held whole. */
	body?: StorageBody;
	/** Longest wait for the answer or for the next piece of it. */
	timeoutMs: number;
	signal?: AbortSignal;
}

export interface StorageResponse {
	status: number;
	/** Header names in lower case. */
	headers: Record<string, string>;
	body: string;
}

/** The seam to the network: n8n plugs in its request helper, Node code the undici one in runtime/. */
export interface StorageTransport {
	send(request: StorageRequest): Promise<StorageResponse>;
}

/** S3's largest single PUT. */
export const SINGLE_PUT_MAX_BYTES = 5 * 1024 ** 3;

const TIMEOUT_MS = 5 * 60_000;

/** A refusal of the storage service, named by the setting most likely wrong when there is one. */
export class ObjectStorageError extends Error {
	constructor(
		message: string,
		readonly field: ObjectStorageField | undefined,
		readonly status: number | undefined,
		readonly code: string | undefined,
	) {
		super(message);
		this.name = 'ObjectStorageError';
	}
}

function isField(value: unknown): value is ObjectStorageField {
	return typeof value === 'string' && Object.hasOwn(DEFAULT_LABELS, value);
}

function xmlValue(xml: string, tag: string): string | undefined {
	return new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(xml)?.[1];
}

/** The settings, or an ObjectStorageError naming the first wrong field as the user knows it. */
export function parseObjectStorageSettings(
	settings: unknown,
	labels: ObjectStorageLabels = DEFAULT_LABELS,
): ObjectStorageSettings {
	const parsed = objectStorageSettingsSchema.safeParse(settings);
	if (parsed.success) return parsed.data;
	const [issue] = parsed.error.issues;
	const field = issue?.path[0];
	const known = isField(field) ? field : undefined;
	throw new ObjectStorageError(
		`Object storage ${known ? labels[known] : 'settings'} ${issue?.message ?? 'are not valid'}.`,
		known,
		undefined,
		undefined,
	);
}

export interface ObjectStorageOptions {
	transport: StorageTransport;
	clock: Pick<Clock, 'now'>;
	/** How the settings are named where the user set them (n8n's credential fields, Slack's variables). */
	labels?: ObjectStorageLabels;
}

/**
 * An S3-compatible bucket (AWS S3, Cloudflare R2, MinIO, Backblaze B2, ...) signed with AWS
 * Signature Version 4: puts a file as a stream, hands out a presigned GET URL, deletes it.
 */
export class ObjectStorage {
	readonly settings: ObjectStorageSettings;
	private readonly labels: ObjectStorageLabels;

	/** Refuses settings that cannot work, naming the field and the rule, before any request. */
	constructor(
		settings: unknown,
		private readonly options: ObjectStorageOptions,
	) {
		this.labels = options.labels ?? DEFAULT_LABELS;
		this.settings = parseObjectStorageSettings(settings, this.labels);
	}

	/** The key of a file named `name` under the settings' prefix. */
	keyFor(name: string): string {
		return `${this.settings.keyPrefix}${name}`;
	}

	objectUrl(key: string): URL {
		const endpoint = new URL(this.settings.endpoint);
		const base = endpoint.pathname.replace(/\/+$/, '');
		const path = key
			.split('/')
			.map((segment) => encodeURIComponent(segment))
			.join('/');
		if (this.settings.addressing === 'virtual-hosted') {
			endpoint.hostname = `${this.settings.bucket}.${endpoint.hostname}`;
			endpoint.pathname = `${base}/${path}`;
		} else endpoint.pathname = `${base}/${this.settings.bucket}/${path}`;
		return endpoint;
	}

	private get keys() {
		const { accessKeyId, secretAccessKey, region } = this.settings;
		return { accessKeyId, secretAccessKey, region };
	}

	private now(): Date {
		return new Date(this.options.clock.now());
	}

	/** Uploads `size` bytes read from `body` with one PUT (payload unsigned, as S3 allows over a signed request). */
	async put(
		key: string,
		body: StorageBody,
		{ size, contentType }: { size: number; contentType: string },
		signal?: AbortSignal,
	): Promise<void> {
		if (size > SINGLE_PUT_MAX_BYTES)
			throw new ObjectStorageError(
				`The file is ${size} bytes; one upload holds at most 5 GiB.`,
				undefined,
				undefined,
				undefined,
			);
		const url = this.objectUrl(key);
		const headers = signedHeaders(
			{
				method: 'PUT',
				url,
				headers: { 'content-type': contentType, 'content-length': String(size) },
				payloadHash: UNSIGNED_PAYLOAD,
			},
			this.keys,
			this.now(),
		);
		await this.send({ method: 'PUT', url: url.href, headers, body, timeoutMs: TIMEOUT_MS, signal });
	}

	/** Deletes the object; one already gone is no error (S3 answers 204 either way). */
	async delete(key: string, signal?: AbortSignal): Promise<void> {
		const url = this.objectUrl(key);
		const headers = signedHeaders(
			{ method: 'DELETE', url, payloadHash: sha256Hex('') },
			this.keys,
			this.now(),
		);
		await this.send({ method: 'DELETE', url: url.href, headers, timeoutMs: 60_000, signal });
	}

	/** A URL anyone may GET, without a header, for `expiresInSeconds` (at most 7 days). */
	presignedGetUrl(key: string, expiresInSeconds: number): string {
		return presignedGetUrl(this.objectUrl(key), this.keys, this.now(), expiresInSeconds);
	}

	/**
	 * Proves the settings by doing what a job needs: puts a small object under the prefix and
	 * deletes it. A wrong endpoint, bucket, key, secret or region, or missing rights, fail here.
	 */
	async check(signal?: AbortSignal): Promise<void> {
		const key = this.keyFor(`.gpu-cloud-check-${randomBytes(8).toString('hex')}`);
		const probe = Buffer.from('GPU Cloud credential check\n');
		await this.put(key, probe, { size: probe.length, contentType: 'text/plain' }, signal);
		await this.delete(key, signal);
	}

	private async send(request: StorageRequest): Promise<void> {
		let response: StorageResponse;
		try {
			response = await this.options.transport.send(request);
		} catch (error) {
			if (request.signal?.aborted) throw error;
			const host = new URL(this.settings.endpoint).host;
			throw new ObjectStorageError(
				`Could not reach the object storage at ${host}: check the ${this.labels.endpoint} (${error instanceof Error ? error.message : String(error)}).`,
				'endpoint',
				undefined,
				undefined,
			);
		}
		if (response.status >= 200 && response.status < 300) return;
		throw this.refusal(response);
	}

	/** Turns S3's XML error into a sentence naming the setting to fix. */
	private refusal(response: StorageResponse): ObjectStorageError {
		const code = xmlValue(response.body, 'Code');
		const { bucket, region } = this.settings;
		const label = this.labels;
		const bucketRegion =
			response.headers['x-amz-bucket-region'] ?? xmlValue(response.body, 'Region');
		const known: Record<string, [string, ObjectStorageField]> = {
			NoSuchBucket: [
				`The bucket "${bucket}" does not exist there: check the ${label.bucket}.`,
				'bucket',
			],
			InvalidAccessKeyId: [
				`The storage does not know this access key: check the ${label.accessKeyId}.`,
				'accessKeyId',
			],
			SignatureDoesNotMatch: [
				`The storage refused the request’s signature: check the ${label.secretAccessKey}.`,
				'secretAccessKey',
			],
			AccessDenied: [
				`The access key may not write to the bucket "${bucket}" here: give it the rights to put and delete objects under the ${label.keyPrefix}, or check the ${label.accessKeyId}.`,
				'accessKeyId',
			],
		};
		if (
			(code === 'AuthorizationHeaderMalformed' ||
				code === 'PermanentRedirect' ||
				response.status === 301) &&
			bucketRegion
		)
			return new ObjectStorageError(
				`The bucket "${bucket}" is in the region ${bucketRegion}, not ${region}: set the ${label.region} to ${bucketRegion}.`,
				'region',
				response.status,
				code,
			);
		const match = code === undefined ? undefined : known[code];
		if (match) return new ObjectStorageError(match[0], match[1], response.status, code);
		const message = xmlValue(response.body, 'Message');
		return new ObjectStorageError(
			`The object storage answered ${response.status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}.`,
			undefined,
			response.status,
			code,
		);
	}
}
