import { z } from 'zod/v4';
import { LIMITS, NAME_PATTERN, uuidSchema } from '../../shared/schemas';
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
} as const;

export const VIEWS = { jobModal: 'gpu.job_modal' } as const;

export const jobRefSchema = z.strictObject({
  endpoint: z.string().regex(NAME_PATTERN),
  jobId: uuidSchema,
});
export type JobRef = z.infer<typeof jobRefSchema>;

export const imageRequestValueSchema = z.strictObject({
  prompt: z.string().min(1),
  width: z.number().int().min(LIMITS.imageSideMin).max(LIMITS.imageSideMax).optional(),
  height: z.number().int().min(LIMITS.imageSideMin).max(LIMITS.imageSideMax).optional(),
  seed: z.number().int().min(0).optional(),
  count: z.number().int().min(1).max(16),
});
export type ImageRequestValue = z.infer<typeof imageRequestValueSchema>;

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

export function decodeValue<T extends z.ZodType>(schema: T, value: string | undefined): z.output<T> | undefined {
  if (value === undefined) return undefined;
  try {
    const result = schema.safeParse(JSON.parse(value));
    return result.success ? result.data : undefined;
  } catch {
    return undefined;
  }
}
