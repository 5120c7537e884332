import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { AppReply } from './app-link';
import { BOT } from './workspace';

/**
 * Socket Mode as Slack speaks it (https://docs.slack.dev/apis/events-api/using-socket-mode): the
 * app asks `apps.connections.open` for a WebSocket URL with its app-level token, connects, gets a
 * `hello`, then receives every event, command and interaction as an envelope it acknowledges by
 * `envelope_id`. Slack refreshes connections with a `disconnect` message, and sends an Events API
 * envelope nobody acknowledged again, with `retry_attempt` and `retry_reason`.
 */

const USING_SOCKET_MODE = 'https://docs.slack.dev/apis/events-api/using-socket-mode';
const CONNECTIONS_OPEN = 'https://docs.slack.dev/reference/methods/apps.connections.open';

/** Slack waits 3 s for an acknowledgement, as for an HTTP request (USING_SOCKET_MODE). */
export const ACK_TIMEOUT_MS = 3000;
/** An app may hold at most 10 connections at once; the 11th is told `too_many_websockets` (USING_SOCKET_MODE). */
export const MAX_CONNECTIONS = 10;
/**
 * Events API retries: at once, after a minute, after five
 * (https://docs.slack.dev/apis/events-api/#retries). Shorter in tests.
 */
const RETRY_DELAYS_MS = [0, 60_000, 300_000];
/** A URL from apps.connections.open is a one-time ticket, good for a short while (CONNECTIONS_OPEN). */
const TICKET_LIFETIME_MS = 30_000;
/** Slack pings each connection; clients drop a connection that stops hearing them. */
const PING_INTERVAL_MS = 10_000;

export type EnvelopeType = 'events_api' | 'slash_commands' | 'interactive';
export type DisconnectReason = 'warning' | 'refresh_requested' | 'link_disabled';

/** One delivery of an envelope: what was sent, on which connection, and whether the app acknowledged it. */
export interface SentEnvelope {
	envelopeId: string;
	type: EnvelopeType;
	/** Slack's `event_id` for Events API envelopes. */
	eventId?: string;
	retryAttempt: number;
	retryReason?: string;
	connection: number;
	acked: boolean;
}

export interface SocketModeOptions {
	appToken: string;
	/** The scopes the app-level token was created with (default `connections:write`). */
	appTokenScopes?: string[];
	/** The stand-in's HTTP origin (`http://127.0.0.1:<port>`); WebSocket URLs are on it. */
	origin: () => string;
	ackTimeoutMs?: number;
	retryDelaysMs?: number[];
	pingIntervalMs?: number;
}

interface Pending {
	envelopeId: string;
	type: EnvelopeType;
	payload: Record<string, unknown>;
	acceptsResponsePayload: boolean;
	/** 0 on the first delivery; Slack counts retries of Events API envelopes only. */
	attempt: number;
	retryReason?: string;
	connection?: Connection;
	/** No connection was open when it was due: the next one to open takes it. */
	waiting?: boolean;
	timer?: NodeJS.Timeout;
	/** Answers the first delivery's caller (the page, a test): at its ack, or at Slack's timeout. */
	settle: (reply: AppReply) => void;
}

interface Connection {
	id: number;
	socket: WebSocket;
	ping: NodeJS.Timeout;
}

export interface ConnectionsOpenReply {
	status: number;
	body: Record<string, unknown>;
}

export class SocketModeServer {
	/** Every call of apps.connections.open, with the error it got if refused. */
	readonly opens: { error?: string }[] = [];
	readonly sent: SentEnvelope[] = [];
	/** Acknowledgements that named no envelope waiting for one (ignored, as Slack does). */
	readonly strayAcks: string[] = [];
	/** The envelope ids whose acknowledgement `loseAcks` dropped. */
	readonly lostAcks: string[] = [];
	private readonly wss = new WebSocketServer({ noServer: true });
	private readonly tickets = new Map<string, number>();
	private readonly connections = new Set<Connection>();
	private readonly pending = new Map<string, Pending>();
	private nextConnection = 1;
	private acksToLose = 0;
	private readonly waiters = new Set<() => void>();

