import type { INodeProperties } from 'n8n-workflow';
import { z } from 'zod/v4';
import { MAX_STOP_SEQUENCES, chatRequestSchema, type ChatRequest } from '../../../../shared';
import { check } from '../../helpers/parameters';

/**
 * The generation options both chat nodes offer (Message a Model and the GPU Cloud Chat Model),
 * described once and checked once, by the request fields' own rules under the names users see.
 */
export const samplingOptions: INodeProperties[] = [
	{
		displayName: 'Frequency Penalty',
		name: 'frequencyPenalty',
		type: 'number',
		typeOptions: { minValue: -2, maxValue: 2, numberPrecision: 2 },
		default: 0,
		description: 'Positive values make the model repeat itself less (-2 to 2)',
	},
	{
		displayName: 'Maximum Number of Tokens',
		name: 'maxTokens',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 512,
		description: 'The longest reply to generate, in tokens',
	},
	{
		displayName: 'Presence Penalty',
		name: 'presencePenalty',
		type: 'number',
		typeOptions: { minValue: -2, maxValue: 2, numberPrecision: 2 },
		default: 0,
		description: 'Positive values make the model move on to new topics (-2 to 2)',
	},
	{
		displayName: 'Sampling Temperature',
		name: 'temperature',
		type: 'number',
		typeOptions: { minValue: 0, maxValue: 2, numberPrecision: 2 },
		default: 0.7,
		description: 'Higher values give more varied replies (0-2)',
	},
	{
		displayName: 'Stop Sequences',
		name: 'stop',
		type: 'string',
		typeOptions: { multipleValues: true, multipleValueButtonText: 'Add Stop Sequence' },
		default: [],
		description: `The reply ends before the first of these texts (up to ${MAX_STOP_SEQUENCES})`,
	},
	{
		displayName: 'Top P',
		name: 'topP',
		type: 'number',
		typeOptions: { minValue: 0, maxValue: 1, numberPrecision: 2 },
		default: 1,
		description:
			'Sample only from the most likely tokens whose probabilities add up to this (above 0, at most 1)',
	},
];

/**
 * The Response Format option of both chat nodes, described in each node's words. JSON Matching a
 * Schema is offered only where the node asks for the schema (`jsonSchema`).
 */
export function responseFormatOption(descriptions: {
	text: string;
	jsonObject: string;
	jsonSchema?: string;
}): INodeProperties {
	return {
		displayName: 'Response Format',
		name: 'responseFormat',
		type: 'options',
		options: [
			{ name: 'Text', value: 'text', description: descriptions.text },
			{ name: 'JSON Object', value: 'json_object', description: descriptions.jsonObject },
			...(descriptions.jsonSchema === undefined
				? []
				: [
						{
							name: 'JSON Matching a Schema',
							value: 'json_schema',
							description: descriptions.jsonSchema,
						},
					]),
		],
		default: 'text',
	};
}

export type Sampling = Pick<
	ChatRequest,
	'max_tokens' | 'temperature' | 'top_p' | 'frequency_penalty' | 'presence_penalty'
> & { stop?: string[] };

const fields = chatRequestSchema.shape;
const stopListSchema = z.array(z.string({ error: 'must be text' }), {
	error: 'must be a list of texts',
});

/** The options of `samplingOptions` the user set, checked, as request fields. */
export function readSampling(options: Record<string, unknown>): Sampling {
	const sampling: Sampling = {};
	const number = (
		schema: z.ZodType<number | null | undefined>,
		value: unknown,
		displayName: string,
	) => (value === undefined ? undefined : (check(schema, value, displayName) ?? undefined));
	sampling.max_tokens = number(fields.max_tokens, options.maxTokens, 'Maximum Number of Tokens');
	sampling.temperature = number(fields.temperature, options.temperature, 'Sampling Temperature');
	sampling.top_p = number(fields.top_p, options.topP, 'Top P');
	sampling.frequency_penalty = number(
		fields.frequency_penalty,
		options.frequencyPenalty,
		'Frequency Penalty',
	);
	sampling.presence_penalty = number(
		fields.presence_penalty,
		options.presencePenalty,
		'Presence Penalty',
	);
	const stop = check(stopListSchema, options.stop ?? [], 'Stop Sequences').filter(
		(sequence) => sequence.length > 0,
	);
	if (stop.length > 0) {
		check(fields.stop, stop, 'Stop Sequences');
		sampling.stop = stop;
	}
	return Object.fromEntries(Object.entries(sampling).filter(([, value]) => value !== undefined));
}
