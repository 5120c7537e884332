import type { AllMiddlewareArgs, BlockAction, SlackActionMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod/v4';
import { feedbackThanks } from '../../messages/chat';
import type { AppServices } from '../../features';
import { ephemeral } from '../ephemeral';

/** The clicked feedback button, as Slack sends a `feedback_buttons` action. */
const feedbackActionSchema = z.looseObject({
	type: z.literal('feedback_buttons'),
	value: z.enum(['good', 'bad']),
});
/** Which answer: ids and a timestamp only, so nothing else from the payload reaches the log. */
const answerSchema = z.object({
	channel: z.string().regex(/^[A-Z0-9]{1,40}$/),
	ts: z.string().regex(/^\d{1,12}\.\d{1,9}$/),
});

/**
 * 👍 / 👎 under a chat answer: logged (one line per vote: who, which answer, the verdict) for
 * whoever runs the app, and thanked privately.
 */
export function answerFeedback(services: AppServices) {
	return async ({
		ack,
		body,
		action,
		respond,
	}: SlackActionMiddlewareArgs<BlockAction> & AllMiddlewareArgs): Promise<void> => {
		await ack();
		const vote = feedbackActionSchema.safeParse(action);
		if (!vote.success) return;
		const answer = answerSchema.safeParse({
			channel: body.channel?.id ?? body.container?.channel_id,
			ts: body.message?.ts ?? body.container?.message_ts,
		});
		const where = answer.success
			? `${answer.data.channel}/${answer.data.ts}`
			: 'an unreadable answer';
		services.logger.info(`Chat feedback: ${vote.data.value} on ${where}`);
		await respond(ephemeral(feedbackThanks(vote.data.value)));
	};
}