	constructor(private readonly options: SocketModeOptions) {}

	private get ackTimeoutMs(): number {
		return this.options.ackTimeoutMs ?? ACK_TIMEOUT_MS;
	}

	get openConnections(): number {
		return this.connections.size;
	}

	/**
	 * `apps.connections.open`: only the app-level token, and only in the Authorization header
	 * (CONNECTIONS_OPEN: "passing it as a POST parameter will result in an error"); a bot or user
	 * token is `not_allowed_token_type` (https://docs.slack.dev/authentication/tokens); an app-level
	 * token without `connections:write`, the scope CONNECTIONS_OPEN requires, is `missing_scope`
	 * with what was needed and what it has.
	 */
	connectionsOpen(
		authorization: string | undefined,
		params: Record<string, string>,
	): ConnectionsOpenReply {
		const bearer = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
		const error = !bearer
			? params.token
				? 'invalid_auth'
				: 'not_authed'
			: !bearer.startsWith('xapp-')
				? /^xox[bpe]-/.test(bearer)
					? 'not_allowed_token_type'
					: 'invalid_auth'
				: bearer !== this.options.appToken
					? 'invalid_auth'
					: undefined;
		const scopes = this.options.appTokenScopes ?? ['connections:write'];
		if (!error && !scopes.includes('connections:write')) {
			this.opens.push({ error: 'missing_scope' });
			return {
				status: 200,
				body: {
					ok: false,
					error: 'missing_scope',
					needed: 'connections:write',
					provided: scopes.join(','),
				},
			};
		}
		this.opens.push(error ? { error } : {});
		if (error) return { status: 200, body: { ok: false, error } };
		const ticket = randomUUID();
		this.tickets.set(ticket, Date.now() + TICKET_LIFETIME_MS);
		const origin = this.options.origin().replace(/^http/, 'ws');
		return {
			status: 200,
			body: { ok: true, url: `${origin}/link/?ticket=${ticket}&app_id=${BOT.appId}` },
		};
	}

	/** The HTTP server's `upgrade`: a ticket from apps.connections.open, used once, or the handshake is refused. */
	upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
		const url = new URL(req.url ?? '/', 'http://127.0.0.1');
		const ticket = url.searchParams.get('ticket') ?? '';
		const expiry = this.tickets.get(ticket);
		this.tickets.delete(ticket);
		if (url.pathname !== '/link/' || expiry === undefined || expiry < Date.now()) {
			socket.end('HTTP/1.1 401 Unauthorized\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
			return;
		}
		this.wss.handleUpgrade(req, socket, head, (ws) => this.connected(ws));
	}

	/** Resolves once `count` connections are open (the app started, or reconnected). */
	waitForConnections(count = 1, timeoutMs = 15_000): Promise<void> {
		return new Promise((resolve, reject) => {
			const check = () => {
				if (this.connections.size < count) return;
				clearTimeout(timer);
				this.waiters.delete(check);
				resolve();
			};
			const timer = setTimeout(() => {
				this.waiters.delete(check);
				reject(
					new Error(
						`Timed out after ${timeoutMs} ms waiting for ${count} Socket Mode connection(s).`,
					),
				);
			}, timeoutMs);
			this.waiters.add(check);
			check();
		});
	}

	/** The next `times` acknowledgements never reach Slack (a network fault): their envelopes are sent again. */
	loseAcks(times = 1): void {
		this.acksToLose += times;
	}

	/**
	 * Slack's `disconnect` message to every open connection (USING_SOCKET_MODE: `warning` a few
	 * seconds before a refresh, `refresh_requested` when it is due, `link_disabled` when Socket Mode
	 * was turned off). The client closes and opens a new connection; envelopes still unacknowledged
	 * are delivered again there.
	 */
	disconnect(reason: DisconnectReason): void {
		for (const connection of this.connections)
			send(connection.socket, { type: 'disconnect', reason, debug_info: { host: 'standin' } });
	}

