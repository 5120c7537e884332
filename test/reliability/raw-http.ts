import { request } from 'node:http';

/**
 * One HTTP request sent exactly as written: the path is not normalized (fetch would resolve `../`
 * and re-encode), any method, any headers, any body.
 */

export interface RawRequest {
	method?: string;
	/** Path and query, sent byte for byte. */
	path: string;
	headers?: Record<string, string | string[]>;
	body?: string | Buffer;
}

export interface RawReply {
	status: number;
	body: string;
}

export function send(origin: string, raw: RawRequest): Promise<RawReply> {
	const { hostname, port } = new URL(origin);
	const body =
		raw.body === undefined
			? undefined
			: Buffer.isBuffer(raw.body)
				? raw.body
				: Buffer.from(raw.body);
	return new Promise((resolve, reject) => {
		let answered = false;
		const req = request(
			{
				host: hostname,
				port,
				method: raw.method ?? 'POST',
				path: raw.path,
				headers: { ...raw.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
			},
			(res) => {
				answered = true;
				const chunks: Buffer[] = [];
				res.on('data', (chunk: Buffer) => chunks.push(chunk));
				res.on('end', () =>
					resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
				);
				res.on('error', reject);
			},
		);
		// A server may answer (413, 401) and close before a large body is fully written.
		req.on('error', (error) => {
			if (!answered) reject(error);
		});
		req.end(body);
	});
}
