import { open, rename } from 'node:fs/promises';

/**
 * Writes to a temporary file that is synced and renamed over the old one, so a SIGKILL or power
 * loss at any moment leaves either the old or the new content, never a torn file.
 */
export async function writeFileAtomically(
	path: string,
	data: string | Uint8Array,
	mode?: number,
): Promise<void> {
	const temporary = `${path}.${process.pid}.tmp`;
	const handle = await open(temporary, 'w', mode);
	try {
		await handle.writeFile(data);
		await handle.sync();
	} finally {
		await handle.close();
	}
	await rename(temporary, path);
}

/** The `code` of a file system error (`ENOENT`, `EACCES`, …), if it has one. */
export function fileErrorCode(error: unknown): string | undefined {
	// Not `instanceof Error`: errors from another realm (a test VM) fail that check.
	return typeof error === 'object' && error !== null && 'code' in error
		? String(error.code)
		: undefined;
}

export const isMissingFile = (error: unknown): boolean => fileErrorCode(error) === 'ENOENT';
