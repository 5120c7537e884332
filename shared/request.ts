import type { z } from 'zod/v4';
import type { Clock } from './clock';
import {
	AbortedError,
	AuthenticationError,
	BadRequestError,
	GpuCloudError,
	NetworkError,
	NotFoundError,
	PermissionError,
	RateLimitError,
	ResponseFormatError,
	ServerError,
	TimeoutError,
	type RequestDescription,
} from './errors';
import type { AdaptiveRateLimiter } from './rate-limiter';
import {
	DEFAULT_RETRY_POLICY,
	backoffDelayMs,
	isRetryableStatus,
	parseRetryAfterMs,
	type RetryPolicy,
} from './retry';
import { problemDetailsSchema } from './schemas';
import {
	TransportError,
	type HttpMethod,
	type StreamingTransportResponse,
	type Transport,
	type TransportRequest,
	type TransportResponse,
} from './transport';
import { parseResponse } from './validation';

export const API_KEY_HEADER = 'Service-Api-Key';

export interface ExecutorOptions {
	baseUrl: string;
	transport: Transport;
	clock: Clock;
	/** Sent as `Service-Api-Key`; leave unset when the transport adds it (n8n credentials do). */
	apiKey?: string;
	timeoutMs: number;
	retry?: Partial<RetryPolicy>;
	limiter?: AdaptiveRateLimiter;
	random?: () => number;
	/** Names the service in messages: "GPU Cloud" or "The image workload". */
	serviceName: string;
}

/** How a 2xx reply that is not what the interface promises is reported. */
export interface ReplyChecks {
	malformed(why: string): ResponseFormatError;
	/** Parses JSON text and checks it with `schema`. */
	parse<S extends z.ZodType>(schema: S, text: string): z.output<S>;
}

export function replyChecks(
	serviceName: string,
	request: RequestDescription,
	status: number,
	requestId?: string,
): ReplyChecks {
	const malformed = (why: string) =>
		new ResponseFormatError(
			`${serviceName} sent a reply to ${request.method} ${request.path} that ${why} (HTTP ${status}).`,
			{ status, request, requestId },
		);
	return {
		malformed,
		parse: (schema, text) => {
			let body: unknown;
			try {
				body = JSON.parse(text);
			} catch {
				throw malformed('is not valid JSON');
			}
			return parseResponse(schema, body, request, status);
		},
	};
}

export interface RequestSpec {
	method: HttpMethod;
	path: string;
	query?: Record<string, string | number | undefined>;
	body?: unknown;
	/**
	 * Safe to repeat: reads, cancels. A create is not: it is repeated only when it cannot have
	 * reached the server, or was refused with 429 (refused means not processed).
	 */
	idempotent: boolean;
	signal?: AbortSignal;
	timeoutMs?: number;
	/** Goes after every other caller of the key's budget (see AdaptiveRateLimiter.acquire). */
	background?: boolean;
	/** Sent once, its failure thrown as it came: a probe whose answer is what the caller wants to know. */
	once?: boolean;
}

function describe(spec: RequestSpec): RequestDescription {
	return { method: spec.method, path: spec.path + queryString(spec.query) };
}

function queryString(query: RequestSpec['query']): string {
	if (!query) return '';
	const entries = Object.entries(query).filter(
		(entry): entry is [string, string | number] => entry[1] !== undefined,
	);
	return entries.length === 0
		? ''
		: `?${new URLSearchParams(entries.map(([k, v]): [string, string] => [k, String(v)])).toString()}`;
}

function isJson(response: { headers: Record<string, string> }): boolean {
	return /[/+]json\b/i.test(response.headers['content-type'] ?? '');
}

