import { z } from 'zod/v4';

/**
 * The OpenAI chat dialect as an OpenAI-compatible text server (text-generation-inference style)
 * accepts it. Unknown top-level fields stay refused, naming them, so typos are caught; nested
 * objects refuse unknown fields only where the dialect has none to add.
 */

export const CHAT_ROLES = ['system', 'user', 'assistant'] as const;

/** A plain text turn: what people type into the node's conversation list and what Slack threads hold. */
export const chatMessageSchema = z.strictObject({
	role: z.enum(CHAT_ROLES, {
		error: 'must be "system", "user" or "assistant"',
	}),
	content: z.string({ error: 'must be a text value' }),
});
export type ChatMessage = z.infer<typeof chatMessageSchema>;

const text = z.string({ error: 'must be a text value' });
const name = text.min(1, { error: 'must not be empty' });

export const chatTextPartSchema = z.strictObject({
	type: z.literal('text', {
		error: 'must be "text" (this server reads text only)',
	}),
	text,
});
/** Content as a string or as a list of text parts. */
const chatContentSchema = z.union(
	[
		text,
		z.array(chatTextPartSchema, {
			error: 'must be a text value or a list of text parts',
		}),
	],
	{
		error: 'must be a text value or a list of {type: "text", text} parts',
	},
);
export type ChatContent = z.infer<typeof chatContentSchema>;

/** Tool names as the dialect allows them: what a model can echo back reliably. */
const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
const toolName = text.regex(TOOL_NAME_PATTERN, {
	error: 'must be 1-64 letters, digits, "_" or "-"',
});

export const chatToolCallSchema = z.strictObject({
	id: name,
	type: z.literal('function', { error: 'must be "function"' }),
	function: z.strictObject({ name: toolName, arguments: text }),
});
export type ChatToolCall = z.infer<typeof chatToolCallSchema>;

const systemOrUser = <Role extends 'system' | 'user'>(role: Role) =>
	z.strictObject({
		role: z.literal(role),
		content: chatContentSchema,
		name: name.optional(),
	});

const assistantMessageSchema = z
	.strictObject({
		role: z.literal('assistant'),
		content: chatContentSchema.nullish(),
		name: name.optional(),
		refusal: text.nullish(),
		tool_calls: z.array(chatToolCallSchema, { error: 'must be a list of tool calls' }).optional(),
	})
	.refine((message) => message.content != null || (message.tool_calls?.length ?? 0) > 0, {
		error: 'needs content or tool_calls',
		path: ['content'],
	});

const toolMessageSchema = z.strictObject({
	role: z.literal('tool'),
	content: chatContentSchema,
	tool_call_id: name,
	name: name.optional(),
});

/** Any turn of a request: system, user, assistant (maybe with tool calls) or a tool's result. */
export const chatRequestMessageSchema = z.discriminatedUnion(
	'role',
	[systemOrUser('system'), systemOrUser('user'), assistantMessageSchema, toolMessageSchema],
	{ error: 'must be "system", "user", "assistant" or "tool"' },
);
export type ChatRequestMessage = z.infer<typeof chatRequestMessageSchema>;

/** The text of content given either way. */
export function contentText(content: ChatContent | null | undefined): string {
	if (content == null) return '';
	return typeof content === 'string' ? content : content.map((part) => part.text).join('');
}

const jsonSchemaObject = z.record(z.string(), z.unknown(), {
	error: 'must be a JSON schema object',
});

export const chatToolSchema = z.strictObject({
	type: z.literal('function', { error: 'must be "function"' }),
	function: z.strictObject({
		name: toolName,
		description: text.optional(),
		parameters: jsonSchemaObject.optional(),
		strict: z.boolean({ error: 'must be true or false' }).nullish(),
	}),
});
export type ChatTool = z.infer<typeof chatToolSchema>;

export const chatToolChoiceSchema = z.union(
	[
		z.enum(['none', 'auto', 'required']),
		z.strictObject({
			type: z.literal('function'),
			function: z.strictObject({ name: toolName }),
		}),
	],
	{
		error: 'must be "none", "auto", "required" or {type: "function", function: {name}}',
	},
);