	/** Every connection dropped without a word (a network cut). */
	dropConnections(): void {
		for (const connection of this.connections) connection.socket.terminate();
	}

	/**
	 * Delivers a payload as Slack would: on an open connection (or the next one to open), answered
	 * by the app's acknowledgement; its payload, when the type takes one, is the reply's body. No
	 * acknowledgement within ACK_TIMEOUT_MS answers status 404 (the person sees `operation_timeout`,
	 * as with an HTTP app that did not answer), and an Events API envelope is sent again.
	 */
	deliver(type: EnvelopeType, payload: Record<string, unknown>): Promise<AppReply> {
		return new Promise((resolve) => {
			// The person hears back within Slack's 3 s, whatever happens to the envelope after.
			const answerBy = setTimeout(() => settle({ status: 404, body: '' }), this.ackTimeoutMs);
			let settled = false;
			const settle = (reply: AppReply) => {
				if (settled) return;
				settled = true;
				clearTimeout(answerBy);
				resolve(reply);
			};
			const envelope: Pending = {
				envelopeId: randomUUID(),
				type,
				payload,
				acceptsResponsePayload: acceptsResponsePayload(type, payload),
				attempt: 0,
				settle,
			};
			this.pending.set(envelope.envelopeId, envelope);
			this.send(envelope);
		});
	}

	close(): void {
		for (const envelope of this.pending.values()) clearTimeout(envelope.timer);
		this.pending.clear();
		for (const connection of this.connections) connection.socket.terminate();
		this.wss.close();
	}

	private connected(socket: WebSocket): void {
		const connection: Connection = {
			id: this.nextConnection++,
			socket,
			ping: setInterval(() => socket.ping(), this.options.pingIntervalMs ?? PING_INTERVAL_MS),
		};
		if (this.connections.size >= MAX_CONNECTIONS) {
			send(socket, {
				type: 'disconnect',
				reason: 'too_many_websockets',
				debug_info: { host: 'standin' },
			});
			clearInterval(connection.ping);
			socket.close();
			return;
		}
		this.connections.add(connection);
		socket.on('message', (data, isBinary) => this.received(connection, data, isBinary));
		socket.on('close', () => this.closed(connection));
		socket.on('error', () => socket.terminate());
		send(socket, {
			type: 'hello',
			num_connections: this.connections.size,
			debug_info: { host: 'standin', build_number: 1, approximate_connection_time: 18060 },
			connection_info: { app_id: BOT.appId },
		});
		for (const waiter of [...this.waiters]) waiter();
		// Envelopes that found no connection, or lost theirs, go out on this one.
		for (const envelope of this.pending.values()) if (envelope.waiting) this.send(envelope);
	}

	private closed(connection: Connection): void {
		clearInterval(connection.ping);
		this.connections.delete(connection);
		for (const envelope of this.pending.values()) {
			if (envelope.connection !== connection) continue;
			envelope.connection = undefined;
			// An event is sent again on another connection; a command or click is not (its timer
			// still answers the person with a timeout).
			if (envelope.type === 'events_api') this.retry(envelope, 'connection_closed', 0);
			else this.pending.delete(envelope.envelopeId);
		}
	}

