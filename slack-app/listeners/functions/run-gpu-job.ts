import { z } from 'zod/v4';
import type { AppServices } from '../../features';
import { plainText } from '../../features/conversation';
import { stepContextShape, stepListener } from './step-inputs';

/** The step's inputs, as manifest.yaml declares them (`functions.run_gpu_job`). */
const inputsSchema = z.object({
	endpoint: z.string().trim().min(1),
	input: z.string().min(1),
	...stepContextShape,
});

/**
 * Workflow Builder's "Run a GPU job" step: the job runs as `/gpu job` would, on behalf of the
 * person the workflow names, with its thread in the chosen channel; the step completes when the
 * job ends (JobTracker, through WorkflowSteps), however long that takes. A step that cannot start
 * fails at once with the sentence a person would have been shown.
 */
export function runGpuJobStep(services: AppServices) {
	return stepListener(
		inputsSchema,
		async ({ endpoint, input, channel_id: channel, user_id: user }, { event, fail }) => {
			let value: unknown;
			try {
				value = JSON.parse(input);
			} catch (error) {
				await fail({
					error: `The step's Input must be JSON: ${error instanceof Error ? error.message : 'it does not parse'}.`,
				});
				return;
			}
			const refused = await services.jobs.run({ user, channel }, endpoint, value, {
				step: event.function_execution_id,
			});
			if (refused) await fail({ error: plainText(refused.text) });
		},
	);
}
