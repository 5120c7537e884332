import type { SlackMessage } from '../model';

/** Who asked, and where. */
export interface RequestContext {
	user: string;
	channel: string;
}

/**
 * What a service gives back to its listener: a message only the asker sees (a mistake, a denial, a
 * status), or nothing when the answer is in the channel.
 */
export type PrivateReply = SlackMessage | undefined;
