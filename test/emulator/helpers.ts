import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { problemDetailsSchema, type ProblemDetails } from '../../shared/schemas';
import { startEmulator, type EmulatorOptions, type RunningEmulator } from '../../emulator';
import { eventually } from '../support/eventually';

export interface HttpReply {
	status: number;
	headers: Record<string, string | string[] | undefined>;
	text: string;
	json(): unknown;
}

export interface CallOptions {
	body?: unknown;
	/** Raw body text, sent as is. */
	raw?: string;
	/** The API key to send; null sends none. Default: the emulator's key. */
	key?: string | null;
	headers?: Record<string, string>;
}

/** A plain HTTP request (never through shared/client): what any caller of the service would send. */
export async function call(
	url: string,
	method: 'GET' | 'POST' | 'DELETE' | 'PUT',
	apiKey: string | null,
	options: CallOptions = {},
): Promise<HttpReply> {
	const headers: Record<string, string> = { ...options.headers };
	if (apiKey !== null) headers['service-api-key'] = apiKey;
	let body: string | undefined = options.raw;
	if (options.body !== undefined) body = JSON.stringify(options.body);
	if (body !== undefined) headers['content-type'] ??= 'application/json';
	const response = await request(url, { method, headers, body });
	const text = await response.body.text();
	return {
		status: response.statusCode,
		headers: response.headers,
		text,
		json: () => JSON.parse(text) as unknown,
	};
}

/** Calls the management API of an emulator, path relative to its base URL. */
export function api(
	emulator: RunningEmulator,
	method: 'GET' | 'POST' | 'DELETE' | 'PUT',
	path: string,
	options: CallOptions = {},
) {
	const key = options.key === undefined ? emulator.apiKey : options.key;
	return call(`${emulator.baseUrl}${path}`, method, key, options);
}

export function orgPath(emulator: RunningEmulator, rest: string): string {
	return `/organizations/${emulator.organization}${rest}`;
}

/** Asserts a problem-details reply with this status and returns it parsed. */
export function expectProblem(reply: HttpReply, status: number, instance?: string): ProblemDetails {
	expect(reply.status).toBe(status);
	expect(reply.headers['content-type']).toBe('application/json');
	const problem = problemDetailsSchema.parse(reply.json());
	expect(problem).toEqual(
		expect.objectContaining({
			type: 'about:blank',
			status,
			title: expect.any(String),
			detail: expect.any(String),
		}),
	);
	if (instance) expect(problem.instance).toBe(instance);
	return problem;
}

export { ManualClock, settle } from '../support/manual-clock';

/** support/eventually with the emulator tests' shorter default timeout. */
export async function waitFor(
	predicate: () => boolean,
	what: string,
	timeoutMs = 5000,
): Promise<void> {
	await eventually(what, predicate, { timeoutMs, intervalMs: 10 });
}

export interface Received {
	path: string;
	headers: IncomingHttpHeaders;
	body: string;
}

/** A loopback webhook receiver; `reply` decides each answer's status (default 200). */
export async function startReceiver(
	reply: (received: Received, index: number) => number = () => 200,
) {
	const received: Received[] = [];
	const server = createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			const entry = {
				path: req.url ?? '/',
				headers: req.headers,
				body: Buffer.concat(chunks).toString('utf8'),
			};
			received.push(entry);
			res.writeHead(reply(entry, received.length - 1));
			res.end();
		});
	});
	server.listen(0, '127.0.0.1');
	await once(server, 'listening');
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}/hook`,
		received,
		close: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}

/** An emulator for one test file with fast jobs and no rate limit unless asked. */
export function emulatorFor(options: EmulatorOptions = {}): Promise<RunningEmulator> {
	return startEmulator({
		jobDurationMs: 100,
		rateLimitPerMinute: 0,
		webhookRetryDelaysMs: [10, 20, 40],
		...options,
	});
}
