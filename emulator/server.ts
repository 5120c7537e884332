import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../shared/clock';
import type { FaultKind, Faults } from './faults';
import { FILES_PREFIX, type FileStore } from './files';
import {
	BodyTooLargeError,
	json,
	problem,
	readBody,
	STREAMED,
	type Reply,
	type RequestContext,
	type RouteResult,
} from './http';
import type { FaultSurface } from './options';

export type Surface = FaultSurface | 'files' | 'root';

export interface RequestRecord {
	method: string;
	/** Path without the query string. */
	path: string;
	/** The query string without its `?`, when the request had one (e.g. a listing's page). */
	query?: string;
	status: number;
	/** clock.now() when the reply was written. */
	time: number;
	surface: Surface;
	/** The fault injected into this request, if any. */
	fault?: FaultKind;
	/** The request body as text, when the route read one. */
	body?: string;
}

export type Route = (ctx: RequestContext) => Promise<RouteResult> | RouteResult;

interface HandlerDeps {
	clock: Clock;
	faults: Faults;
	files: FileStore;
	management: Route;
	image: Route;
	chat: Route;
	index: () => Reply;
	log: (line: string) => void;
}

/** The log keeps the newest requests only, so a long-running emulator does not grow without bound. */
const MAX_LOGGED_REQUESTS = 100_000;

const SURFACE_PREFIXES: readonly [string, Surface][] = [
	['/api/public/', 'management'],
	['/workloads/image/', 'image'],
	['/workloads/chat/', 'chat'],
	[FILES_PREFIX, 'files'],
];

function surfaceOf(path: string): Surface {
	for (const [prefix, surface] of SURFACE_PREFIXES) if (path.startsWith(prefix)) return surface;
	return 'root';
}

function bodyOf(reply: Reply): Buffer | string {
	return reply.body ?? '';
}

function send(res: ServerResponse, reply: Reply, body: Buffer | string = bodyOf(reply)): void {
	const headers: Record<string, string | number> = {
		...reply.headers,
		'content-length': Buffer.byteLength(body),
	};
	res.writeHead(reply.status, headers);
	res.end(body);
}

/** Sends the headers and half the body (or nothing), then destroys the socket. */
function sendAndReset(res: ServerResponse, reply: Reply): void {
	const body = Buffer.from(bodyOf(reply));
	if (body.length === 0) {
		res.destroy();
		return;
	}
	res.writeHead(reply.status, { ...reply.headers, 'content-length': body.length });
	res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.destroy());
}

const HTML_502 =
	'<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>edge</center></body></html>';

/**
 * One handler for every surface: request faults first (latency, 429, 5xx, HTML), then the route,
 * then reply faults (reset, malformed) on what the route answered — so a create that gets a reset or
 * a malformed reply has still created its job, as on the real edge.
 */
export function createRequestHandler(deps: HandlerDeps) {
	const { clock, faults, files } = deps;
	const requests: RequestRecord[] = [];

	function record(
		method: string,
		path: string,
		query: string,
		status: number,
		surface: Surface,
		fault?: FaultKind,
		body?: string,
	): void {
		if (requests.length >= MAX_LOGGED_REQUESTS) requests.splice(0, MAX_LOGGED_REQUESTS / 2);
		const entry: RequestRecord = { method, path, status, time: clock.now(), surface };
		if (query) entry.query = query;
		if (fault) entry.fault = fault;
		if (body !== undefined) entry.body = body;
		requests.push(entry);
	}

	function route(surface: Surface, ctx: RequestContext): Promise<RouteResult> | RouteResult {
		switch (surface) {
			case 'management':
				return deps.management(ctx);
			case 'image':
				return deps.image(ctx);
			case 'chat':
				return deps.chat(ctx);
			case 'files': {
				const file = ctx.method === 'GET' ? files.get(ctx.path) : undefined;
				return file
					? { status: 200, headers: { 'content-type': file.contentType }, body: file.body }
					: json(404, { error: 'No such file.' });
			}
			default:
				return ctx.path === '/' && ctx.method === 'GET'
					? deps.index()
					: json(404, { error: `Not found: ${ctx.path}` });
		}
	}

	function requestFault(path: string): { reply: Reply; fault: FaultKind } | undefined {
		if (faults.roll('rate-limit')) {
			return {
				fault: 'rate-limit',
				reply: problem(429, 'Too many requests (injected fault).', path, { 'retry-after': '1' }),
			};
		}
		if (faults.roll('error')) {
			return {
				fault: 'error',
				reply: problem(503, 'The service is temporarily unavailable (injected fault).', path),
			};
		}
		if (faults.roll('html-error')) {
			return {
				fault: 'html-error',
				reply: {
					status: 502,
					headers: { 'content-type': 'text/html; charset=utf-8' },
					body: HTML_502,
				},
			};
		}
		return undefined;
	}

	async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
		const url = req.url ?? '/';
		const q = url.indexOf('?');
		const path = q === -1 ? url : url.slice(0, q);
		const query = q === -1 ? '' : url.slice(q + 1);
		const method = req.method ?? 'GET';
		const surface = surfaceOf(path);
		let body: string | undefined;
		const faulted =
			(surface === 'management' || surface === 'image' || surface === 'chat') &&
			faults.active(surface)
				? surface
				: undefined;
		const ctx: RequestContext = {
			req,
			res,
			method,
			path,
			query,
			async readJson() {
				const text = await readBody(req);
				body = text;
				if (text.trim() === '') return { ok: false, reason: 'the body is empty' };
				try {
					return { ok: true, value: JSON.parse(text) as unknown };
				} catch (error) {
					return { ok: false, reason: error instanceof Error ? error.message : String(error) };
				}
			},
		};
		let result: RouteResult;
		let fault: FaultKind | undefined;
		try {
			if (faulted && faults.latencyMs > 0) await clock.sleep(faults.latencyMs);
			const injected = faulted ? requestFault(path) : undefined;
			if (injected) {
				fault = injected.fault;
				result = injected.reply;
			} else {
				result = await route(surface, ctx);
			}
		} catch (error) {
			if (error instanceof BodyTooLargeError) {
				result = problem(413, error.message, path);
			} else {
				deps.log(
					`internal error on ${method} ${path}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
				);
				result = problem(500, 'The emulator failed to handle this request.', path);
			}
		}
		if (result === STREAMED) {
			record(method, path, query, res.statusCode, surface, undefined, body);
			return;
		}
		if (res.headersSent || res.destroyed) return;
		if (faulted && !fault) {
			if (faults.roll('reset')) {
				sendAndReset(res, result);
				record(method, path, query, result.status, surface, 'reset', body);
				return;
			}
			if (result.json && result.status < 300 && faults.roll('malformed')) {
				const reply = String(bodyOf(result));
				send(res, result, reply.slice(0, Math.max(1, Math.floor(reply.length / 2))));
				record(method, path, query, result.status, surface, 'malformed', body);
				return;
			}
		}
		send(res, result);
		record(method, path, query, result.status, surface, fault, body);
	}

	return {
		requests,
		listener(req: IncomingMessage, res: ServerResponse): void {
			void handle(req, res);
		},
	};
}
