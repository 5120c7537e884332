import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@slack/bolt';
import { ValidationError } from '../../shared/errors';
import {
	parseJobWebhook,
	WebhookVerificationError,
	type HeaderBag,
	type WebhookVerifier,
} from '../../shared/webhooks';
import { readBodyWithin } from '../http/http-body';
import { errorSummary } from '../slack/errors';
import type { JobTracker } from './job-tracker';

/** Job payloads carry the output; transcripts can be large, but not this large. */
export const MAX_WEBHOOK_BYTES = 20 * 1024 * 1024;

export type WebhookRoute = (req: IncomingMessage, res: ServerResponse) => void;

function answer(res: ServerResponse, status: number, text: string): void {
	res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
	res.end(text);
}

export interface WebhookReceiverOptions {
	/** The organization's secret, re-read when it was rotated. */
	verifier: WebhookVerifier;
	tracker: JobTracker;
	logger: Logger;
	/** True the first time this process or any replica sees the delivery id (SharedState.claimOnce). */
	firstDelivery: (id: string) => Promise<boolean>;
}

/**
 * The app's own HTTP route for job-completion webhooks. Bolt does not check custom routes, so this
 * verifies the Standard Webhooks signature on the raw bytes itself, answers 401 to anything
 * unsigned, forged or stale (and does nothing else), and drops repeated deliveries by id.
 */
export function createWebhookHandler(options: WebhookReceiverOptions): WebhookRoute {
	const { verifier, tracker, logger, firstDelivery } = options;

	const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
		const raw = await readBodyWithin(req, MAX_WEBHOOK_BYTES).catch(() => null);
		if (raw === null) return answer(res, 400, 'unreadable body');
		if (raw === undefined) return answer(res, 413, 'body too large');
		let id: string;
		try {
			({ id } = await verifier.verify(req.headers as HeaderBag, raw));
		} catch (error) {
			if (error instanceof WebhookVerificationError) {
				logger.warn(`Refused a webhook: ${error.reason}`);
				return answer(res, 401, 'invalid signature');
			}
			throw error;
		}
		let payload;
		try {
			payload = parseJobWebhook(raw);
		} catch (error) {
			if (error instanceof ValidationError || error instanceof WebhookVerificationError) {
				logger.warn(`Refused a signed webhook with an unexpected payload: ${errorSummary(error)}`);
				return answer(res, 400, 'unexpected payload');
			}
			throw error;
		}
		let first: boolean;
		try {
			first = await firstDelivery(id);
		} catch (error) {
			// Whether another replica took it cannot be known now: the service sends it again later.
			logger.warn(`Refused a webhook for now: ${errorSummary(error)}`);
			return answer(res, 503, 'try again later');
		}
		if (!first) return answer(res, 200, 'duplicate');
		answer(res, 202, 'accepted');
		// Posting happens after the answer; if the app dies first, resume-on-start delivers the job.
		void tracker
			.complete(payload.data)
			.catch((error: unknown) =>
				logger.error(`Delivering job ${payload.data.id} failed: ${errorSummary(error)}`),
			);
	};

	return (req, res) => {
		handle(req, res).catch((error: unknown) => {
			logger.error(`The webhook route failed: ${errorSummary(error)}`);
			if (!res.headersSent) answer(res, 500, 'internal error');
		});
	};
}

/** A Slack workspace (T…) or Enterprise Grid organization (E…) id, as the app stores installations. */
const TEAM_ID = /^[TE][A-Z0-9]{2,31}$/;

export interface WorkspaceWebhookRouteOptions {
	/** The route's own path; each workspace's jobs report to `${basePath}/<team id>`. */
	basePath: string;
	/** The handler of a workspace whose GPU Cloud organization is linked; undefined for any other team. */
	handlerOf(team: string): Promise<WebhookRoute | undefined>;
	logger: Logger;
}

/**
 * Installed in several workspaces: each workspace's jobs report to a path naming it, and the
 * delivery goes to that workspace's handler (its organization's secret, its tracker). The team id
 * is taken from the path, so it is checked before anything is looked up; a path naming no linked
 * workspace is answered 404 with the body unread.
 */
export function createWorkspaceWebhookRoute(options: WorkspaceWebhookRouteOptions): WebhookRoute {
	const { basePath, handlerOf, logger } = options;
	const refuse = (req: IncomingMessage, res: ServerResponse, status: number, text: string) => {
		req.resume();
		res.setHeader('connection', 'close');
		answer(res, status, text);
	};
	return (req, res) => {
		const path = new URL(req.url ?? '/', 'http://localhost').pathname;
		const team = path.startsWith(`${basePath}/`) ? path.slice(basePath.length + 1) : '';
		if (!TEAM_ID.test(team)) return refuse(req, res, 404, 'no such workspace');
		handlerOf(team).then(
			(handler) => (handler ? handler(req, res) : refuse(req, res, 404, 'no such workspace')),
			(error: unknown) => {
				// Which workspace this is cannot be known now: the service sends it again later.
				logger.warn(`Refused a webhook for ${team} for now: ${errorSummary(error)}`);
				refuse(req, res, 503, 'try again later');
			},
		);
	};
}
