import type { Logger, webApi } from '@slack/bolt';
import type { ThreadRef } from '../model';
import { errorSummary } from './errors';

type WebClient = webApi.WebClient;

/** Where a session goes when its work ends: `active` takes more (a chat), `closed` is done. */
export type SettledStatus = 'active' | 'closed';

/**
 * Slack's agent sessions (https://docs.slack.dev/ai/agent-sessions): each request thread the app
 * works in is a session, `processing` while the work runs (Slack then shows its stop button) and
 * `active` or `closed` after. Best effort: a session is how Slack shows the work, not the work, so a
 * workspace whose app was created before agent messaging (no sessions there) loses nothing but the
 * button.
 */
export class AgentSessions {
	constructor(
		private readonly client: WebClient,
		private readonly logger: Logger,
	) {}

	/** The work began; the title counts when this call creates the session. */
	processing(thread: ThreadRef, title?: string): Promise<void> {
		return this.set(thread, 'processing', title);
	}

	settle(thread: ThreadRef, status: SettledStatus): Promise<void> {
		return this.set(thread, status);
	}

	private async set(
		thread: ThreadRef,
		status: 'processing' | SettledStatus,
		title?: string,
	): Promise<void> {
		try {
			await this.client.agents.sessions.setStatus({
				channel_id: thread.channel,
				thread_ts: thread.threadTs,
				status,
				...(title ? { title } : {}),
			});
		} catch (error) {
			this.logger.debug(`Agent session not set to ${status}: ${errorSummary(error)}`);
		}
	}
}
