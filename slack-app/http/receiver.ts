import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
	defaultBodyLimit,
	HTTPModuleFunctions as http,
	HTTPResponseAck,
	type App,
	type Logger,
	type Receiver,
} from '@slack/bolt';
import type { Clock } from '../../shared/clock';
import { Claims, eventIds } from '../state/event-claims';
import { ClaimedWithin } from '../state/local-state';
import { isRecord, readBodyWithin } from './http-body';
import { newRequestId, withLogContext } from '../slack/log';
import { errorSummary } from '../slack/errors';

/** Slack's own rule: a request more than 5 minutes from now either way is refused. */
const MAX_REQUEST_SKEW_SECONDS = 300;
/** A signature is remembered for Slack's window either way; a replay of an older one is stale anyway. */
const SIGNATURE_MEMORY_MS = 2 * MAX_REQUEST_SKEW_SECONDS * 1000;

/** POST routes (Slack's, the job webhook) and GET routes (health), served on the app's port. */
export interface Routes {
	/**
	 * Other POST routes served on the same port (the job webhook); they check their own signatures.
	 * A path ending in `/*` serves every path one segment below it (the handler reads the segment).
	 */
	routes?: Record<string, (req: IncomingMessage, res: ServerResponse) => void>;
	/** GET routes on the same port (health and readiness); still served while draining. */
	getRoutes?: Record<string, (req: IncomingMessage, res: ServerResponse) => void>;
}

export interface AckFirstReceiverOptions extends Routes {
	signingSecret: string;
	clock: Clock;
	/** Where Slack's requests arrive. */
	path?: string;
	/**
	 * True the first time `key` is claimed within `ttlMs` (a request's signature, an event's id), by
	 * this process or any replica (SharedState.claimOnce). The receiver waits for it at most
	 * SHARED_STATE_WAIT_MS, then answers 503 so that Slack sends the request again.
	 */
	claimOnce: (key: string, ttlMs: number) => Promise<boolean>;
	/** Runs Bolt's processing of a request already acknowledged, behind requests not yet read. */
	afterAck: (what: string, task: () => Promise<void>) => void;
	/** Told of each Slack request answered 2xx: its kind, workspace and seconds since it arrived (metrics). */
	onAck?: (kind: string, team: string, seconds: number) => void;
}

/**
 * Bolt's HTTP receiver, with one change: requests whose acknowledgement never carries a body here
 * (slash commands, button clicks, Events API events) are answered as soon as their signature is
 * checked, and Bolt's processing follows later. Bolt's middleware chain costs about a millisecond
 * a request, which a burst of commands would otherwise queue in front of every ack (Slack gives up
 * after 3 s). Listeners of these requests reply with `respond()` or the Web API, never in `ack()`.
 * Slash commands and clicks are answered before their signature is claimed in Redis (Slack never
 * sends them again, so nothing may wait in front of their ack); events are claimed first, since a
 * 503 while Redis is unreachable makes Slack send them again. Modal submissions and everything else keep Bolt's own ack, whose body Slack reads.
 */
export class AckFirstReceiver implements Receiver {
	private app?: App;
	private server?: Server;
	/** Where Slack's requests arrive. */
	readonly path: string;
	private readonly claims: Claims;
	/** Signatures this process accepted, which decide alone when Redis does not answer in time. */
	private readonly signaturesHere = new ClaimedWithin(SIGNATURE_MEMORY_MS);
	/** Slack's path among the other POST routes. */
	private readonly routes: Routes;
	private draining = false;

	constructor(private readonly options: AckFirstReceiverOptions) {
		this.path = options.path ?? '/slack/events';
		this.claims = new Claims({ ...options, logger: () => this.logger });
		this.routes = {
			getRoutes: options.getRoutes,
			routes: { ...options.routes, [this.path]: this.receiveSlack },
		};
	}

	init(app: App): void {
		this.app = app;
	}

	/** Called by Bolt's `app.start({ port, host })`. */
	async start({ port, host }: { port: number; host: string }): Promise<Server> {
		const server = createServer((req, res) => this.route(req, res));
		await listen(server, port, host);
		this.server = server;
		return server;
	}