export const chatResponseFormatSchema = z.discriminatedUnion(
	'type',
	[
		z.strictObject({ type: z.literal('text') }),
		z.strictObject({ type: z.literal('json_object') }),
		z.strictObject({
			type: z.literal('json_schema'),
			json_schema: z.strictObject({
				name: toolName,
				description: text.optional(),
				schema: jsonSchemaObject.optional(),
				strict: z.boolean({ error: 'must be true or false' }).nullish(),
			}),
		}),
	],
	{ error: 'must have type "text", "json_object" or "json_schema"' },
);

/** The server's own limit, also reported as `max_stop_sequences` on /info. */
export const MAX_STOP_SEQUENCES = 4;
const MAX_TOP_LOGPROBS = 20;
const MAX_TOOLS = 128;

const wholeNumber = z
	.number({ error: 'must be a whole number' })
	.int({ error: 'must be a whole number' });
const tokens = wholeNumber.min(1, { error: 'must be at least 1' });
const penalty = z
	.number({ error: 'must be a number' })
	.min(-2, { error: 'must be -2 to 2' })
	.max(2, { error: 'must be -2 to 2' });
const stopSequence = text.min(1, { error: 'must not be empty' });

export const chatRequestSchema = z
	.strictObject({
		model: text.min(1, { error: 'must not be empty' }).optional(),
		messages: z
			.array(chatRequestMessageSchema, { error: 'must be a list of messages' })
			.min(1, { error: 'must contain at least one message' }),
		max_tokens: tokens.nullish(),
		max_completion_tokens: tokens.nullish(),
		temperature: z
			.number({ error: 'must be a number' })
			.min(0, { error: 'must be 0-2' })
			.max(2, { error: 'must be 0-2' })
			.nullish(),
		top_p: z
			.number({ error: 'must be a number' })
			.gt(0, { error: 'must be greater than 0 and at most 1' })
			.max(1, { error: 'must be greater than 0 and at most 1' })
			.nullish(),
		frequency_penalty: penalty.nullish(),
		presence_penalty: penalty.nullish(),
		stop: z
			.union(
				[
					stopSequence,
					z.array(stopSequence).max(MAX_STOP_SEQUENCES, {
						error: `must have at most ${MAX_STOP_SEQUENCES} sequences`,
					}),
				],
				{
					error: `must be a text value or a list of up to ${MAX_STOP_SEQUENCES}`,
				},
			)
			.nullish(),
		seed: wholeNumber.min(0, { error: 'must be 0 or more' }).nullish(),
		n: tokens.nullish(),
		logprobs: z.boolean({ error: 'must be true or false' }).nullish(),
		top_logprobs: wholeNumber
			.min(0, { error: `must be 0-${MAX_TOP_LOGPROBS}` })
			.max(MAX_TOP_LOGPROBS, { error: `must be 0-${MAX_TOP_LOGPROBS}` })
			.nullish(),
		logit_bias: z
			.record(
				z.string(),
				z
					.number({ error: 'must be a number' })
					.min(-100, { error: 'must be -100 to 100' })
					.max(100, { error: 'must be -100 to 100' }),
				{
					error: 'must map token ids to numbers',
				},
			)
			.nullish(),
		user: text.nullish(),
		stream: z.boolean({ error: 'must be true or false' }).nullish(),
		stream_options: z
			.strictObject({
				include_usage: z.boolean({ error: 'must be true or false' }).optional(),
			})
			.nullish(),
		response_format: chatResponseFormatSchema.nullish(),
		tools: z
			.array(chatToolSchema, { error: 'must be a list of tools' })
			.max(MAX_TOOLS, { error: `must have at most ${MAX_TOOLS} tools` })
			.nullish(),
		tool_choice: chatToolChoiceSchema.nullish(),
		parallel_tool_calls: z.boolean({ error: 'must be true or false' }).nullish(),
	})
	.superRefine((request, ctx) => {
		const issue = (path: string, message: string) =>
			ctx.addIssue({ code: 'custom', message, path: [path] });
		if (
			request.messages.length > 0 &&
			!request.messages.some(
				(message) =>
					contentText(message.content).trim().length > 0 ||
					(message.role === 'assistant' && message.tool_calls?.length),
			)
		) {
			issue('messages', 'must contain a message with some text');
		}
		if (request.stream_options && !request.stream)
			issue('stream_options', 'is allowed only when stream is true');
		if (request.top_logprobs != null && !request.logprobs)
			issue('top_logprobs', 'needs logprobs set to true');
		const choice = request.tool_choice;
		const tools = request.tools ?? [];
		if (choice && choice !== 'none' && tools.length === 0)
			issue('tool_choice', 'needs at least one tool in tools');
		if (
			typeof choice === 'object' &&
			choice &&
			tools.length > 0 &&
			!tools.some((tool) => tool.function.name === choice.function.name)
		) {
			issue('tool_choice', `names "${choice.function.name}", which is not in tools`);
		}
		const names = tools.map((tool) => tool.function.name);
		const repeated = names.find((toolName, index) => names.indexOf(toolName) !== index);
		if (repeated) issue('tools', `has two tools named "${repeated}"`);
		const answered = new Set(
			request.messages.flatMap((message) =>
				message.role === 'assistant' ? (message.tool_calls ?? []).map((call) => call.id) : [],
			),
		);
		request.messages.forEach((message, index) => {
			if (message.role === 'tool' && !answered.has(message.tool_call_id)) {
				ctx.addIssue({
					code: 'custom',
					message: `answers tool call "${message.tool_call_id}", which no assistant message made`,
					path: ['messages', index, 'tool_call_id'],
				});
			}
		});
	});
