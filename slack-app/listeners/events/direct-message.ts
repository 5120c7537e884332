import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import type { AppServices } from '../../features';

/**
 * A message to the app in its Messages tab: in agent messaging each top-level one starts a
 * conversation in its own thread, answered below it; a reply in a thread is that conversation's
 * next turn (in an assistant container's thread too).
 */
export function directMessage(services: AppServices) {
	return async ({
		event,
		client,
	}: SlackEventMiddlewareArgs<'message'> & AllMiddlewareArgs): Promise<void> => {
		if (event.channel_type !== 'im' || event.subtype !== undefined) return;
		if (!('user' in event) || !event.user || ('bot_id' in event && event.bot_id)) return;
		if (!(event.text ?? '').trim()) return;
		const threadTs = ('thread_ts' in event && event.thread_ts) || event.ts;
		const reply = await services.conversations.message({
			channel: event.channel,
			threadTs,
			ts: event.ts,
			user: event.user,
			text: event.text ?? '',
		});
		if (reply)
			await client.chat.postEphemeral({
				channel: event.channel,
				user: event.user,
				thread_ts: threadTs,
				text: reply.text,
				blocks: reply.blocks,
			});
	};
}
