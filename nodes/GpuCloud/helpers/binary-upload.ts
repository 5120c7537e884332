import { randomUUID } from 'crypto';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { z } from 'zod/v4';
import { LIMITS, PRESIGN_MAX_SECONDS, type ObjectStorage, type StorageBody } from '../../../shared';
import { objectStorage, type StorageContext } from '../transport/storage';
import { fieldError } from './parameters';

/** What the service downloads instead of the item's binary file, and the object to delete after. */
export interface UploadedFile {
	url: string;
	key: string;
}

/** What n8n knows of an item's binary file before reading it. */
export interface BinaryFacts {
	size: number;
	fileName: string;
	mimeType: string;
}

interface BinaryFile extends BinaryFacts {
	body: StorageBody;
}

const GB = 1e9;

/**
 * The item's binary file `property`, checked before anything is read or sent: it must exist and be
 * smaller than GPU Cloud's limit. `fieldName` is the parameter errors name.
 */
export async function inspectBinary(
	context: IExecuteFunctions,
	itemIndex: number,
	property: string,
	fieldName: string,
): Promise<BinaryFacts & { id?: string }> {
	const binaries = context.getInputData()[itemIndex]?.binary ?? {};
	const binary = Object.hasOwn(binaries, property) ? binaries[property] : undefined;
	if (!binary) {
		const names = Object.keys(binaries);
		throw fieldError(
			fieldName,
			`is "${property}", but the input item has no binary field of that name (${names.length > 0 ? `it has: ${names.join(', ')}` : 'it has no binary data'})`,
		);
	}
	// In n8n's default mode the bytes are held in memory, as base64.
	const size = binary.id
		? (await context.helpers.getBinaryMetadata(binary.id)).fileSize
		: Buffer.byteLength(binary.data, 'base64');
	refuseTooLarge(size, fieldName);
	return {
		id: binary.id,
		size,
		fileName: binary.fileName ?? 'file',
		mimeType: binary.mimeType || 'application/octet-stream',
	};
}

/**
 * The item's binary file: streamed from n8n's binary data store (filesystem and S3 modes), or the
 * bytes n8n holds in memory (its default mode). The size is checked before anything is read.
 */
async function binaryFile(
	context: IExecuteFunctions,
	itemIndex: number,
	property: string,
	fieldName: string,
): Promise<BinaryFile> {
	const { id, ...facts } = await inspectBinary(context, itemIndex, property, fieldName);
	if (id) return { ...facts, body: await context.helpers.getBinaryStream(id) };
	const bytes = await context.helpers.getBinaryDataBuffer(itemIndex, property);
	return { ...facts, body: bytes, size: bytes.length };
}

function refuseTooLarge(size: number, fieldName: string): void {
	if (size >= LIMITS.transcriptionMaxBytes)
		throw fieldError(
			fieldName,
			`is a file of ${(size / GB).toFixed(2)} GB; GPU Cloud takes files smaller than ${LIMITS.transcriptionMaxBytes / GB} GB`,
		);
}

/** Where uploads of each kind go under the key prefix. */
export type UploadFolder = 'transcriptions' | 'images' | 'inputs';

/** A key no one can guess, ending in the file's own name (readable in the bucket, safe in a URL). */
function keyName(folder: UploadFolder, fileName: string): string {
	const safe = fileName.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+/, '') || 'file';
	return `${folder}/${randomUUID()}/${safe.slice(-100)}`;
}

/** A link lifetime the user gives, in minutes: S3 signs for at most 7 days. */
export const linkLifetimeSchema = z
	.number({ error: 'must be a whole number of minutes' })
	.int({ error: 'must be a whole number of minutes' })
	.min(1, { error: 'must be at least 1' })
	.max(PRESIGN_MAX_SECONDS / 60, { error: 'must be at most 10080 (7 days, the most S3 allows)' });

/** The link lives as long as the node waits for the job, within S3's 7 days. */
export function linkLifetimeSeconds(waitTimeoutMs: number): number {
	return Math.min(PRESIGN_MAX_SECONDS, Math.max(60, Math.ceil(waitTimeoutMs / 1000)));
}

