import { readFile } from 'node:fs/promises';

/**
 * The kinds of work in progress in the Slack app's state file, as the test process sees it on disk. A
 * missing or torn file is an error, not "nothing in progress": the app writes it atomically.
 */
export async function inflightKinds(path: string): Promise<string[]> {
	const state = JSON.parse(await readFile(path, 'utf8')) as { inflight?: { kind: string }[] };
	if (!Array.isArray(state.inflight)) throw new Error(`${path} has no inflight list`);
	return state.inflight.map((entry) => entry.kind).sort();
}

/** Before the app has recorded anything, the file may not exist yet. */
export async function inflightKindsOnceWritten(path: string): Promise<string[]> {
	try {
		return await inflightKinds(path);
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
		throw error;
	}
}
