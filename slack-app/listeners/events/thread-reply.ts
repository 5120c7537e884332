import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod/v4';
import { threadRepliesNotReadMessage } from '../../messages/errors';
import { COMMAND } from '../../features/command-parser';
import type { AppServices } from '../../features';

/** The request kinds whose threads take no replies; a chat thread's replies go to the model. */
const nonChatKindSchema = z.enum(['job', 'transcribe', 'image', 'queue']);

/**
 * A person's reply in a thread: the chat service answers it when the thread is a `/gpu chat`; in
 * the app's other threads the person is told, privately, what the thread accepts.
 */
export function threadReply(services: AppServices) {
	return async ({
		event,
		client,
	}: SlackEventMiddlewareArgs<'message'> & AllMiddlewareArgs): Promise<void> => {
		// Edits, joins, bot posts and top-level messages are not follow-ups.
		if (
			event.subtype !== undefined ||
			!('thread_ts' in event) ||
			!event.thread_ts ||
			event.thread_ts === event.ts
		)
			return;
		if (!('user' in event) || !event.user || ('bot_id' in event && event.bot_id)) return;
		const handled = await services.chat.followUp({
			channel: event.channel,
			threadTs: event.thread_ts,
			ts: event.ts,
			user: event.user,
			text: event.text ?? '',
		});
		const kind = nonChatKindSchema.safeParse(handled?.otherRequest);
		if (!kind.success) return;
		const message = threadRepliesNotReadMessage(COMMAND, kind.data);
		await client.chat.postEphemeral({
			channel: event.channel,
			user: event.user,
			thread_ts: event.thread_ts,
			text: message.text,
			blocks: message.blocks,
		});
	};
}
