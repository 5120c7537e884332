import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod/v4';

/** Where a step's work shows and whose it is: the inputs every step of the app takes. */
export const stepContextShape = {
	channel_id: z.string().regex(/^[CGD][0-9A-Z]{2,}$/),
	user_id: z.string().regex(/^[UW][0-9A-Z]{2,}$/),
};

/** What Bolt hands a step's listener (`app.function`): the event, `complete` and `fail`. */
export type StepArgs = SlackEventMiddlewareArgs<'function_executed'> & AllMiddlewareArgs;

/**
 * A step's listener: its inputs read by `schema` before `run` sees them; inputs that do not fit
 * fail the step, telling Workflow Builder which fields to fix.
 */
export function stepListener<T extends z.ZodType>(
	schema: T,
	run: (inputs: z.infer<T>, args: StepArgs) => Promise<void>,
): (args: StepArgs) => Promise<void> {
	return async (args) => {
		const parsed = schema.safeParse(args.event.inputs);
		if (parsed.success) {
			await run(parsed.data, args);
			return;
		}
		const fields = [...new Set(parsed.error.issues.map((issue) => issue.path.join('.')))];
		await args.fail({ error: `The step's inputs are not usable: check ${fields.join(', ')}.` });
	};
}
