import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import type { AppServices } from '../../features';

/** A person's message in a thread of the app's direct messages: a conversation's next turn. */
export function conversationReply(services: AppServices) {
	return async ({
		event,
		client,
	}: SlackEventMiddlewareArgs<'message'> & AllMiddlewareArgs): Promise<void> => {
		if (event.channel_type !== 'im' || event.subtype !== undefined) return;
		if (!('thread_ts' in event) || !event.thread_ts || event.thread_ts === event.ts) return;
		if (!('user' in event) || !event.user || ('bot_id' in event && event.bot_id)) return;
		const reply = await services.conversations.message({
			channel: event.channel,
			threadTs: event.thread_ts,
			ts: event.ts,
			user: event.user,
			text: event.text ?? '',
		});
		if (reply)
			await client.chat.postEphemeral({
				channel: event.channel,
				user: event.user,
				thread_ts: event.thread_ts,
				text: reply.text,
				blocks: reply.blocks,
			});
	};
}
