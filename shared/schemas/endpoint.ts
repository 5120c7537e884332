import { z } from 'zod/v4';
import { LIMITS, pageSchema, resourceNameSchema, uuidSchema } from './common';

const singleLine = (max: number, min = 1) =>
	z
		.string()
		.min(min)
		.max(max)
		.refine((value) => !/[\r\n]/.test(value), { error: 'must be a single line' });

/** A catalogue item, with the bounds the real API's published schema demands. */
export const inferenceEndpointSchema = z.looseObject({
	id: uuidSchema,
	name: resourceNameSchema,
	organization_name: resourceNameSchema,
	display_name: z
		.string()
		.min(2)
		.max(LIMITS.displayNameMaxLength)
		.regex(/^[ ,\-.0-9A-Za-z]+$/, {
			error: 'must be letters, digits, spaces, commas, hyphens or dots',
		}),
	description: singleLine(LIMITS.endpointDescriptionMaxLength, 0),
	readme: singleLine(LIMITS.endpointLongTextMaxLength),
	price_description: singleLine(LIMITS.endpointPriceDescriptionMaxLength),
	icon_url: singleLine(LIMITS.endpointIconUrlMaxLength),
	input_schema: singleLine(LIMITS.endpointLongTextMaxLength),
	output_schema: singleLine(LIMITS.endpointLongTextMaxLength),
});
export type InferenceEndpoint = z.infer<typeof inferenceEndpointSchema>;

export const inferenceEndpointPageSchema = pageSchema(inferenceEndpointSchema);
export type InferenceEndpointPage = z.infer<typeof inferenceEndpointPageSchema>;

export const webhookSecretKeySchema = z.looseObject({
	secret_key: z
		.string()
		.min(1)
		.regex(/^(whsec_)?[A-Za-z0-9+/]+={0,2}$/, { error: 'must be base64' }),
});
