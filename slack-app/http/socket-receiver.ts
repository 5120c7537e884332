import { createServer, type Server } from 'node:http';
import type { App, Logger, Receiver, ReceiverEvent, webApi } from '@slack/bolt';
import { SocketModeClient } from '@slack/socket-mode';
import { z } from 'zod/v4';
import { Claims, eventIds } from '../state/event-claims';
import { isRecord } from './http-body';
import { newRequestId, withLogContext } from '../slack/log';
import { closeServer, kindOf, listen, serveRoutes, teamOf, who, type Routes } from './receiver';
import { errorSummary, isLastingRefusal } from '../slack/errors';
import { readWhole, slackRefusal } from '../slack/slack-client';

/**
 * Socket Mode (https://docs.slack.dev/apis/events-api/using-socket-mode): Slack's events, commands
 * and interactions arrive as envelopes over a WebSocket the app opened with its app-level token, and
 * are acknowledged by envelope id. An Events API envelope Slack heard no acknowledgement for comes
 * again (`retry_attempt`), on this connection or another replica's: it is claimed by its event id
 * first, the same claim the HTTP receiver makes, so its work starts once. The job webhook and the
 * health routes are served on the app's own port (PORT, HOST).
 */

export interface SocketReceiverOptions extends Routes {
	appToken: string;
	/** The Web API root and retry policy of the client that calls apps.connections.open. */
	clientOptions: webApi.WebClientOptions;
	logger: Logger;
	port: number;
	host: string;
	/** True the first time `key` is claimed by this process or any replica (SharedState.claimOnce). */
	claimOnce: (key: string, ttlMs: number) => Promise<boolean>;
	/** Runs Bolt's processing of an envelope, so that shutdown and tests can wait for it. */
	track: (what: string, work: Promise<void>) => void;
	/** An envelope acknowledged `seconds` after it arrived (the metrics the HTTP receiver feeds too). */
	onAck?: (kind: string, team: string, seconds: number) => void;
}

/** What @slack/socket-mode emits for each envelope (`slack_event`); checked, as everything from outside. */
const envelopeSchema = z.object({
	ack: z.custom<(response?: Record<string, unknown>) => Promise<void>>(
		(value) => typeof value === 'function',
	),
	envelope_id: z.string(),
	type: z.string(),
	body: z.record(z.string(), z.unknown()),
	retry_num: z.number().int().nonnegative().optional(),
	retry_reason: z.string().optional(),
});
type Envelope = z.infer<typeof envelopeSchema>;

export class SocketReceiver implements Receiver {
	private app?: App;
	private server?: Server;
	private readonly client: SocketModeClient;
	private readonly claims: Claims;
	private draining = false;
	/** What a refusal of the app-level token does: fails the start while it runs, then is logged. */
	private tokenRefused = (problem: Error) => this.logger.error(problem.message);

	constructor(private readonly options: SocketReceiverOptions) {
		this.client = new SocketModeClient({
			appToken: options.appToken,
			logger: withoutEnvelopes(options.logger),
			clientOptions: {
				...options.clientOptions,
				fetch: noticingTokenRefusals(options.clientOptions.fetch ?? fetch, (problem) =>
					this.tokenRefused(problem),
				),
			},
		});
		this.claims = new Claims({ ...options, logger: () => options.logger });
		this.client.on('slack_event', (args: unknown) => {
			const envelope = envelopeSchema.safeParse(args);
			if (!envelope.success) {
				options.logger.warn(`Ignored a Socket Mode message that is not an envelope.`);
				return;
			}
			const arrived = performance.now();
			options.track(
				`${envelope.data.type} envelope`,
				withLogContext({ request: newRequestId() }, () => this.receive(envelope.data, arrived)),
			);
		});
	}

	init(app: App): void {
		this.app = app;
	}

	/** Listens for the webhook and health routes, then connects to Slack (resolves on its `hello`). */
	async start(): Promise<Server> {
		const server = createServer((req, res) => serveRoutes(req, res, this.options, this.draining));
		await listen(server, this.options.port, this.options.host);
		this.server = server;
		const refused = new Promise<never>((_, reject) => (this.tokenRefused = reject));
		const connecting = this.client.start();
		// Whichever loses the race below is settled unobserved.
		connecting.catch(() => undefined);
		refused.catch(() => undefined);
		try {
			await Promise.race([connecting, refused]);
		} catch (error) {
			// The client would otherwise keep asking for a connection Slack will not give.
			await this.client.disconnect();
			await this.closeServer();
			throw error;
		} finally {
			this.tokenRefused = (problem) => this.logger.error(problem.message);
		}
		return server;
	}

