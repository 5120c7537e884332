import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod/v4';
import type { AppServices } from '../../features';
import { plainText } from '../../features/conversation';

/** The step's inputs, as manifest.yaml declares them (`functions.run_gpu_job`). */
const inputsSchema = z.object({
	endpoint: z.string().trim().min(1),
	input: z.string().min(1),
	channel_id: z.string().regex(/^[CGD][0-9A-Z]{2,}$/),
	user_id: z.string().regex(/^[UW][0-9A-Z]{2,}$/),
});

/**
 * Workflow Builder's "Run a GPU job" step: the job runs as `/gpu job` would, on behalf of the
 * person the workflow names, with its thread in the chosen channel; the step completes when the
 * job ends (JobTracker, through WorkflowSteps), however long that takes. A step that cannot start
 * fails at once with the sentence a person would have been shown.
 */
export function runGpuJobStep(services: AppServices) {
	return async ({
		event,
		fail,
	}: SlackEventMiddlewareArgs<'function_executed'> & AllMiddlewareArgs): Promise<void> => {
		const parsed = inputsSchema.safeParse(event.inputs);
		if (!parsed.success) {
			const fields = [...new Set(parsed.error.issues.map((issue) => issue.path.join('.')))];
			await fail({ error: `The step's inputs are not usable: check ${fields.join(', ')}.` });
			return;
		}
		const { endpoint, input, channel_id: channel, user_id: user } = parsed.data;
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
	};
}
