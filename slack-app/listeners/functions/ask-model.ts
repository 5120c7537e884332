import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod/v4';
import type { AppServices } from '../../features';
import { describeError } from '../../slack/errors';

/** The step's inputs, as manifest.yaml declares them (`functions.ask_model`). */
const inputsSchema = z.object({
	question: z.string().trim().min(1),
	channel_id: z.string().regex(/^[CGD][0-9A-Z]{2,}$/),
	user_id: z.string().regex(/^[UW][0-9A-Z]{2,}$/),
});

/**
 * Workflow Builder's "Ask a model" step: one question to the workspace's chat model, its answer as
 * the step's output. An answer takes seconds, so the step completes from here; one cut short by a
 * restart is failed by Slack's own timeout, and the workflow can be run again.
 */
export function askModelStep(services: AppServices) {
	return async ({
		event,
		complete,
		fail,
	}: SlackEventMiddlewareArgs<'function_executed'> & AllMiddlewareArgs): Promise<void> => {
		const parsed = inputsSchema.safeParse(event.inputs);
		if (!parsed.success) {
			const fields = [...new Set(parsed.error.issues.map((issue) => issue.path.join('.')))];
			await fail({ error: `The step's inputs are not usable: check ${fields.join(', ')}.` });
			return;
		}
		const { question, channel_id: channel, user_id: user } = parsed.data;
		try {
			// The app's access rules apply as to a /gpu chat in that channel.
			const reply = await services.chat.answerForStep({ user, channel }, question);
			if ('refused' in reply) await fail({ error: reply.refused });
			else await complete({ outputs: { answer: reply.answer } });
		} catch (error) {
			await fail({ error: `The model could not answer: ${describeError(error)}` });
		}
	};
}
