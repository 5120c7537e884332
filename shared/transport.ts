/**
 * The one seam through which the clients reach the network. n8n plugs in its own request helper
 * (proxies, credentials, logging); everything else uses the undici transport in `runtime/`.
 */

export type HttpMethod = 'GET' | 'POST' | 'DELETE';

export interface TransportRequest {
	method: HttpMethod;
	url: string;
	headers: Record<string, string>;
	body?: string;
	timeoutMs: number;
	signal?: AbortSignal;
}

export interface TransportResponse {
	status: number;
	/** Header names in lower case. */
	headers: Record<string, string>;
	body: string;
}

export interface StreamingTransportResponse {
	status: number;
	headers: Record<string, string>;
	/** The body as it arrives; the per-request timeout applies to the whole stream. */
	body: AsyncIterable<Uint8Array>;
}

export interface Transport {
	send(request: TransportRequest): Promise<TransportResponse>;
	/** Optional: transports that cannot stream make callers fall back to a whole reply. */
	stream?(request: TransportRequest): Promise<StreamingTransportResponse>;
}

export type TransportFailure = 'connect' | 'timeout' | 'reset' | 'aborted' | 'other';

/** A request that produced no HTTP status. */
export class TransportError extends Error {
	readonly failure: TransportFailure;
	/**
	 * False only when the request certainly never reached the server (connection refused, DNS
	 * failure): the one case in which repeating a create cannot make a duplicate.
	 */
	readonly mayHaveReachedServer: boolean;

	constructor(
		failure: TransportFailure,
		message: string,
		options: { mayHaveReachedServer: boolean; cause?: unknown },
	) {
		super(message, options.cause === undefined ? undefined : { cause: options.cause });
		this.name = 'TransportError';
		this.failure = failure;
		this.mayHaveReachedServer = options.mayHaveReachedServer;
	}
}

/** Error codes (Node and undici) that mean the connection was never made. */
export const NEVER_CONNECTED: ReadonlySet<string> = new Set([
	'ECONNREFUSED',
	'ENOTFOUND',
	'EAI_AGAIN',
	'EHOSTUNREACH',
	'ENETUNREACH',
	'UND_ERR_CONNECT_TIMEOUT',
]);
const TIMEOUTS = new Set([
	'ETIMEDOUT',
	'ESOCKETTIMEDOUT',
	'UND_ERR_HEADERS_TIMEOUT',
	'UND_ERR_BODY_TIMEOUT',
]);

function errorCode(error: unknown): string | undefined {
	for (let current: unknown = error, depth = 0; current && depth < 5; depth++) {
		if (typeof current === 'object' && 'code' in current && typeof current.code === 'string')
			return current.code;
		current = typeof current === 'object' && 'cause' in current ? current.cause : undefined;
	}
	return undefined;
}

/** Maps a low-level failure (Node, undici or an HTTP library wrapping them) to a TransportError. */
export function toTransportError(error: unknown, signal?: AbortSignal): TransportError {
	if (error instanceof TransportError) return error;
	const code = errorCode(error);
	const text = error instanceof Error ? error.message : String(error);
	if (signal?.aborted)
		return new TransportError('aborted', 'The request was aborted.', {
			mayHaveReachedServer: true,
			cause: error,
		});
	if (code && NEVER_CONNECTED.has(code)) {
		return new TransportError('connect', `Could not connect (${code}).`, {
			mayHaveReachedServer: false,
			cause: error,
		});
	}
	if ((code && TIMEOUTS.has(code)) || (error instanceof Error && error.name === 'TimeoutError')) {
		return new TransportError('timeout', 'The request timed out.', {
			mayHaveReachedServer: true,
			cause: error,
		});
	}
	if (
		code === 'ECONNRESET' ||
		code === 'UND_ERR_SOCKET' ||
		code === 'EPIPE' ||
		/socket hang up|other side closed/i.test(text)
	) {
		return new TransportError('reset', 'The connection was closed before the reply was complete.', {
			mayHaveReachedServer: true,
			cause: error,
		});
	}
	return new TransportError('other', `The request failed${code ? ` (${code})` : ''}.`, {
		mayHaveReachedServer: true,
		cause: error,
	});
}
