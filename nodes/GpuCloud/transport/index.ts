import type {
	IExecuteFunctions,
	IHttpRequestOptions,
	ILoadOptionsFunctions,
	IPollFunctions,
	ISupplyDataFunctions,
	IWebhookFunctions,
} from 'n8n-workflow';
import * as n8nWorkflow from 'n8n-workflow';
import { sleep } from 'n8n-workflow';
import { z } from 'zod/v4';
import {
	LIMITS,
	NEVER_CONNECTED,
	ManagementClient,
	TransportError,
	WorkloadClient,
	parseOrThrow,
	rateLimitKeyFor,
	resourceNameSchema,
	type Clock,
	type StreamingTransportResponse,
	type Transport,
	type TransportFailure,
	type TransportRequest,
	type TransportResponse,
} from '../../../shared';

/**
 * The only place in the nodes that touches HTTP: the shared clients' Transport seam, implemented
 * on n8n's request helper so that proxies, credential authentication and execution cancelling all
 * work as for n8n's own nodes. Operations never build URLs; they call the shared clients.
 */

export const MANAGEMENT_CREDENTIAL = 'gpuCloudApi';
export const WORKLOAD_CREDENTIAL = 'gpuCloudWorkloadApi';

/** Every context that may send authenticated requests: node runs, list searches, webhooks, polls, AI sub-nodes. */
export type RequestContext =
	| IExecuteFunctions
	| ILoadOptionsFunctions
	| IWebhookFunctions
	| IPollFunctions
	| ISupplyDataFunctions;

const fullResponseSchema = z.object({
	statusCode: z.number().int(),
	// The HTTP library's header class, not a plain object.
	headers: z.unknown(),
	body: z.unknown(),
});

