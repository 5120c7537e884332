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
import type { Clock } from '../shared/clock';
import { isRecord, readBodyWithin } from './http-body';
import { newRequestId, withLogContext } from './log';
import { errorSummary } from './services/errors';

/** Slack's own rule: a request more than 5 minutes from now either way is refused. */
const MAX_REQUEST_SKEW_SECONDS = 300;
/** Signatures remembered at most (a replay of an older one is refused as stale anyway). */
const MAX_REMEMBERED_SIGNATURES = 100_000;

export interface AckFirstReceiverOptions {
	signingSecret: string;
	clock: Clock;
	/** Where Slack's requests arrive. */
	path?: string;
	/**
	 * Other POST routes served on the same port (the job webhook); they check their own signatures.
	 * A path ending in `/*` serves every path one segment below it (the handler reads the segment).
	 */
	routes?: Record<string, (req: IncomingMessage, res: ServerResponse) => void>;
	/** GET routes on the same port (health and readiness); still served while draining. */
	getRoutes?: Record<string, (req: IncomingMessage, res: ServerResponse) => void>;
	/**
	 * Several replicas: true the first time any of them accepts this signature within `ttlMs`;
	 * rejects when that cannot be known now (the request is answered 503, and Slack retries).
	 * Default: this process's memory.
	 */
	firstAccepted?: (signature: string, ttlMs: number) => Promise<boolean>;
	/** Runs Bolt's processing of a request already acknowledged, behind requests not yet read. */
	afterAck: (what: string, task: () => Promise<void>) => void;
}

/**
 * Bolt's HTTP receiver, with one change: requests whose acknowledgement never carries a body here
 * (slash commands, button clicks, Events API events) are answered as soon as their signature is
 * checked, and Bolt's processing follows later. Bolt's middleware chain costs about a millisecond
 * a request, which a burst of commands would otherwise queue in front of every ack (Slack gives up
 * after 3 s). Listeners of these requests reply with `respond()` or the Web API, never in `ack()`.
 * Modal submissions and everything else keep Bolt's own ack, whose body Slack reads.
 */
export class AckFirstReceiver implements Receiver {
	private app?: App;
	private server?: Server;
	private readonly path: string;
	/** Signatures accepted in the last 10 minutes (the window either way), with when each may be forgotten. */
	private readonly accepted = new Map<string, number>();
	private draining = false;

	constructor(private readonly options: AckFirstReceiverOptions) {
		this.path = options.path ?? '/slack/events';
	}

	init(app: App): void {
		this.app = app;
	}

	/** Called by Bolt's `app.start({ port, host })`. */
	async start({ port, host }: { port: number; host: string }): Promise<Server> {
		const server = createServer((req, res) => this.route(req, res));
		await new Promise<void>((resolve, reject) => {
			server.once('error', reject);
			server.listen(port, host, () => {
				server.off('error', reject);
				resolve();
			});
		});
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
		if (!server) return;
		server.closeIdleConnections();
		await new Promise<void>((resolve, reject) =>
			server.close((error) => (error ? reject(error) : resolve())),
		);
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
		const path = new URL(req.url ?? '/', 'http://localhost').pathname;
		if (req.method === 'GET' && this.options.getRoutes?.[path])
			return this.options.getRoutes[path](req, res);
		const handler =
			req.method !== 'POST'
				? undefined
				: path === this.path
					? this.receiveSlack
					: (this.options.routes?.[path] ??
						this.options.routes?.[`${path.slice(0, path.lastIndexOf('/'))}/*`]);
		// Every line logged for this request, and for the work it starts, carries its id.
		if (handler && !this.draining)
			return withLogContext({ request: newRequestId() }, () => handler(req, res));
		req.resume();
		if (!handler) return http.buildNoBodyResponse(res, 404);
		res.setHeader('connection', 'close');
		http.buildNoBodyResponse(res, 503);
	}

	private readonly receiveSlack = (req: IncomingMessage, res: ServerResponse): void =>
		void this.receive(req, res);

	/** As Bolt's HTTPReceiver, except for the ack of requests acknowledged on arrival. */
	private async receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
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
		let replayed: boolean;
		try {
			replayed = await this.replayed(req.headers['x-slack-signature'] as string);
		} catch (error) {
			this.logger.warn(`Refused a request to ${this.path} for now: ${errorSummary(error)}`);
			return http.buildNoBodyResponse(res, 503);
		}
		if (replayed) {
			this.logger.warn(
				`Ignored a replayed request to ${this.path}: its signature was accepted before.`,
			);
			return http.buildNoBodyResponse(res, 200);
		}
		if (body instanceof Error) {
			this.logger.warn(`Malformed request body: ${body.message}`);
			return http.buildNoBodyResponse(res, 400);
		}
		if (!isRecord(body)) return http.buildNoBodyResponse(res, 400);
		if (body.type === 'url_verification') return http.buildUrlVerificationResponse(res, body);

		this.logger.info(`${describe(body)} received${who(body)}`);
		const event = {
			body,
			retryNum: http.extractRetryNumFromHTTPRequest(req),
			retryReason: http.extractRetryReasonFromHTTPRequest(req),
			customProperties: {},
		};
		if (acknowledgedOnArrival(body)) {
			http.buildNoBodyResponse(res, 200);
			this.options.afterAck(describe(body), () =>
				this.initialisedApp.processEvent({ ...event, ack: this.alreadyAcknowledged(body) }),
			);
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
	 * True when this signature (so this body and timestamp) was accepted before: someone replays a
	 * captured request within Slack's window. Slack's own retries carry a new timestamp and signature.
	 */
	private async replayed(signature: string): Promise<boolean> {
		const windowMs = 2 * MAX_REQUEST_SKEW_SECONDS * 1000;
		if (this.options.firstAccepted) return !(await this.options.firstAccepted(signature, windowMs));
		const now = this.options.clock.now();
		for (const [seen, forgetAt] of this.accepted) {
			if (forgetAt > now && this.accepted.size < MAX_REMEMBERED_SIGNATURES) break;
			this.accepted.delete(seen);
		}
		if (this.accepted.has(signature)) return true;
		this.accepted.set(signature, now + windowMs);
		return false;
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
function who(body: Record<string, unknown>): string {
	const id = (value: unknown) =>
		typeof value === 'string' && /^[A-Z0-9]+$/.test(value) ? value : undefined;
	const nested = (key: string) =>
		isRecord(body[key]) ? id((body[key] as Record<string, unknown>).id) : undefined;
	const user = id(body.user_id) ?? nested('user');
	const channel = id(body.channel_id) ?? nested('channel');
	return `${user ? ` from ${user}` : ''}${channel ? ` in ${channel}` : ''}`;
}

function describe(body: Record<string, unknown>): string {
	if (typeof body.command === 'string') return `${body.command} command`;
	return `${String(body.type)} request`;
}
