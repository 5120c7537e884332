import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { PRESIGN_MAX_SECONDS, type ObjectStorage } from '../../shared/object-storage';
import {
	fetchSlackFile,
	type FileLink,
	type FileRoute,
	type FileSource,
	type SharedFile,
} from './file-links';

export interface StoredFilesOptions {
	storage: ObjectStorage;
	/** How long the presigned URL holds at most (S3 allows 7 days). */
	ttlMs: number;
	/** Whether a file URL is Slack's: the bot token is sent nowhere else. */
	isSlackUrl: (url: string) => boolean;
	/** The workspace a file belongs to; undefined when the app no longer serves it. */
	source: (team: string) => Promise<FileSource | undefined>;
}

/**
 * Files shared in Slack put in the operator's S3-compatible bucket for their job: streamed from
 * Slack (with the bot token) into one PUT, never held whole, handed to GPU Cloud as a presigned GET
 * URL, and deleted when the job has ended. Works without a public address (Socket Mode).
 */
export class StoredFiles implements FileRoute {
	constructor(private readonly options: StoredFilesOptions) {}

	async create(team: string, file: SharedFile): Promise<FileLink> {
		const { storage, ttlMs, isSlackUrl } = this.options;
		if (!isSlackUrl(file.source))
			throw new Error(`The download address of file ${file.id} is not Slack's; it is not fetched.`);
		const botToken = (await this.options.source(team))?.botToken();
		if (!botToken) throw new Error(`The app no longer serves the workspace of file ${file.id}.`);
		const response = await fetchSlackFile(file.source, botToken);
		if (!response.ok || !response.body) {
			await response.body?.cancel();
			throw new Error(`Slack answered HTTP ${response.status} for the file ${file.name}.`);
		}
		// A key nobody can guess, ending in the file's name (what the parent shows of it).
		const key = storage.keyFor(`slack/${team}/${randomUUID()}/${safeName(file.name)}`);
		const length = Number(response.headers.get('content-length') ?? file.size);
		await storage.put(key, Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), {
			size: Number.isFinite(length) ? length : file.size,
			contentType: file.mimetype,
		});
		return {
			url: storage.presignedGetUrl(key, Math.min(PRESIGN_MAX_SECONDS, Math.ceil(ttlMs / 1000))),
			bind: () => Promise.resolve(),
			revoke: () => storage.delete(key),
		};
	}
}

/** A file name as one key segment: no slashes, backslashes or control characters. */
function safeName(name: string): string {
	// eslint-disable-next-line no-control-regex
	return name.replace(/[/\\\u0000-\u001f\u007f]+/g, '_').slice(0, 200) || 'file';
}