/** The most useful human words in an error body: problem `detail`, else `title`, else a workload's `error`. */
function errorWords(
	body: string,
	json: boolean,
): { title?: string; detail?: string; html: boolean } {
	if (json) {
		try {
			const parsed: unknown = JSON.parse(body);
			const problem = problemDetailsSchema.safeParse(parsed);
			if (problem.success && (problem.data.detail || problem.data.title)) {
				return { title: problem.data.title, detail: problem.data.detail, html: false };
			}
			if (parsed && typeof parsed === 'object') {
				const record = parsed as Record<string, unknown>;
				const error = record.error;
				if (typeof error === 'string' && error) return { detail: error, html: false };
				if (
					error &&
					typeof error === 'object' &&
					typeof (error as Record<string, unknown>).message === 'string'
				) {
					return { detail: String((error as Record<string, unknown>).message), html: false };
				}
				if (typeof record.message === 'string' && record.message)
					return { detail: record.message, html: false };
			}
		} catch {
			// Fall through: a body that claims JSON but is not still deserves a readable message.
		}
	}
	const html = /^\s*</.test(body);
	if (!html) {
		const text = body.trim().split(/\r?\n/)[0]?.slice(0, 200);
		if (text) return { detail: text, html: false };
	}
	return { html };
}

const STATUS_TEXT: Record<number, string> = {
	400: 'Bad Request',
	401: 'Unauthorized',
	403: 'Forbidden',
	404: 'Not Found',
	408: 'Request Timeout',
	409: 'Conflict',
	422: 'Unprocessable Entity',
	429: 'Too Many Requests',
	500: 'Internal Server Error',
	502: 'Bad Gateway',
	503: 'Service Unavailable',
	504: 'Gateway Timeout',
	524: 'Gateway Timeout',
};

export class RequestExecutor {
	readonly retry: RetryPolicy;
	private readonly random: () => number;
	private readonly baseUrl: string;

	constructor(private readonly options: ExecutorOptions) {
		this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
		this.random = options.random ?? Math.random;
		this.baseUrl = options.baseUrl.replace(/\/+$/, '');
	}

	/**
	 * Sends a request and parses the 2xx body with `schema`. A malformed reply to a read is retried
	 * like a server error; to a create it is an ambiguous outcome (the server may have acted).
	 */
	async json<T extends z.ZodType>(spec: RequestSpec, schema: T): Promise<z.output<T>> {
		const request = describe(spec);
		return this.withRetries(
			spec,
			request,
			(transportRequest) => this.options.transport.send(transportRequest),
			(response) => this.parseBody(response, request, schema),
		);
	}

	/** Sends a request whose 2xx reply carries nothing we need (cancel: 202, empty body). */
	async empty(spec: RequestSpec): Promise<void> {
		const request = describe(spec);
		await this.withRetries(
			spec,
			request,
			(transportRequest) => this.options.transport.send(transportRequest),
			() => undefined,
		);
	}

	private parseBody<T extends z.ZodType>(
		response: TransportResponse,
		request: RequestDescription,
		schema: T,
	): z.output<T> {
		return replyChecks(
			this.options.serviceName,
			request,
			response.status,
			response.headers['x-request-id'],
		).parse(schema, response.body);
	}

	/** Like exchange, but hands back the body as a stream once a 2xx status arrives. */
	async openStream(spec: RequestSpec): Promise<StreamingTransportResponse> {
		const request = describe(spec);
		const transport = this.options.transport;
		if (!transport.stream) throw new Error('This transport cannot stream.');
		const stream = transport.stream.bind(transport);
		return this.withRetries(
			spec,
			request,
			async (transportRequest): Promise<TransportResponse | StreamingTransportResponse> => {
				const opened = await stream(transportRequest);
				if (opened.status >= 200 && opened.status < 300) return opened;
				// An error reply is small: read it whole so it is reported like any other.
				const chunks: Uint8Array[] = [];
				for await (const chunk of opened.body) chunks.push(chunk);
				return { ...opened, body: Buffer.concat(chunks).toString('utf8') };
			},
			(response) => {
				if (typeof response.body === 'string')
					throw new Error('unreachable: only 2xx replies are accepted');
				return { ...response, body: response.body };
			},
		);
	}

