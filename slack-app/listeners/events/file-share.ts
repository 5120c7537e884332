import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod/v4';
import type { AppServices } from '../../features';

/** A message sharing files (https://docs.slack.dev/reference/events/message/file_share). */
const fileShareSchema = z.object({
	subtype: z.literal('file_share'),
	channel: z.string(),
	channel_type: z.string().optional(),
	user: z.string(),
	ts: z.string(),
	thread_ts: z.string().optional(),
	text: z.string().default(''),
	files: z.array(z.looseObject({ id: z.string().min(1), mimetype: z.string().optional() })).min(1),
});

/**
 * A slash command carries no files, so a file is sent to `/gpu transcribe` the way Slack allows:
 * shared in a message whose text asks for it ("transcribe", "/gpu transcribe", or the app
 * mentioned first), in a direct message with the app or in a thread the app is in.
 */
export const TRANSCRIBE_REQUEST = /^\s*(?:<@[A-Z0-9]+>\s*)?(?:\/gpu\s+)?transcribe\b/i;

/** A file shared with the words that ask for its transcription: transcribed in that thread. */
export function fileShare(services: AppServices) {
	return async ({
		event,
		client,
	}: SlackEventMiddlewareArgs<'message'> & AllMiddlewareArgs): Promise<void> => {
		const parsed = fileShareSchema.safeParse(event);
		if (!parsed.success) return;
		const message = parsed.data;
		const inThread = message.thread_ts !== undefined && message.thread_ts !== message.ts;
		if (!TRANSCRIBE_REQUEST.test(message.text)) return;
		if (message.channel_type !== 'im' && !inThread) return;
		const threadTs = message.thread_ts ?? message.ts;
		const file =
			message.files.find((candidate) => /^(audio|video)\//.test(candidate.mimetype ?? '')) ??
			message.files[0];
		const reply = await services.files.transcribe(
			{ user: message.user, channel: message.channel },
			file.id,
			{ thread: { channel: message.channel, threadTs } },
		);
		if (reply)
			await client.chat.postEphemeral({
				channel: message.channel,
				user: message.user,
				thread_ts: threadTs,
				text: reply.text,
				blocks: reply.blocks,
			});
	};
}
