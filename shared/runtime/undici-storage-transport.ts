import { Readable } from 'node:stream';
import { request } from 'undici';
import type { StorageRequest, StorageResponse, StorageTransport } from '../object-storage/client';
import { toTransportError } from '../transport';

/** The object-storage transport of Node code (the Slack app, tests): undici, the body streamed. */
export class UndiciStorageTransport implements StorageTransport {
	async send(req: StorageRequest): Promise<StorageResponse> {
		try {
			const response = await request(req.url, {
				method: req.method,
				headers: req.headers,
				body:
					req.body === undefined || req.body instanceof Uint8Array
						? req.body
						: Readable.from(req.body),
				signal: req.signal,
				headersTimeout: req.timeoutMs,
				bodyTimeout: req.timeoutMs,
			});
			const headers: Record<string, string> = {};
			for (const [name, value] of Object.entries(response.headers))
				if (value !== undefined)
					headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
			return { status: response.statusCode, headers, body: await response.body.text() };
		} catch (error) {
			throw toTransportError(error, req.signal);
		}
	}
}
