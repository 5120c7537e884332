import { z } from 'zod/v4';
import { NAME_PATTERN, textToImageInputSchema, uuidSchema } from '../../shared/schemas';
import { SLACK_LIMITS } from './format';

/**
 * Action ids and the values buttons carry. A button value comes back from Slack as a string the
 * user's client could have altered, so it is parsed like any other input.
 */

export const ACTIONS = {
	cancel: 'gpu.cancel',
	showInput: 'gpu.show_input',
	regenerateImage: 'gpu.regenerate_image',
	regenerateChat: 'gpu.regenerate_chat',
	endpointsPage: 'gpu.endpoints_page',
	/** Cancel on the Home tab, which has no channel or message of its own. */
	homeCancel: 'gpu.home_cancel',
	/** The 👍 / 👎 feedback buttons under a chat answer. */
	feedback: 'gpu.feedback',
	/** The endpoint picker of the job form: choosing one rebuilds the form with its fields. */
	jobFormEndpoint: 'gpu.job_form_endpoint',
} as const;

export const VIEWS = { jobModal: 'gpu.job_modal', askModal: 'gpu.ask_modal' } as const;

/** Callback ids of the shortcuts declared in manifest.yaml. */
export const SHORTCUTS = {
	runJob: 'gpu.run_job',
	askAboutMessage: 'gpu.ask_about_message',
	transcribeFile: 'gpu.transcribe_file',
} as const;

export const jobRefSchema = z.strictObject({
	endpoint: z.string().regex(NAME_PATTERN),
	jobId: uuidSchema,
});
export type JobRef = z.infer<typeof jobRefSchema>;

export const MAX_IMAGES_PER_REQUEST = 4;
const COUNT_RULE = `must be a whole number from 1 to ${MAX_IMAGES_PER_REQUEST}`;

/**
 * What `/gpu image` asks for: the parser produces it, and the same schema checks it again when it
 * comes back in a Regenerate or Show input button, or from the state file.
 */
export const imageRequestSchema = textToImageInputSchema
	.pick({ prompt: true, width: true, height: true, seed: true })
	.extend({
		count: z
			.number({ error: COUNT_RULE })
			.int({ error: COUNT_RULE })
			.min(1, { error: COUNT_RULE })
			.max(MAX_IMAGES_PER_REQUEST, { error: COUNT_RULE }),
	});
export type ImageRequest = z.infer<typeof imageRequestSchema>;

export const endpointsPageValueSchema = z.strictObject({
	page: z.number().int().min(1),
	search: z.string().max(200).optional(),
});
export type EndpointsPageValue = z.infer<typeof endpointsPageValueSchema>;

export function encodeValue(value: object): string | undefined {
	const text = JSON.stringify(value);
	// A value over Slack's limit would make the whole message fail; callers drop the button instead.
	return text.length <= SLACK_LIMITS.buttonValue ? text : undefined;
}

export type ValueReading<T> = { ok: true; value: T } | { ok: false; problem: string };

/** A button value checked with its schema, or what is wrong with it (the field and the rule). */
export function readValue<T extends z.ZodType>(
	schema: T,
	value: string | undefined,
): ValueReading<z.output<T>> {
	let json: unknown;
	try {
		json = JSON.parse(value ?? '');
	} catch {
		return { ok: false, problem: 'The button carries no readable value.' };
	}
	const result = schema.safeParse(json);
	if (result.success) return { ok: true, value: result.data };
	const issue = result.error.issues[0];
	return {
		ok: false,
		problem: `The button's ${issue?.path.join('.') || 'value'} ${issue?.message ?? 'is not valid'}.`,
	};
}

export function decodeValue<T extends z.ZodType>(
	schema: T,
	value: string | undefined,
): z.output<T> | undefined {
	const reading = readValue(schema, value);
	return reading.ok ? reading.value : undefined;
}
