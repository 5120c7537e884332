import type { AllMiddlewareArgs, MessageShortcut, SlackShortcutMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod/v4';
import type { AppServices } from '../../features';
import { noticeMessage } from '../../messages/errors';
import { ephemeral } from '../ephemeral';

/** The files a message carries, as the shortcut's payload shows them. */
const messageFilesSchema = z.object({
	ts: z.string(),
	thread_ts: z.string().optional(),
	files: z
		.array(z.looseObject({ id: z.string().min(1), mimetype: z.string().optional() }))
		.default([]),
});

/**
 * The message shortcut "Transcribe with GPU Cloud": the message's audio or video file (its first,
 * when it has several: a job reads one file) is transcribed in the message's thread; the reply only
 * the person sees says why not when it cannot be.
 */
export function transcribeFileShortcut(services: AppServices) {
	return async ({
		ack,
		shortcut,
		respond,
	}: SlackShortcutMiddlewareArgs<MessageShortcut> & AllMiddlewareArgs): Promise<void> => {
		await ack();
		const parsed = messageFilesSchema.safeParse(shortcut.message);
		const message = parsed.success ? parsed.data : undefined;
		const files = message?.files ?? [];
		const file =
			files.find((candidate) => /^(audio|video)\//.test(candidate.mimetype ?? '')) ?? files[0];
		const channel = shortcut.channel.id;
		const reply =
			message && file
				? await services.files.transcribe({ user: shortcut.user.id, channel }, file.id, {
						// The file's thread: its own, or the one it was shared in.
						thread: { channel, threadTs: message.thread_ts ?? message.ts },
					})
				: noticeMessage(
						'This message has no file. Use the shortcut on a message that carries an audio or video file.',
					);
		if (reply) await respond(ephemeral(reply));
	};
}
