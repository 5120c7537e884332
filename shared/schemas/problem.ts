import { z } from 'zod/v4';

/** RFC 7807 problem details, as the management API sends for every error. */
export const problemDetailsSchema = z.looseObject({
	type: z.string().min(1).optional(),
	title: z.string().min(1).optional(),
	status: z.number().int().optional(),
	detail: z.string().min(1).optional(),
	instance: z.string().min(1).optional(),
});
export type ProblemDetails = z.infer<typeof problemDetailsSchema>;