/**
 * Puts files in the GPU Cloud Object Storage credential's bucket and hands back presigned URLs that
 * anyone holding them can download from, without any header, for the lifetime asked: what GPU Cloud
 * reads a recording from, and what a person opens a generated image with.
 */
export class BinaryUploads {
	private storage: ObjectStorage | undefined;
	readonly uploaded: string[] = [];

	constructor(private readonly context: IExecuteFunctions) {}

	private async bucket(): Promise<ObjectStorage> {
		this.storage ??= await objectStorage(this.context);
		return this.storage;
	}

	/** The item's binary file (`property`), named `fieldName` in errors; refused at the service's size limit. */
	async upload(
		itemIndex: number,
		property: string,
		fieldName: string,
		lifetimeSeconds: number,
		folder: UploadFolder,
	): Promise<UploadedFile> {
		const file = await binaryFile(this.context, itemIndex, property, fieldName);
		return await this.put(folder, file, lifetimeSeconds);
	}

	/** Bytes the node made (a generated image). */
	async uploadBytes(
		folder: UploadFolder,
		bytes: Uint8Array,
		file: { fileName: string; mimeType: string },
		lifetimeSeconds: number,
	): Promise<UploadedFile> {
		return await this.put(folder, { ...file, body: bytes, size: bytes.length }, lifetimeSeconds);
	}

	private async put(
		folder: UploadFolder,
		file: BinaryFile,
		lifetimeSeconds: number,
	): Promise<UploadedFile> {
		const storage = await this.bucket();
		const key = storage.keyFor(keyName(folder, file.fileName));
		await storage.put(key, file.body, { size: file.size, contentType: file.mimeType });
		this.uploaded.push(key);
		return { key, url: storage.presignedGetUrl(key, lifetimeSeconds) };
	}

	/** Deletes every file put except `kept` (files of jobs a paused execution still waits for). */
	async deleteAll(kept: ReadonlySet<string> = new Set()): Promise<void> {
		const storage = this.storage;
		const keys = this.uploaded.splice(0).filter((key) => !kept.has(key));
		if (storage) await deleteEach(this.context, storage, keys);
	}
}

/** A failure to delete is logged, never hides the job's result: the link expires anyway. */
async function deleteEach(
	context: StorageContext,
	storage: ObjectStorage,
	keys: readonly string[],
): Promise<void> {
	for (const key of keys) {
		try {
			await storage.delete(key);
		} catch (error) {
			context.logger.warn(
				`GPU Cloud: could not delete the uploaded file ${key} (its link expires on its own): ${error instanceof Error ? error.message : String(error)}`,
			);
		}
	}
}

/** Deletes the files of a paused execution's jobs once they have all ended (the resuming webhook). */
export async function deleteUploaded(
	context: StorageContext,
	keys: readonly string[],
): Promise<void> {
	if (keys.length === 0) return;
	try {
		await deleteEach(context, await objectStorage(context), keys);
	} catch (error) {
		context.logger.warn(
			`GPU Cloud: could not delete ${keys.length} uploaded file(s) (their links expire on their own): ${error instanceof Error ? error.message : String(error)}`,
		);
	}
}

/**
 * Runs an operation that uploads files and waits for their jobs; afterwards deletes the files
 * (unless Keep Uploaded Files), but not those of jobs a paused execution still waits for: the
 * resuming webhook deletes those.
 */
export async function withUploadsDeletedAfter(
	context: IExecuteFunctions,
	run: (uploads: BinaryUploads, keep: boolean) => Promise<INodeExecutionData[]>,
): Promise<INodeExecutionData[]> {
	const uploads = new BinaryUploads(context);
	const keep = context.getNodeParameter('options.keepUploadedFile', 0, false) === true;
	let output: INodeExecutionData[] = [];
	try {
		output = await run(uploads, keep);
		return output;
	} finally {
		if (!keep) await uploads.deleteAll(filesOfPausedJobs(output));
	}
}

/** The files of jobs a paused execution waits for: its output items are those jobs, marked as waiting. */
function filesOfPausedJobs(output: INodeExecutionData[]): Set<string> {
	return new Set(
		output.flatMap(({ json }) =>
			json.waitTimedOut === true && Array.isArray(json.uploadedObjects)
				? json.uploadedObjects.filter((key): key is string => typeof key === 'string')
				: [],
		),
	);
}