function lowerCaseHeaders(headers: unknown): Record<string, string> {
	const result: Record<string, string> = {};
	if (typeof headers !== 'object' || headers === null) return result;
	for (const [name, value] of Object.entries(headers)) {
		if (value === undefined || value === null) continue;
		result[name.toLowerCase()] = Array.isArray(value)
			? value.map(String).join(', ')
			: String(value);
	}
	return result;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<Uint8Array> {
	return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/**
 * Everything an error says about itself. n8n wraps the HTTP library's error in a NodeApiError that
 * replaces the message with a friendlier one and keeps the original text (with the code, such as
 * "connect ECONNREFUSED 127.0.0.1:9") in `messages`; other layers set `code` or chain `cause`.
 */
function errorTexts(error: unknown): string[] {
	const texts: string[] = [];
	let current: unknown = error;
	for (let depth = 0; depth < 6 && typeof current === 'object' && current !== null; depth++) {
		if ('code' in current && typeof current.code === 'string') texts.push(current.code);
		if ('message' in current && typeof current.message === 'string') texts.push(current.message);
		if ('messages' in current && Array.isArray(current.messages))
			texts.push(...current.messages.filter((text): text is string => typeof text === 'string'));
		current = 'cause' in current ? current.cause : undefined;
	}
	return texts;
}

const KNOWN_CODES = [
	...NEVER_CONNECTED,
	'ETIMEDOUT',
	'ESOCKETTIMEDOUT',
	'ECONNABORTED',
	'ECONNRESET',
	'EPIPE',
	'ERR_CANCELED',
];
const ERROR_CODE = new RegExp(`\\b(${KNOWN_CODES.join('|')})\\b`);

/**
 * Maps what n8n's request helper throws to a TransportError. Deliberately keeps neither the original
 * error nor its request config as `cause`: those carry the request headers, and so the API key.
 */
export function toN8nTransportError(error: unknown): TransportError {
	const texts = errorTexts(error);
	const text = texts.join(' | ');
	const code = texts
		.map((candidate) => ERROR_CODE.exec(candidate)?.[1])
		.find((found) => found !== undefined);
	const fail = (failure: TransportFailure, message: string, mayHaveReachedServer = true) =>
		new TransportError(failure, message, { mayHaveReachedServer });
	if (code === 'ERR_CANCELED' || /\bcanceled\b/i.test(text))
		return fail('aborted', 'The request was aborted.');
	if (code && NEVER_CONNECTED.has(code))
		return fail('connect', `Could not connect (${code}).`, false);
	if (
		code === 'ETIMEDOUT' ||
		code === 'ESOCKETTIMEDOUT' ||
		(code === 'ECONNABORTED' && /timeout/i.test(text)) ||
		/timeout of \d+ms exceeded/i.test(text)
	) {
		return fail('timeout', 'The request timed out.');
	}
	// The HTTP library's words when the server closed the connection before or during the reply.
	if (
		code === 'ECONNRESET' ||
		code === 'EPIPE' ||
		/socket hang up|stream has been aborted/i.test(text)
	) {
		return fail('reset', 'The connection was closed before the reply was complete.');
	}
	return fail('other', `The request failed${code ? ` (${code})` : ''}.`);
}

export class N8nTransport implements Transport {
	constructor(
		private readonly context: RequestContext,
		private readonly credentialType: string,
	) {}

	private options(request: TransportRequest, encoding: 'text' | 'stream'): IHttpRequestOptions {
		return {
			method: request.method,
			url: request.url,
			headers: request.headers,
			body: request.body,
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
			json: false,
			encoding,
			timeout: request.timeoutMs,
			abortSignal: request.signal,
		};
	}

	private async call(
		request: TransportRequest,
		encoding: 'text' | 'stream',
	): Promise<z.infer<typeof fullResponseSchema>> {
		let raw: unknown;
		try {
			raw = await this.context.helpers.httpRequestWithAuthentication.call(
				this.context,
				this.credentialType,
				this.options(request, encoding),
			);
		} catch (error) {
			throw toN8nTransportError(error);
		}
		const parsed = fullResponseSchema.safeParse(raw);
		if (!parsed.success)
			throw new TransportError('other', 'n8n returned an HTTP response of an unexpected shape.', {
				mayHaveReachedServer: true,
			});
		return parsed.data;
	}

	async send(request: TransportRequest): Promise<TransportResponse> {
		const response = await this.call(request, 'text');
		const { body } = response;
		return {
			status: response.statusCode,
			headers: lowerCaseHeaders(response.headers),
			body:
				typeof body === 'string'
					? body
					: body === undefined || body === null
						? ''
						: Buffer.isBuffer(body)
							? body.toString('utf8')
							: JSON.stringify(body),
		};
	}

	async stream(request: TransportRequest): Promise<StreamingTransportResponse> {
		const response = await this.call(request, 'stream');
		if (!isAsyncIterable(response.body))
			throw new TransportError('other', 'n8n did not return a readable stream.', {
				mayHaveReachedServer: true,
			});
		const body: AsyncIterable<Uint8Array> = response.body;
		// A connection lost mid-body is reported like one lost before the reply.
		async function* chunks(): AsyncIterable<Uint8Array> {
			try {
				yield* body;
			} catch (error) {
				throw toN8nTransportError(error);
			}
		}
		return {
			status: response.statusCode,
			headers: lowerCaseHeaders(response.headers),
			body: chunks(),
		};
	}
}

type AbortableSleep = (ms: number, signal: AbortSignal) => Promise<void>;

function isAbortableSleep(value: unknown): value is AbortableSleep {
	return typeof value === 'function';
}

/**
 * n8n forbids timers in node code, so waits use n8n's own sleep. Which one depends on the running
 * n8n: older lines export `sleepWithAbort` and a `sleep` that ignores a signal; 2.41 exports only
 * `sleep`, which takes the signal. The helper is looked up when called, never assumed, and the
 * signal is honoured here too, so an n8n whose `sleep` ignores it still stops at once.
 */
export function n8nSleep(ms: number, signal?: AbortSignal): Promise<void> {
	if (!signal) return sleep(ms);
	const withAbort: unknown = Reflect.get(n8nWorkflow, 'sleepWithAbort');
	if (isAbortableSleep(withAbort)) return withAbort(ms, signal);
	return new Promise<void>((resolve, reject) => {
		if (signal.aborted) {
			reject(signal.reason);
			return;
		}
		const onAbort = () => reject(signal.reason);
		signal.addEventListener('abort', onAbort, { once: true });
		sleep(ms, signal).then(
			() => {
				signal.removeEventListener('abort', onAbort);
				resolve();
			},
			(error: unknown) => {
				signal.removeEventListener('abort', onAbort);
				reject(error);
			},
		);
	});
}

export const n8nClock: Clock = {
	now: () => Date.now(),
	sleep: n8nSleep,
};

const text = z.string({ error: 'is required' });

const managementCredentialSchema = z.object({
	apiKey: text.min(1, { error: 'is required' }),
	baseUrl: text.min(1, { error: 'is required' }),
	organizationName: text,
	defaultProject: z.string().optional(),
	// Credentials saved before this field existed have none: the service's own limit applies.
	requestsPerMinute: z
		.number({ error: 'must be a whole number' })
		.int({ error: 'must be a whole number' })
		.min(1, { error: 'must be at least 1' })
		.default(LIMITS.rateLimitPerMinute),
});
export type ManagementCredentials = z.infer<typeof managementCredentialSchema>;

const workloadCredentialSchema = z.object({
	serviceUrl: text.min(1, { error: 'is required' }),
	apiKey: z.string().optional(),
});

export async function readManagementCredentials(
	context: RequestContext,
): Promise<ManagementCredentials> {
	const raw = await context.getCredentials(MANAGEMENT_CREDENTIAL);
	const credentials = parseOrThrow(managementCredentialSchema, raw, 'GPU Cloud API credential');
	return {
		...credentials,
		baseUrl: credentials.baseUrl.trim(),
		organizationName: parseOrThrow(
			resourceNameSchema,
			credentials.organizationName.trim(),
			'GPU Cloud API credential Organization Name',
		),
		defaultProject: credentials.defaultProject?.trim() || undefined,
	};
}

export async function managementClient(
	context: RequestContext,
): Promise<{ client: ManagementClient; credentials: ManagementCredentials }> {
	const credentials = await readManagementCredentials(context);
	const client = new ManagementClient({
		baseUrl: credentials.baseUrl,
		organization: credentials.organizationName,
		transport: new N8nTransport(context, MANAGEMENT_CREDENTIAL),
		clock: n8nClock,
		rateLimit: {
			requestsPerMinute: credentials.requestsPerMinute,
			key: rateLimitKeyFor(credentials.apiKey, credentials.baseUrl),
		},
	});
	return { client, credentials };
}

export async function workloadClient(
	context: RequestContext,
	options: { timeoutMs?: number } = {},
): Promise<WorkloadClient> {
	const raw = await context.getCredentials(WORKLOAD_CREDENTIAL);
	const credentials = parseOrThrow(workloadCredentialSchema, raw, 'GPU Cloud Workload credential');
	return new WorkloadClient({
		serviceUrl: credentials.serviceUrl.trim(),
		transport: new N8nTransport(context, WORKLOAD_CREDENTIAL),
		clock: n8nClock,
		timeoutMs: options.timeoutMs,
	});
}
