import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod/v4';
import type { AppServices } from '../../features';

const startedSchema = z.looseObject({
	assistant_thread: z.looseObject({
		user_id: z.string().min(1),
		channel_id: z.string().min(1),
		thread_ts: z.string().regex(/^\d+\.\d+$/),
	}),
});

/** An app created before agent messaging: the person opened a new assistant thread; greet them and suggest prompts. */
export function assistantThreadStarted(services: AppServices) {
	return async ({
		event,
	}: SlackEventMiddlewareArgs<'assistant_thread_started'> & AllMiddlewareArgs): Promise<void> => {
		const started = startedSchema.safeParse(event);
		if (!started.success) return;
		const { channel_id: channel, thread_ts: threadTs } = started.data.assistant_thread;
		await services.conversations.started({ channel, threadTs });
	};
}
