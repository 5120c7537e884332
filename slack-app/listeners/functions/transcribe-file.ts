import { z } from 'zod/v4';
import type { AppServices } from '../../features';
import { plainText } from '../../features/conversation';
import { stepContextShape, stepListener } from './step-inputs';

/** The step's inputs, as manifest.yaml declares them (`functions.transcribe_file`). */
const inputsSchema = z.object({
	file_id: z.string().regex(/^F[0-9A-Z]{2,}$/),
	...stepContextShape,
});

/**
 * Workflow Builder's "Transcribe a file" step: the file (a Slack file id) is transcribed as the
 * message shortcut does it, on behalf of the person the workflow names, with its thread in the
 * chosen channel; the step completes with the transcript when the job ends (JobTracker, through
 * WorkflowSteps), however long that takes. A step that cannot start fails at once with the sentence
 * a person would have been shown (the file unseen, not media, no way to hand it over...).
 */
export function transcribeFileStep(services: AppServices) {
	return stepListener(
		inputsSchema,
		async ({ file_id: file, channel_id: channel, user_id: user }, { event, fail }) => {
			const refused = await services.files.transcribe({ user, channel }, file, {
				step: event.function_execution_id,
			});
			if (refused) await fail({ error: plainText(refused.text) });
		},
	);
}
