import { randomUUID } from 'node:crypto';

interface StoredFile {
	contentType: string;
	body: Buffer;
}

export const FILES_PREFIX = '/files/';

/**
 * Result files (transcripts returned as files, synthesised audio). The unguessable id in the path
 * stands in for the real service's signed URLs: whoever has the URL can read the file, no key needed.
 */
export class FileStore {
	private readonly files = new Map<string, StoredFile>();
	origin = 'http://127.0.0.1';

	put(extension: string, contentType: string, body: Buffer | string): string {
		const name = `${randomUUID()}.${extension}`;
		this.files.set(name, {
			contentType,
			body: typeof body === 'string' ? Buffer.from(body) : body,
		});
		return `${this.origin}${FILES_PREFIX}${name}`;
	}

	get(path: string): StoredFile | undefined {
		return this.files.get(path.slice(FILES_PREFIX.length));
	}
}