	/** An acknowledgement: `{ envelope_id, payload? }` for an envelope sent on this connection. */
	private received(connection: Connection, data: RawData, isBinary: boolean): void {
		if (isBinary) return;
		let message: unknown;
		try {
			message = JSON.parse(rawText(data));
		} catch {
			return;
		}
		const envelopeId = isObject(message) ? message.envelope_id : undefined;
		const envelope = typeof envelopeId === 'string' ? this.pending.get(envelopeId) : undefined;
		if (!envelope || envelope.connection !== connection) {
			this.strayAcks.push(String(envelopeId));
			return;
		}
		if (this.acksToLose > 0) {
			this.acksToLose--;
			this.lostAcks.push(envelope.envelopeId);
			return;
		}
		clearTimeout(envelope.timer);
		this.pending.delete(envelope.envelopeId);
		// The delivery acknowledged is the latest of this envelope.
		const record = [...this.sent].reverse().find((sent) => sent.envelopeId === envelope.envelopeId);
		if (record) record.acked = true;
		const payload = isObject(message) && isObject(message.payload) ? message.payload : {};
		// A payload on an envelope that takes none is not shown (USING_SOCKET_MODE: accepts_response_payload).
		const body =
			envelope.acceptsResponsePayload && Object.keys(payload).length > 0
				? JSON.stringify(payload)
				: '';
		envelope.settle?.({ status: 200, body });
	}

	private send(envelope: Pending): void {
		const connection = this.pick();
		clearTimeout(envelope.timer);
		// An event waits for a connection to open; a command or a click is answered like one
		// nobody acknowledged.
		if (connection || envelope.type !== 'events_api')
			envelope.timer = setTimeout(() => this.timedOut(envelope), this.ackTimeoutMs);
		envelope.waiting = !connection;
		if (!connection) return;
		envelope.connection = connection;
		const retried = envelope.type === 'events_api';
		send(connection.socket, {
			envelope_id: envelope.envelopeId,
			type: envelope.type,
			payload: envelope.payload,
			accepts_response_payload: envelope.acceptsResponsePayload,
			...(retried
				? { retry_attempt: envelope.attempt, retry_reason: envelope.retryReason ?? '' }
				: {}),
		});
		this.sent.push({
			envelopeId: envelope.envelopeId,
			type: envelope.type,
			eventId:
				typeof envelope.payload.event_id === 'string' ? envelope.payload.event_id : undefined,
			retryAttempt: envelope.attempt,
			retryReason: envelope.retryReason,
			connection: connection.id,
			acked: false,
		});
	}

	/** Slack spreads envelopes over an app's connections; the newest takes them here. */
	private pick(): Connection | undefined {
		let newest: Connection | undefined;
		for (const connection of this.connections)
			if (connection.socket.readyState === connection.socket.OPEN) newest = connection;
		return newest;
	}

	private timedOut(envelope: Pending): void {
		if (envelope.type === 'events_api') this.retry(envelope, 'timeout');
		else this.pending.delete(envelope.envelopeId);
	}

	/** Events only: sent again, up to three retries, then given up (https://docs.slack.dev/apis/events-api/#retries). */
	private retry(envelope: Pending, reason: string, delayMs?: number): void {
		clearTimeout(envelope.timer);
		const delays = this.options.retryDelaysMs ?? RETRY_DELAYS_MS;
		if (envelope.attempt >= delays.length) {
			this.pending.delete(envelope.envelopeId);
			return;
		}
		const wait = delayMs ?? delays[envelope.attempt];
		envelope.attempt++;
		envelope.retryReason = reason;
		envelope.connection = undefined;
		// Its timer sends it; a connection opening meanwhile does not send it twice.
		envelope.waiting = false;
		envelope.timer = setTimeout(() => {
			if (this.pending.has(envelope.envelopeId)) this.send(envelope);
		}, wait);
	}
}

/**
 * Slash commands and view submissions take a response payload (an immediate reply, `response_action`);
 * events and other interactions do not (USING_SOCKET_MODE).
 */
function acceptsResponsePayload(type: EnvelopeType, payload: Record<string, unknown>): boolean {
	if (type === 'slash_commands') return true;
	return (
		type === 'interactive' &&
		(payload.type === 'view_submission' || payload.type === 'block_suggestion')
	);
}

function send(socket: WebSocket, message: Record<string, unknown>): void {
	if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
}

function rawText(data: RawData): string {
	if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
	return Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.from(data).toString('utf8');
}

function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export { USING_SOCKET_MODE, CONNECTIONS_OPEN };