	/**
	 * Shutdown, first step: envelopes are no longer acknowledged (Slack sends an event again to
	 * another connection, and shows a command's sender an error at once), webhooks are answered 503.
	 */
	refuseNewRequests(): void {
		this.draining = true;
	}

	async stop(): Promise<void> {
		await this.client.disconnect();
		await this.closeServer();
	}

	private async closeServer(): Promise<void> {
		const server = this.server;
		this.server = undefined;
		await closeServer(server);
	}

	private get logger(): Logger {
		return this.options.logger;
	}

	private async receive(envelope: Envelope, arrived: number): Promise<void> {
		const app = this.app;
		if (!app) throw new Error('The receiver was started before Bolt initialised it.');
		const { body, type } = envelope;
		if (this.draining) {
			this.logger.info(`Left a ${type} envelope unacknowledged: shutting down.`);
			return;
		}
		let acked = false;
		const ack = async (response?: unknown): Promise<void> => {
			if (acked) return;
			acked = true;
			await envelope.ack(isRecord(response) ? response : undefined);
			this.options.onAck?.(kindOf(body), teamOf(body), (performance.now() - arrived) / 1000);
		};
		const event: ReceiverEvent = {
			body,
			ack,
			retryNum: envelope.retry_num,
			retryReason: envelope.retry_reason,
			customProperties: {},
		};
		const dispatch = () => app.processEvent(event);
		if (type === 'events_api') {
			const ids = eventIds(body);
			if (typeof ids === 'string') {
				this.logger.warn(`Refused an events_api envelope: ${ids}.`);
				return ack();
			}
			let first: boolean;
			try {
				first = await this.claims.claimEvent(ids, envelope.retry_num, () =>
					this.options.track('events_api envelope', dispatch()),
				);
			} catch (error) {
				// Unacknowledged, Slack sends it again; by then Redis may answer.
				this.logger.warn(`Left an event unacknowledged for now: ${errorSummary(error)}`);
				return;
			}
			if (!first) return ack();
		}
		this.logger.info(`${describe(type, body)} received${who(body)}`);
		await dispatch();
	}
}

/**
 * @slack/socket-mode gives up on only five of Slack's refusals (invalid_auth, not_authed...): on
 * missing_scope, token_revoked or not_allowed_token_type it asks for a connection forever. This
 * notices every refusal of the token in apps.connections.open's answer.
 */
function noticingTokenRefusals(
	inner: webApi.FetchFunction,
	refused: (problem: Error) => void,
): webApi.FetchFunction {
	return async (url, init) => {
		const response = await inner(url, init);
		if (!String(url).endsWith('/apps.connections.open')) return response;
		const { text, copy } = await readWhole(response);
		const refusal = slackRefusal(text);
		if (refusal && isLastingRefusal(refusal.error))
			refused(
				new Error(
					`SLACK_APP_TOKEN: Slack refused to open a Socket Mode connection with it (${refusal.error}${refusal.needed ? `: it needs the ${refusal.needed} scope` : ''}).`,
				),
			);
		return copy;
	};
}

function describe(type: string, body: Record<string, unknown>): string {
	if (type === 'slash_commands' && typeof body.command === 'string')
		return `${body.command} command`;
	return `${String(body.type ?? type)} envelope`;
}

/**
 * Debug lines of the Socket Mode client that quote what went over the socket or into
 * apps.connections.open: whole envelopes (what people typed, Slack's verification token), acks, and
 * the connection's one-time ticket URL.
 */
const QUOTES_THE_WIRE =
	/^(Received a message on the WebSocket|Sending a WebSocket message|Calling ack\(\)|ack\(\) |http request result|apps\.connections\.open did not return)/;

/** The app's logger, without the Socket Mode client's debug lines that quote the wire. */
function withoutEnvelopes(logger: Logger): Logger {
	return {
		debug: (...parts: unknown[]) => {
			if (typeof parts[0] === 'string' && QUOTES_THE_WIRE.test(parts[0])) return;
			logger.debug(...parts);
		},
		info: (...parts: unknown[]) => logger.info(...parts),
		warn: (...parts: unknown[]) => logger.warn(...parts),
		error: (...parts: unknown[]) => logger.error(...parts),
		setLevel: (level) => logger.setLevel(level),
		getLevel: () => logger.getLevel(),
		setName: (name) => logger.setName(name),
	};
}
