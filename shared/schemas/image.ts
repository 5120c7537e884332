import { z } from 'zod/v4';
import { LIMITS, webhookUrlSchema } from './common';

/** An input may be a literal or a link `[sourceNodeId, outputIndex]` to another node's output. */
export const graphNodeSchema = z.looseObject({
	inputs: z.record(z.string(), z.unknown(), { error: 'must be an object of inputs' }),
	class_type: z
		.string({ error: 'must be the node type name' })
		.min(1, { error: 'must not be empty' }),
	_meta: z.looseObject({ title: z.string() }).optional(),
});

export const promptGraphSchema = z
	.record(z.string(), graphNodeSchema, { error: 'must be a JSON object mapping node ids to nodes' })
	.superRefine((graph, ctx) => {
		const nodes = Object.entries(graph);
		if (nodes.length === 0) {
			ctx.addIssue({ code: 'custom', message: 'must contain at least one node' });
			return;
		}
		if (!nodes.some(([, node]) => 'filename_prefix' in node.inputs)) {
			ctx.addIssue({
				code: 'custom',
				message: 'must contain a save-image node (a node with a "filename_prefix" input)',
			});
		}
		for (const [id, node] of nodes) {
			for (const [input, value] of Object.entries(node.inputs)) {
				if (
					Array.isArray(value) &&
					value.length === 2 &&
					typeof value[0] === 'string' &&
					typeof value[1] === 'number'
				) {
					if (!(value[0] in graph)) {
						ctx.addIssue({
							code: 'custom',
							path: [id, 'inputs', input],
							message: `links to node "${value[0]}", which is not in the graph`,
						});
					}
				}
			}
		}
	});
export type PromptGraph = z.infer<typeof promptGraphSchema>;

export const IMAGE_OUTPUT_FORMATS = ['png', 'jpeg', 'webp'] as const;
export type ImageOutputFormat = (typeof IMAGE_OUTPUT_FORMATS)[number];

export const convertOutputSchema = z.strictObject({
	format: z.enum(['jpeg', 'jpg', 'webp'], { error: 'must be "jpeg", "jpg" or "webp"' }),
	options: z
		.looseObject({
			quality: z
				.number({ error: 'must be a whole number from 1 to 100' })
				.int({ error: 'must be a whole number from 1 to 100' })
				.min(1, { error: 'must be a whole number from 1 to 100' })
				.max(100, { error: 'must be a whole number from 1 to 100' })
				.optional(),
			progressive: z.boolean({ error: 'must be true or false' }).optional(),
			lossless: z.boolean({ error: 'must be true or false' }).optional(),
		})
		.optional(),
});
export type ConvertOutput = z.infer<typeof convertOutputSchema>;

const promptIdSchema = z.string({ error: 'must be a text value' }).regex(/^[A-Za-z0-9_-]{1,128}$/, {
	error: 'must be 1-128 letters, digits, hyphens or underscores',
});

export const imagePromptRequestSchema = z.strictObject({
	prompt: promptGraphSchema,
	id: promptIdSchema.optional(),
	webhook: webhookUrlSchema.optional(),
	webhook_v2: webhookUrlSchema.optional(),
	convert_output: convertOutputSchema.optional(),
});
export type ImagePromptRequest = z.infer<typeof imagePromptRequestSchema>;

const sideSchema = z
	.number({ error: 'must be a whole number of pixels' })
	.int({ error: 'must be a whole number of pixels' })
	.min(LIMITS.imageSideMin, {
		error: `must be ${LIMITS.imageSideMin}-${LIMITS.imageSideMax} pixels`,
	})
	.max(LIMITS.imageSideMax, {
		error: `must be ${LIMITS.imageSideMin}-${LIMITS.imageSideMax} pixels`,
	});

export const textToImageInputSchema = z.strictObject({
	prompt: z.string({ error: 'must be a text value' }).trim().min(1, { error: 'must not be empty' }),
	negative_prompt: z.string({ error: 'must be a text value' }).optional(),
	width: sideSchema.optional(),
	height: sideSchema.optional(),
	seed: z
		.number({ error: 'must be a whole number' })
		.int({ error: 'must be a whole number' })
		.min(0, { error: 'must be 0 or more' })
		.max(Number.MAX_SAFE_INTEGER, { error: 'is too large' })
		.optional(),
	steps: z
		.number({ error: 'must be a whole number' })
		.int({ error: 'must be a whole number' })
		.min(1, { error: 'must be 1-150' })
		.max(150, { error: 'must be 1-150' })
		.optional(),
	cfg_scale: z
		.number({ error: 'must be a number' })
		.min(0, { error: 'must be 0-30' })
		.max(30, { error: 'must be 0-30' })
		.optional(),
	sampler_name: z.string({ error: 'must be a text value' }).optional(),
	scheduler: z.string({ error: 'must be a text value' }).optional(),
	denoise: z
		.number({ error: 'must be a number' })
		.min(0, { error: 'must be 0-1' })
		.max(1, { error: 'must be 0-1' })
		.optional(),
	guidance: z
		.number({ error: 'must be a number' })
		.min(0, { error: 'must be 0 or more' })
		.optional(),
});
export type TextToImageInput = z.infer<typeof textToImageInputSchema>;

export const WORKFLOW_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const workflowNameSchema = z
	.string({ error: 'must be a text value' })
	.regex(WORKFLOW_NAME_PATTERN, {
		error: 'must be 1-64 letters, digits, hyphens or underscores (for example "txt2img")',
	});

export const textToImageRequestSchema = z.strictObject({
	input: textToImageInputSchema,
	id: promptIdSchema.optional(),
	webhook_v2: webhookUrlSchema.optional(),
	convert_output: convertOutputSchema.optional(),
});
export type TextToImageRequest = z.infer<typeof textToImageRequestSchema>;

const base64Schema = z
	.string()
	.min(1)
	.regex(/^[A-Za-z0-9+/]+={0,2}$/, { error: 'must be base64' });

export const imageResultSchema = z.looseObject({
	id: z.string().min(1),
	images: z.array(base64Schema).min(1),
	filenames: z.array(z.string()).optional(),
	stats: z.record(z.string(), z.unknown()).optional(),
});
export type ImageResult = z.infer<typeof imageResultSchema>;

/** What a workload answers at once (202) when the images will come by webhook. */
export const imageAcceptedSchema = z.looseObject({
	id: z.string().min(1),
	status: z.literal('ok'),
});
export type ImageAccepted = z.infer<typeof imageAcceptedSchema>;

export const imageWebhookPayloadSchema = z.discriminatedUnion('type', [
	imageResultSchema.extend({ type: z.literal('prompt.complete'), timestamp: z.string() }),
	z.looseObject({
		type: z.literal('prompt.failed'),
		timestamp: z.string(),
		id: z.string(),
		error: z.unknown(),
	}),
]);
export type ImageWebhookPayload = z.infer<typeof imageWebhookPayloadSchema>;

export const legacyImageWebhookPayloadSchema = z.looseObject({
	event: z.literal('output.complete'),
	image: base64Schema,
	id: z.string(),
	filename: z.string().optional(),
});

export const workloadErrorBodySchema = z.looseObject({
	error: z.unknown(),
	location: z.string().optional(),
});
