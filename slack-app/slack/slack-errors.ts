import { noticeMessage } from '../messages/errors';
import type { SlackMessage } from '../model';
import { slackErrorCode } from './errors';

/** What to tell the asker when the app cannot post its parent message in their channel. */
export function cannotPostMessage(error: unknown): SlackMessage | undefined {
	const code = slackErrorCode(error);
	if (code === 'not_in_channel' || code === 'channel_not_found') {
		return noticeMessage(
			'I cannot post in this channel. Invite me with /invite @GPU Cloud (or use me in a channel I am in) and try again.',
		);
	}
	if (code === 'is_archived')
		return noticeMessage('This channel is archived, so I cannot post in it.');
	return undefined;
}
