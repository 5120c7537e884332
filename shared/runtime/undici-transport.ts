import { Pool } from 'undici';
import {
	toTransportError,
	TransportError,
	type StreamingTransportResponse,
	type Transport,
	type TransportRequest,
	type TransportResponse,
} from '../transport';

export interface UndiciTransportOptions {
	/** Keep-alive connections per origin. */
	connections?: number;
}

function lowerCaseHeaders(
	headers: Record<string, string | string[] | undefined>,
): Record<string, string> {
	const result: Record<string, string> = {};
	for (const [name, value] of Object.entries(headers)) {
		if (value !== undefined)
			result[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
	}
	return result;
}

/** Splits `http://host:port/path?q` without a full URL parse, which is measurable per request. */
function splitUrl(url: string): { origin: string; path: string } {
	const slash = url.indexOf('/', url.indexOf('//') + 2);
	return slash < 0
		? { origin: url, path: '/' }
		: { origin: url.slice(0, slash), path: url.slice(slash) };
}

/** The default transport for the Slack app, emulator, demo and benchmarks: keep-alive undici pools, one per origin. */
export class UndiciTransport implements Transport {
	private readonly pools = new Map<string, Pool>();
	private readonly connections: number;

	constructor(options: UndiciTransportOptions = {}) {
		this.connections = options.connections ?? 64;
	}

	private pool(origin: string): Pool {
		let pool = this.pools.get(origin);
		if (!pool) {
			pool = new Pool(origin, { connections: this.connections, keepAliveTimeout: 10_000 });
			this.pools.set(origin, pool);
		}
		return pool;
	}

	/**
	 * The timeout is undici's own headers and body timers rather than an AbortSignal per request:
	 * a timer signal (and AbortSignal.any) on every call costs about a third of the throughput.
	 */
	private async open(req: TransportRequest) {
		try {
			const { origin, path } = splitUrl(req.url);
			return await this.pool(origin).request({
				path,
				method: req.method,
				headers: req.headers,
				body: req.body,
				signal: req.signal,
				headersTimeout: req.timeoutMs,
				bodyTimeout: req.timeoutMs,
			});
		} catch (error) {
			throw this.mapError(error, req);
		}
	}

	private mapError(error: unknown, req: TransportRequest): TransportError {
		const mapped = toTransportError(error, req.signal);
		return mapped.failure === 'timeout'
			? new TransportError('timeout', `No reply within ${req.timeoutMs} ms.`, {
					mayHaveReachedServer: true,
					cause: error,
				})
			: mapped;
	}

	async send(req: TransportRequest): Promise<TransportResponse> {
		const response = await this.open(req);
		try {
			const body = await response.body.text();
			return { status: response.statusCode, headers: lowerCaseHeaders(response.headers), body };
		} catch (error) {
			throw this.mapError(error, req);
		}
	}

	async stream(req: TransportRequest): Promise<StreamingTransportResponse> {
		const response = await this.open(req);
		const mapError = (error: unknown) => this.mapError(error, req);
		async function* chunks(): AsyncIterable<Uint8Array> {
			try {
				for await (const chunk of response.body) yield chunk as Uint8Array;
			} catch (error) {
				throw mapError(error);
			}
		}
		return {
			status: response.statusCode,
			headers: lowerCaseHeaders(response.headers),
			body: chunks(),
		};
	}

	async close(): Promise<void> {
		await Promise.all([...this.pools.values()].map((pool) => pool.close()));
		this.pools.clear();
	}
}