export type ChatRequest = z.input<typeof chatRequestSchema>;

const usageSchema = z.looseObject({
	prompt_tokens: z.number().int().min(0),
	completion_tokens: z.number().int().min(0),
	total_tokens: z.number().int().min(0),
});
export type ChatUsage = z.infer<typeof usageSchema>;

const replyToolCallSchema = z.looseObject({
	id: z.string(),
	type: z.literal('function'),
	function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

export const chatCompletionSchema = z.looseObject({
	id: z.string(),
	object: z.string(),
	created: z.number().int(),
	model: z.string(),
	choices: z
		.array(
			z.looseObject({
				index: z.number().int(),
				message: z.looseObject({
					role: z.string(),
					content: z.string().nullable(),
					tool_calls: z.array(replyToolCallSchema).nullish(),
				}),
				finish_reason: z.string().nullable(),
			}),
		)
		.min(1),
	usage: usageSchema,
});
export type ChatCompletion = z.infer<typeof chatCompletionSchema>;

/** A piece of a streamed tool call: the first piece of each call names it, later ones add arguments. */
const toolCallDeltaSchema = z.looseObject({
	index: z.number().int().min(0),
	id: z.string().nullish(),
	type: z.literal('function').nullish(),
	function: z
		.looseObject({
			name: z.string().nullish(),
			arguments: z.string().nullish(),
		})
		.nullish(),
});
export type ChatToolCallDelta = z.infer<typeof toolCallDeltaSchema>;

export const chatCompletionChunkSchema = z.looseObject({
	id: z.string(),
	object: z.literal('chat.completion.chunk'),
	created: z.number().int(),
	model: z.string(),
	choices: z.array(
		z.looseObject({
			index: z.number().int(),
			delta: z.looseObject({
				role: z.string().optional(),
				content: z.string().nullable().optional(),
				tool_calls: z.array(toolCallDeltaSchema).nullish(),
			}),
			finish_reason: z.string().nullable(),
		}),
	),
	usage: usageSchema.nullable().optional(),
});
export type ChatCompletionChunk = z.infer<typeof chatCompletionChunkSchema>;

/** The text server's error body, both for non-stream replies and for `data: {"error": ...}` mid-stream. */
export const chatErrorBodySchema = z.looseObject({
	error: z.union([z.string(), z.looseObject({ message: z.string().optional() })]),
	error_type: z.string().optional(),
});

/** `GET /v1/models`: the model the text server serves (one, for a text-generation-inference style server). */
export const modelListSchema = z.looseObject({
	object: z.string().optional(),
	data: z.array(z.looseObject({ id: z.string().min(1), owned_by: z.string().optional() })),
});
export type ModelList = z.infer<typeof modelListSchema>;
