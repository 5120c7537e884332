import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import type { AppServices } from '../../services';

/** A person's reply in a thread: the chat service answers it when the thread is a `/gpu chat`. */
export function threadReply(services: AppServices) {
  return async ({ event }: SlackEventMiddlewareArgs<'message'> & AllMiddlewareArgs): Promise<void> => {
    // Edits, joins, bot posts and top-level messages are not follow-ups.
    if (event.subtype !== undefined || !('thread_ts' in event) || !event.thread_ts || event.thread_ts === event.ts) return;
    if (!('user' in event) || !event.user || ('bot_id' in event && event.bot_id)) return;
    await services.chat.followUp({ channel: event.channel, threadTs: event.thread_ts, ts: event.ts, user: event.user, text: event.text ?? '' });
  };
}
