import { z } from 'zod/v4';

/** Where a step's work shows and whose it is: the inputs every step of the app takes. */
export const stepContextShape = {
	channel_id: z.string().regex(/^[CGD][0-9A-Z]{2,}$/),
	user_id: z.string().regex(/^[UW][0-9A-Z]{2,}$/),
};

/**
 * A step's inputs read by `schema`; when they do not fit, `fail` tells Workflow Builder which
 * fields to fix, and undefined comes back.
 */
export async function stepInputs<T extends z.ZodType>(
	schema: T,
	inputs: unknown,
	fail: (args: { error: string }) => Promise<unknown>,
): Promise<z.infer<T> | undefined> {
	const parsed = schema.safeParse(inputs);
	if (parsed.success) return parsed.data;
	const fields = [...new Set(parsed.error.issues.map((issue) => issue.path.join('.')))];
	await fail({ error: `The step's inputs are not usable: check ${fields.join(', ')}.` });
	return undefined;
}
