import type { RespondArguments } from '@slack/bolt';
import type { SlackMessage } from '../model';

/** A reply only the person who acted sees, sent through the request's response_url. */
export function ephemeral(message: SlackMessage): RespondArguments {
	return {
		response_type: 'ephemeral',
		replace_original: false,
		text: message.text,
		blocks: message.blocks,
	};
}
