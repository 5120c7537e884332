import type { BlockAction, ButtonAction } from '@slack/bolt';
import type { ThreadRef } from '../../model';

/** The parts of a button click the handlers use, read once from Slack's payload. */
export interface Click {
	user: string;
	channel?: string;
	value?: string;
	/** The message the button is on, and the thread it belongs to (itself when it is a parent). */
	messageTs?: string;
	thread?: ThreadRef;
}

export function readClick(body: BlockAction<ButtonAction>, action: ButtonAction): Click {
	const channel = body.channel?.id ?? body.container?.channel_id;
	const messageTs: string | undefined = body.message?.ts ?? body.container?.message_ts;
	const threadTs: string | undefined =
		body.message?.thread_ts ?? body.container?.thread_ts ?? messageTs;
	return {
		user: body.user.id,
		channel,
		value: action.value,
		messageTs,
		thread: channel && threadTs ? { channel, threadTs } : undefined,
	};
}
