import { z } from 'zod/v4';
import type { AppServices } from '../../features';
import { imageRequestSchema } from '../../messages/actions';
import { describeError } from '../../slack/errors';
import { stepContextShape, stepListener } from './step-inputs';

/** The step's inputs, as manifest.yaml declares them (`functions.generate_image`). */
const inputsSchema = z.object({
	prompt: z.string().trim().min(1),
	width: z.number().optional(),
	height: z.number().optional(),
	seed: z.number().optional(),
	...stepContextShape,
});

/** The image settings' rules, as `/gpu image` says them (sizes in pixels, a whole seed). */
const settingsSchema = imageRequestSchema.omit({ count: true });

/**
 * Workflow Builder's "Generate an image" step: one image from a prompt, shared in the workflow's
 * channel, its file the step's output for later steps (send it, attach it). An image takes seconds,
 * so the step completes from here; one cut short by a restart is failed by Slack's own timeout, and
 * the workflow can be run again.
 */
export function generateImageStep(services: AppServices) {
	return stepListener(
		inputsSchema,
		async ({ channel_id: channel, user_id: user, ...settings }, { complete, fail }) => {
			const request = settingsSchema.safeParse(settings);
			if (!request.success) {
				const [issue] = request.error.issues;
				await fail({ error: `The step's ${issue.path.join('.')} ${issue.message}.` });
				return;
			}
			try {
				const made = await services.images.generateForStep({ user, channel }, request.data);
				if ('refused' in made) await fail({ error: made.refused });
				else await complete({ outputs: { image: made.fileId, seed: made.seed } });
			} catch (error) {
				await fail({ error: `The image could not be generated: ${describeError(error)}` });
			}
		},
	);
}