	/**
	 * Opens a stream like openStream and hands its 2xx body to `read`, which consumes it as it
	 * arrives. A failure while reading is reported like one before the reply, but never repeated:
	 * the request has been acted on.
	 */
	async receive<T>(
		spec: RequestSpec,
		read: (response: StreamingTransportResponse, reply: ReplyChecks) => Promise<T>,
	): Promise<T> {
		const request = describe(spec);
		const response = await this.openStream(spec);
		const checks = replyChecks(
			this.options.serviceName,
			request,
			response.status,
			response.headers['x-request-id'],
		);
		try {
			return await read(response, checks);
		} catch (error) {
			if (!(error instanceof TransportError)) throw error;
			if (error.failure === 'aborted' || spec.signal?.aborted)
				throw new AbortedError(`${request.method} ${request.path} was aborted.`, {
					request,
					cause: error,
				});
			throw this.transportFailure(error, request, spec.timeoutMs ?? this.options.timeoutMs);
		}
	}

	private async withRetries<
		R extends { status: number; headers: Record<string, string>; body: unknown },
		T,
	>(
		spec: RequestSpec,
		request: RequestDescription,
		send: (request: TransportRequest) => Promise<R>,
		accept: (response: R) => T,
	): Promise<T> {
		const { clock } = this.options;
		const headers: Record<string, string> = { accept: 'application/json' };
		if (spec.body !== undefined) headers['content-type'] = 'application/json';
		if (this.options.apiKey) headers[API_KEY_HEADER] = this.options.apiKey;
		const transportRequest: TransportRequest = {
			method: spec.method,
			url: this.baseUrl + request.path,
			headers,
			body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
			timeoutMs: spec.timeoutMs ?? this.options.timeoutMs,
			signal: spec.signal,
		};

		const { limiter } = this.options;
		let rateLimitDeadline: number | undefined;
		let refusals = 0;
		for (let retry = 0; ; ) {
			if (spec.signal?.aborted)
				throw new AbortedError(`${request.method} ${request.path} was aborted.`, { request });
			let sentAt: number;
			try {
				sentAt = limiter
					? await limiter.acquire(spec.signal, spec.background === true)
					: clock.now();
			} catch (error) {
				if (!spec.signal?.aborted) throw error;
				throw new AbortedError(
					`${request.method} ${request.path} was cancelled while waiting for the rate limit.`,
					{ request, cause: error },
				);
			}

			const outcome = await this.attempt(spec, request, transportRequest, send, accept);
			const rateLimited = !outcome.ok && outcome.failure instanceof RateLimitError;
			if (outcome.ok) return outcome.value;
			const { failure, safeToRepeat, waitMs } = outcome;
			if (spec.once) throw failure;
			if (!safeToRepeat) throw new AmbiguousOutcomeError(failure);
			let delayMs: number;
			if (rateLimited) {
				// Waiting out 429s does not use up retries: only the call's rate-limit budget bounds it.
				const now = clock.now();
				rateLimitDeadline ??= now + this.retry.maxRateLimitWaitMs;
				delayMs = waitMs ?? backoffDelayMs(refusals, this.retry, this.random);
				refusals++;
				if (now + delayMs > rateLimitDeadline) throw failure;
				if (limiter) {
					// Every call of this key in the process waits, not just this one.
					limiter.throttled(sentAt, delayMs);
					continue;
				}
			} else {
				if (retry >= this.retry.maxRetries) throw failure;
				delayMs = backoffDelayMs(retry, this.retry, this.random);
				retry++;
			}
			try {
				await clock.sleep(delayMs, spec.signal);
			} catch (error) {
				if (!spec.signal?.aborted) throw error;
				throw new AbortedError(
					`${request.method} ${request.path} was cancelled while waiting to retry.`,
					{ request, cause: error },
				);
			}
		}
	}