	/**
	 * Shutdown, first step: every new POST is answered 503 (Slack shows the user an error at once
	 * instead of a silent timeout; a refused webhook's job is found again by the next start), health
	 * routes still answer.
	 */
	refuseNewRequests(): void {
		this.draining = true;
	}

	async stop(): Promise<void> {
		const server = this.server;
		this.server = undefined;
		await closeServer(server);
	}

	/** Bolt initialises the receiver in App's constructor, before any request can arrive. */
	private get initialisedApp(): App {
		if (!this.app) throw new Error('The receiver was started before Bolt initialised it.');
		return this.app;
	}

	private get logger(): Logger {
		return this.initialisedApp.logger;
	}

	private route(req: IncomingMessage, res: ServerResponse): void {
		serveRoutes(req, res, this.routes, this.draining);
	}

	private readonly receiveSlack = (req: IncomingMessage, res: ServerResponse): void =>
		void this.receive(req, res);

	/** As Bolt's HTTPReceiver, except for the ack of requests acknowledged on arrival. */
	private async receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
		const arrived = performance.now();
		const rawBody = await readBodyWithin(req, defaultBodyLimit).catch(() => undefined);
		if (!rawBody) {
			this.logger.warn(
				`Refused a request to ${this.path} that was unreadable or over ${defaultBodyLimit} bytes.`,
			);
			return http.buildNoBodyResponse(res, 413);
		}
		const request = Object.assign(req, { rawBody });
		let body: unknown;
		try {
			body = http.parseHTTPRequestBody(request);
		} catch (error) {
			body = error;
		}
		// Slack's SSL check is unsigned; it is answered and never processed.
		if (
			isRecord(body) &&
			body.ssl_check === '1' &&
			req.headers['content-type'] === 'application/x-www-form-urlencoded'
		)
			return http.buildSSLCheckResponse(res);
		const refusal = this.signatureProblem(req, rawBody);
		if (refusal) {
			this.logger.warn(`Refused a request to ${this.path}: ${refusal}`);
			return http.buildNoBodyResponse(res, 401);
		}
		if (body instanceof Error) {
			this.logger.warn(`Malformed request body: ${body.message}`);
			return http.buildNoBodyResponse(res, 400);
		}
		if (!isRecord(body)) return http.buildNoBodyResponse(res, 400);
		const record = body;
		res.once('finish', () => {
			if (res.statusCode < 300)
				this.options.onAck?.(kindOf(record), teamOf(record), (performance.now() - arrived) / 1000);
		});
		// Someone replaying a captured request within Slack's window sends the same signature; Slack's
		// own retries carry a new timestamp and signature (they are recognised by their event id below).
		const signatureKey = `slack-signature:${req.headers['x-slack-signature'] as string}`;
		const retryNum = http.extractRetryNumFromHTTPRequest(req);
		const event = {
			body,
			retryNum,
			retryReason: http.extractRetryReasonFromHTTPRequest(req),
			customProperties: {},
		};
		const processAcknowledged = () =>
			this.initialisedApp.processEvent({ ...event, ack: this.alreadyAcknowledged(body) });
		const dispatchAcknowledged = () => this.options.afterAck(describe(body), processAcknowledged);
		// A command or a click Slack never sends again: it is acknowledged before anything that can
		// wait (Redis), and its signature is claimed behind the acks, with the rest of its work.
		if (body.type !== 'event_callback' && acknowledgedOnArrival(body)) {
			http.buildNoBodyResponse(res, 200);
			this.options.afterAck(describe(body), async () => {
				if (!(await this.firstSignature(signatureKey))) return;
				this.logger.info(`${describe(body)} received${who(body)}`);
				await processAcknowledged();
			});
			return;
		}
		let replayed: boolean;
		try {
			replayed = !(await this.claims.first(signatureKey, SIGNATURE_MEMORY_MS));
		} catch (error) {
			return this.refuseForNow(res, error);
		}
		if (replayed) {
			this.logReplay();
			return http.buildNoBodyResponse(res, 200);
		}
		if (body.type === 'url_verification') return http.buildUrlVerificationResponse(res, body);
		if (body.type === 'event_callback') {
			const ids = eventIds(body);
			if (typeof ids === 'string') {
				this.logger.warn(`Refused an event_callback to ${this.path}: ${ids}.`);
				return http.buildNoBodyResponse(res, 400);
			}
			let first: boolean;
			try {
				first = await this.claims.claimEvent(ids, retryNum, dispatchAcknowledged);
			} catch (error) {
				return this.refuseForNow(res, error);
			}
			if (!first) return http.buildNoBodyResponse(res, 200);
		}
		this.logger.info(`${describe(body)} received${who(body)}`);
		if (acknowledgedOnArrival(body)) {
			http.buildNoBodyResponse(res, 200);
			dispatchAcknowledged();
			return;
		}
		const app = this.initialisedApp;
		const ack = new HTTPResponseAck({
			logger: app.logger,
			processBeforeResponse: false,
			httpRequest: request,
			httpRequestBody: body,
			httpResponse: res,
		});
		try {
			await app.processEvent({ ...event, ack: ack.bind() });
		} catch (error) {
			// As Bolt's default: a failure before the ack is a 500 for Slack; after it, only a log line.
			app.logger.error(`${describe(body)} failed: ${errorSummary(error)}`);
			if (!res.headersSent) http.buildNoBodyResponse(res, 500);
		}
	}

	/**
	 * True when a request acknowledged already is the first with its signature. When Redis does not
	 * answer in time this process's own memory of signatures decides (the request was acknowledged and
	 * Slack will not send it again, so refusing it would lose it): a replay sent to another replica
	 * while Redis is unreachable is then not recognised.
	 */
	private async firstSignature(key: string): Promise<boolean> {
		let first = this.signaturesHere.claim(key, this.options.clock.now());
		try {
			if (first) first = await this.claims.first(key, SIGNATURE_MEMORY_MS);
		} catch (error) {
			this.logger.warn(
				`Checked a request's signature against this replica's memory only: ${errorSummary(error)}`,
			);
		}
		if (!first) this.logReplay();
		return first;
	}

	private logReplay(): void {
		this.logger.warn(
			`Ignored a replayed request to ${this.path}: its signature was accepted before.`,
		);
	}

	private refuseForNow(res: ServerResponse, error: unknown): void {
		this.logger.warn(`Refused a request to ${this.path} for now: ${errorSummary(error)}`);
		http.buildNoBodyResponse(res, 503);
	}

	/** A listener that passes a body to ack() here has a bug: Slack has had its answer already. */
	private alreadyAcknowledged(body: Record<string, unknown>) {
		return async (response?: unknown): Promise<void> => {
			if (response !== undefined && response !== '')
				this.logger.error(
					`${describe(body)} was acknowledged on arrival; a reply passed to ack() is not shown. Use respond().`,
				);
		};
	}

	/**
	 * Slack's signature: v0= and the hex HMAC-SHA256 of `v0:<timestamp>:<body>`, within 5 minutes
	 * either way (Bolt refuses only old timestamps; a future one would widen the replay window).
	 * Checked here rather than by Bolt's verifier, which compares by two more HMACs: a burst's acks
	 * wait on every request's check.
	 */
	private signatureProblem(req: IncomingMessage, rawBody: Buffer): string | undefined {
		const timestamp = req.headers['x-slack-request-timestamp'];
		const signature = req.headers['x-slack-signature'];
		if (typeof timestamp !== 'string' || !/^\d+$/.test(timestamp))
			return 'the timestamp header is missing or not a number';
		if (Math.abs(this.options.clock.now() / 1000 - Number(timestamp)) > MAX_REQUEST_SKEW_SECONDS)
			return 'the timestamp is more than 5 minutes from now';
		if (typeof signature !== 'string' || !/^v0=[0-9a-f]{64}$/.test(signature))
			return 'the signature header is missing or not a v0 signature';
		const expected = createHmac('sha256', this.options.signingSecret)
			.update(`v0:${timestamp}:`)
			.update(rawBody)
			.digest();
		return timingSafeEqual(expected, Buffer.from(signature.slice(3), 'hex'))
			? undefined
			: 'the signature does not match';
	}
}

