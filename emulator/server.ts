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
import { EDGE_FAULTS, faultAfter, faultBefore, faultReply, sendSpoiled } from './request-faults';

export type Surface = FaultSurface | 'files' | 'root';

export interface RequestRecord {
	method: string;
	/** Path without the query string. */
	path: string;
	/** The query string without its `?`, when the request had one (e.g. a listing's page). */
	query?: string;
	/** 0 when no reply was sent (the drop and hang faults). */
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
	/** Aborted when the emulator closes: late arrivals still waiting are dropped. */
	signal: AbortSignal;
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

function send(res: ServerResponse, reply: Reply): void {
	const body = reply.body ?? '';
	res.writeHead(reply.status, { ...reply.headers, 'content-length': Buffer.byteLength(body) });
	res.end(body);
}

/**
 * One handler for every surface: request faults first (latency, 429, 5xx, edge pages, drop, hang),
 * then the route, then reply faults (reset, malformed, stall) on what the route answered — so a
 * create that gets a reset or a malformed reply has still created its job, as on the real edge.
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

	/**
	 * A request an edge fault answered reaching the service anyway, when lateArrivalMs says so: it is
	 * processed and its reply goes nowhere, as when the edge gave up on a request the service kept.
	 */
	async function arriveLate(surface: Surface, ctx: RequestContext): Promise<void> {
		const delay = faults.lateArrivalMs;
		if (delay === undefined) return;
		const process = async () => {
			try {
				await route(surface, ctx);
			} catch (error) {
				deps.log(`internal error on late ${ctx.method} ${ctx.path}: ${String(error)}`);
			}
		};
		// At 0 the service has acted before the client hears of the fault: no race with its look-up.
		if (delay === 0) return process();
		void clock.sleep(delay, deps.signal).then(process, () => undefined);
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
		// Read once: a late arrival and the request log see the same text as the route.
		const readText = async () => (body ??= await readBody(req));
		const ctx: RequestContext = {
			req,
			res,
			method,
			path,
			query,
			async readJson() {
				const text = await readText();
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
			if (faulted) ctx.scripted = faults.takeScripted();
			const before = faulted ? faultBefore(faults, ctx.scripted) : undefined;
			if (before) {
				fault = before;
				// The edge has taken the whole request before it fails, as real ones do.
				await readText().catch(() => undefined);
				if (surface === 'management' && EDGE_FAULTS.has(before)) await arriveLate(surface, ctx);
				const reply = faultReply(before, path, faults);
				if (!reply) {
					// drop closes the connection; hang leaves it open until the client gives up.
					if (before === 'drop') res.destroy();
					record(method, path, query, 0, surface, before, body);
					return;
				}
				result = reply;
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
			record(method, path, query, res.statusCode, surface, ctx.fault, body);
			return;
		}
		if (res.headersSent || res.destroyed) return;
		const after = faulted && !fault ? faultAfter(faults, ctx.scripted, result) : undefined;
		if (after) {
			sendSpoiled(res, result, after);
			record(method, path, query, result.status, surface, after, body);
			return;
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