	/** One try: the accepted value, or the failure with what it allows next. */
	private async attempt<
		R extends { status: number; headers: Record<string, string>; body: unknown },
		T,
	>(
		spec: RequestSpec,
		request: RequestDescription,
		transportRequest: TransportRequest,
		send: (request: TransportRequest) => Promise<R>,
		accept: (response: R) => T,
	): Promise<
		| { ok: true; value: T }
		| { ok: false; failure: GpuCloudError; safeToRepeat: boolean; waitMs?: number }
	> {
		let response: R;
		try {
			response = await send(transportRequest);
		} catch (error) {
			if (!(error instanceof TransportError)) throw error;
			if (error.failure === 'aborted')
				throw new AbortedError(`${request.method} ${request.path} was aborted.`, {
					request,
					cause: error,
				});
			const failure = this.transportFailure(error, request, transportRequest.timeoutMs);
			return { ok: false, failure, safeToRepeat: spec.idempotent || !error.mayHaveReachedServer };
		}
		if (response.status >= 200 && response.status < 300) {
			try {
				return { ok: true, value: accept(response) };
			} catch (error) {
				if (!(error instanceof ResponseFormatError)) throw error;
				return { ok: false, failure: error, safeToRepeat: spec.idempotent };
			}
		}
		const failure = this.statusError({ ...response, body: String(response.body) }, request);
		if (!isRetryableStatus(response.status)) throw failure;
		if (failure instanceof RateLimitError) {
			// Refused for rate means not processed: repeating even a create is safe.
			return { ok: false, failure, safeToRepeat: true, waitMs: failure.retryAfterMs };
		}
		return { ok: false, failure, safeToRepeat: spec.idempotent };
	}

	private transportFailure(
		error: TransportError,
		request: RequestDescription,
		timeoutMs: number,
	): GpuCloudError {
		const where = `${request.method} ${request.path}`;
		return error.failure === 'timeout'
			? new TimeoutError(
					`${this.options.serviceName} did not answer ${where} within ${timeoutMs} ms.`,
					{ request, cause: error },
				)
			: new NetworkError(
					`Could not reach ${this.options.serviceName} for ${where}: ${error.message}`,
					{ request, cause: error },
				);
	}

	private statusError(response: TransportResponse, request: RequestDescription): GpuCloudError {
		const { status } = response;
		const words = errorWords(response.body, isJson(response));
		const statusLine = `HTTP ${status}${STATUS_TEXT[status] ? ` ${STATUS_TEXT[status]}` : ''}`;
		const what =
			words.detail ??
			words.title ??
			(words.html ? `${statusLine} (an HTML error page)` : statusLine);
		const message = `${this.options.serviceName}: ${what} [${statusLine}, ${request.method} ${request.path}]`;
		const details = {
			status,
			title: words.title,
			detail: words.detail,
			request,
			requestId: response.headers['x-request-id'],
		};
		switch (true) {
			case status === 400 || status === 409 || status === 422:
				return new BadRequestError(message, details);
			case status === 401:
				return new AuthenticationError(
					`${this.options.serviceName} did not accept the API key: ${what} [${statusLine}, ${request.method} ${request.path}]`,
					details,
				);
			case status === 403:
				return new PermissionError(message, details);
			case status === 404:
				return new NotFoundError(message, details);
			case status === 429:
				return new RateLimitError(message, {
					...details,
					retryAfterMs: parseRetryAfterMs(
						response.headers['retry-after'],
						this.options.clock.now(),
					),
				});
			case status === 504 || status === 524:
				return new TimeoutError(
					`${this.options.serviceName} gateway gave up after its time limit (about 100 s) [${statusLine}, ${request.method} ${request.path}]; use webhook delivery for long work.`,
					details,
				);
			default:
				return new ServerError(message, details);
		}
	}
}

/**
 * A non-idempotent request failed in a way that leaves unknown whether the server acted on it.
 * Carries the underlying error; callers that can look the outcome up (jobs.create) do so.
 */
export class AmbiguousOutcomeError extends GpuCloudError {
	readonly underlying: GpuCloudError;
	constructor(underlying: GpuCloudError) {
		super(`${underlying.message} It is unknown whether the request took effect.`, {
			status: underlying.status,
			title: underlying.title,
			detail: underlying.detail,
			request: underlying.request,
			requestId: underlying.requestId,
			cause: underlying,
		});
		this.underlying = underlying;
	}
}
