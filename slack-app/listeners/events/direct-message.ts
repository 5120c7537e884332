import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import type { AppServices } from '../../features';
import { plainText } from '../../features/conversation';

/**
 * A message to the app in a direct message (its Messages tab): a chat, as `/gpu chat` would start
 * it there. Replies in the answer's thread continue it (the thread-reply listener).
 */
export function directMessage(services: AppServices) {
	return async ({
		event,
		client,
	}: SlackEventMiddlewareArgs<'message'> & AllMiddlewareArgs): Promise<void> => {
		if (event.channel_type !== 'im' || event.subtype !== undefined) return;
		if ('thread_ts' in event && event.thread_ts && event.thread_ts !== event.ts) return;
		if (!('user' in event) || !event.user || ('bot_id' in event && event.bot_id)) return;
		// Slack's escapes and mention markup, as plain words for the model.
		const text = plainText(event.text ?? '').trim();
		if (!text) return;
		const reply = await services.chat.ask({ user: event.user, channel: event.channel }, text);
		if (reply)
			await client.chat.postEphemeral({
				channel: event.channel,
				user: event.user,
				text: reply.text,
				blocks: reply.blocks,
			});
	};
}
