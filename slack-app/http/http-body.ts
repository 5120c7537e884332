import type { IncomingMessage } from 'node:http';

/**
 * A request body read to its end, or `undefined` when it is over `limit` bytes. Past the limit the
 * rest is still read (and dropped): a server that answers while the client is still sending leaves
 * that client writing into a connection nobody reads, and its pool then reuses a socket the server
 * is about to reset (ECONNRESET on the client's next request).
 */
export function readBodyWithin(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		let size = 0;
		req.on('data', (chunk: Buffer) => {
			size += chunk.length;
			if (size <= limit) chunks.push(chunk);
		});
		req.once('end', () => resolve(size <= limit ? Buffer.concat(chunks, size) : undefined));
		req.once('error', reject);
	});
}

/** A parsed body (or part of one) that is a JSON object, before its fields are read. */
export function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}