/** Requests whose ack Slack reads no body from in this app (Bolt acks events on arrival too). */
function acknowledgedOnArrival(body: Record<string, unknown>): boolean {
	if (typeof body.command === 'string') return true;
	if (body.type === 'block_actions') return true;
	return (
		body.type === 'event_callback' &&
		!(isRecord(body.event) && body.event.type === 'function_executed')
	);
}

/** Who sent a request and from where, for the log (Slack ids only, never text the user typed). */
export function who(body: Record<string, unknown>): string {
	const id = (value: unknown) =>
		typeof value === 'string' && /^[A-Z0-9]+$/.test(value) ? value : undefined;
	const nested = (key: string) =>
		isRecord(body[key]) ? id((body[key] as Record<string, unknown>).id) : undefined;
	const user = id(body.user_id) ?? nested('user');
	const channel = id(body.channel_id) ?? nested('channel');
	return `${user ? ` from ${user}` : ''}${channel ? ` in ${channel}` : ''}`;
}

/** The slash command (`/gpu`), else the payload type (`event_callback`, `block_actions`...). */
export function kindOf(body: Record<string, unknown>): string {
	return typeof body.command === 'string' ? body.command : String(body.type);
}

/** The workspace a request comes from: `team_id` of commands and events, `team.id` of payloads. */
export function teamOf(body: Record<string, unknown>): string {
	if (typeof body.team_id === 'string') return body.team_id;
	return isRecord(body.team) && typeof body.team.id === 'string' ? body.team.id : '';
}

