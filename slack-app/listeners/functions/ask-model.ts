import { z } from 'zod/v4';
import type { AppServices } from '../../features';
import { describeError } from '../../slack/errors';
import { stepContextShape, stepListener } from './step-inputs';

/** The step's inputs, as manifest.yaml declares them (`functions.ask_model`). */
const inputsSchema = z.object({
	question: z.string().trim().min(1),
	...stepContextShape,
});

/**
 * Workflow Builder's "Ask a model" step: one question to the workspace's chat model, its answer as
 * the step's output. An answer takes seconds, so the step completes from here; one cut short by a
 * restart is failed by Slack's own timeout, and the workflow can be run again.
 */
export function askModelStep(services: AppServices) {
	return stepListener(
		inputsSchema,
		async ({ question, channel_id: channel, user_id: user }, { complete, fail }) => {
			try {
				// The app's access rules apply as to a /gpu chat in that channel.
				const reply = await services.chat.answerForStep({ user, channel }, question);
				if ('refused' in reply) await fail({ error: reply.refused });
				else await complete({ outputs: { answer: reply.answer } });
			} catch (error) {
				await fail({ error: `The model could not answer: ${describeError(error)}` });
			}
		},
	);
}
