import type { Logger, Receiver, webApi } from '@slack/bolt';
import type { Clock } from '../../shared/clock';
import type { Metrics } from './metrics';
import { AckFirstReceiver, type Routes } from './receiver';
import { SocketReceiver } from './socket-receiver';

/** A Bolt receiver that can stop taking new requests (the first step of a graceful shutdown). */
export interface Ingress extends Receiver {
	/** HTTP mode: the path Slack's requests are sent to; none when they come over a WebSocket. */
	readonly path?: string;
	refuseNewRequests(): void;
}

/** The app's Slack settings, as far as they choose the receiver. */
export type SlackConnection =
	| { mode: 'http'; signingSecret: string }
	| { mode: 'socket'; appToken: string; port: number; host: string };

export interface IngressOptions extends Required<Routes> {
	slack: SlackConnection;
	clock: Clock;
	logger: Logger;
	clientOptions: webApi.WebClientOptions;
	/** Where acknowledged work runs (requests/background.ts), counted for idle and drain. */
	background: {
		afterAck(what: string, task: () => Promise<void>): void;
		track(what: string, work: Promise<void>): void;
	};
	/** Claims an Events API event once across replicas (Slack redelivers). */
	claimOnce: (key: string, ttlMs: number) => Promise<boolean>;
	metrics: Metrics;
}

/**
 * How Slack's requests reach the app, the one place HTTP and Socket Mode differ: signed HTTP
 * requests acknowledged first, or envelopes from the app's WebSocket. Either way the app's own
 * routes (health, job webhooks, installs) are served on PORT, HOST.
 */
export function createIngress(options: IngressOptions): Ingress {
	const { slack, background, claimOnce, routes, getRoutes } = options;
	const onAck = (kind: string, team: string, seconds: number) =>
		options.metrics.acknowledged(kind, team, seconds);
	return slack.mode === 'http'
		? new AckFirstReceiver({
				signingSecret: slack.signingSecret,
				clock: options.clock,
				routes,
				getRoutes,
				afterAck: (what, task) => background.afterAck(what, task),
				claimOnce,
				onAck,
			})
		: new SocketReceiver({
				appToken: slack.appToken,
				clientOptions: options.clientOptions,
				logger: options.logger,
				port: slack.port,
				host: slack.host,
				routes,
				getRoutes,
				track: (what, work) => background.track(what, work),
				claimOnce,
				onAck,
			});
}