function describe(body: Record<string, unknown>): string {
	if (typeof body.command === 'string') return `${body.command} command`;
	return `${String(body.type)} request`;
}

/**
 * The app's HTTP routes: GET routes always (health answers while draining), POST routes (each
 * request with its own log id) unless draining, when they are answered 503; else 404.
 */
export function serveRoutes(
	req: IncomingMessage,
	res: ServerResponse,
	{ routes, getRoutes }: Routes,
	draining: boolean,
): void {
	const path = new URL(req.url ?? '/', 'http://localhost').pathname;
	if (req.method === 'GET' && getRoutes?.[path]) return getRoutes[path](req, res);
	// A GET route ending in `/*` serves every path below it (the shared files' links).
	const below =
		req.method === 'GET' || req.method === 'HEAD'
			? Object.keys(getRoutes ?? {}).find(
					(route) => route.endsWith('/*') && path.startsWith(route.slice(0, -1)),
				)
			: undefined;
	if (below && getRoutes) return getRoutes[below](req, res);
	const handler =
		req.method === 'POST'
			? (routes?.[path] ?? routes?.[`${path.slice(0, path.lastIndexOf('/'))}/*`])
			: undefined;
	// Every line logged for this request, and for the work it starts, carries its id.
	if (handler && !draining)
		return withLogContext({ request: newRequestId() }, () => handler(req, res));
	req.resume();
	if (!handler) return http.buildNoBodyResponse(res, 404);
	res.setHeader('connection', 'close');
	http.buildNoBodyResponse(res, 503);
}

/**
 * Connections waiting to be accepted: a burst of Slack requests arrives as a burst of new
 * connections from the load balancer, and past this queue the kernel drops each further attempt
 * until the client's retry a second later, a third of the 3 s Slack waits for an ack. Node's default
 * is 511; the kernel caps it at net.core.somaxconn (4096 by default).
 */
const ACCEPT_QUEUE = 4096;
/**
 * How long an idle connection stays open: longer than a load balancer keeps its idle connections to
 * the app (nginx's upstream keepalive and AWS's load balancers: 60 s), so that the balancer, not the
 * app, closes them. Node's default, 5 s, closed them under requests the balancer was sending, which
 * it answers 502 without sending a POST again. The header timer must outlast it.
 */
const IDLE_CONNECTION_MS = 65_000;

/** Listens on the port (either receiver's own, or the health port while Slack is awaited). */
export async function listen(server: Server, port: number, host: string): Promise<void> {
	server.keepAliveTimeout = IDLE_CONNECTION_MS;
	server.headersTimeout = IDLE_CONNECTION_MS + 1000;
	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen({ port, host, backlog: ACCEPT_QUEUE }, () => {
			server.off('error', reject);
			resolve();
		});
	});
}

/** Stops listening, closing idle keep-alive connections at once (either receiver's own port). */
export async function closeServer(server: Server | undefined): Promise<void> {
	if (!server) return;
	server.closeIdleConnections();
	await new Promise<void>((resolve, reject) =>
		server.close((error) => (error ? reject(error) : resolve())),
	);
}
