import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod/v4';
import type { AppServices } from '../../features';

const stoppedSchema = z.looseObject({
	channel: z.string().min(1),
	thread_ts: z.string().regex(/^\d+\.\d+$/),
	user: z.string().min(1),
});

/** Slack's stop button on a request's thread: stop the work there. */
export function agentSessionStopped(services: AppServices) {
	return async ({
		event,
		client,
	}: SlackEventMiddlewareArgs<'agent_session_stopped'> & AllMiddlewareArgs): Promise<void> => {
		const stopped = stoppedSchema.safeParse(event);
		if (!stopped.success) return;
		const { channel, thread_ts: threadTs, user } = stopped.data;
		const reply = await services.conversations.stopped({ channel, threadTs, user });
		if (reply)
			await client.chat.postEphemeral({
				channel,
				user,
				thread_ts: threadTs,
				text: reply.text,
				blocks: reply.blocks,
			});
	};
}
