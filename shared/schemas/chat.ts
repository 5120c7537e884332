import { z } from 'zod/v4';

export const CHAT_ROLES = ['system', 'user', 'assistant'] as const;

export const chatMessageSchema = z.strictObject({
  role: z.enum(CHAT_ROLES, { error: 'must be "system", "user" or "assistant"' }),
  content: z.string({ error: 'must be a text value' }),
});
export type ChatMessage = z.infer<typeof chatMessageSchema>;

export const chatRequestSchema = z
  .strictObject({
    model: z.string({ error: 'must be a text value' }).min(1, { error: 'must not be empty' }).optional(),
    messages: z.array(chatMessageSchema, { error: 'must be a list of messages' }).min(1, { error: 'must contain at least one message' }),
    max_tokens: z
      .number({ error: 'must be a whole number' })
      .int({ error: 'must be a whole number' })
      .min(1, { error: 'must be at least 1' })
      .optional(),
    temperature: z.number({ error: 'must be a number' }).min(0, { error: 'must be 0-2' }).max(2, { error: 'must be 0-2' }).optional(),
    top_p: z
      .number({ error: 'must be a number' })
      .gt(0, { error: 'must be greater than 0 and at most 1' })
      .max(1, { error: 'must be greater than 0 and at most 1' })
      .optional(),
    frequency_penalty: z.number({ error: 'must be a number' }).min(-2, { error: 'must be -2 to 2' }).max(2, { error: 'must be -2 to 2' }).optional(),
    stream: z.boolean({ error: 'must be true or false' }).optional(),
  })
  .refine((request) => request.messages.length === 0 || request.messages.some((message) => message.content.trim().length > 0), {
    error: 'must contain a message with some text',
    path: ['messages'],
  });
export type ChatRequest = z.infer<typeof chatRequestSchema>;

const usageSchema = z.looseObject({
  prompt_tokens: z.number().int().min(0),
  completion_tokens: z.number().int().min(0),
  total_tokens: z.number().int().min(0),
});
export type ChatUsage = z.infer<typeof usageSchema>;

export const chatCompletionSchema = z.looseObject({
  id: z.string(),
  object: z.string(),
  created: z.number().int(),
  model: z.string(),
  choices: z
    .array(
      z.looseObject({
        index: z.number().int(),
        message: z.looseObject({ role: z.string(), content: z.string().nullable() }),
        finish_reason: z.string().nullable(),
      }),
    )
    .min(1),
  usage: usageSchema,
});
export type ChatCompletion = z.infer<typeof chatCompletionSchema>;

export const chatCompletionChunkSchema = z.looseObject({
  id: z.string(),
  object: z.literal('chat.completion.chunk'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.looseObject({
      index: z.number().int(),
      delta: z.looseObject({ role: z.string().optional(), content: z.string().nullable().optional() }),
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
