import { z } from 'zod/v4';

/** Every numeric bound of the interface document and the real-behaviour notes, in one place. */
export const LIMITS = {
	nameMinLength: 2,
	nameMaxLength: 63,
	displayNameMaxLength: 63,
	queueDescriptionMaxLength: 500,
	webhookUrlMaxLength: 2048,
	pageMax: 2147483647,
	pageSizeMax: 100,
	totalSizeMax: 2147483647,
	metadataMaxProperties: 20,
	jobEventsMax: 1000,
	containerGroupsMax: 100,
	endpointDescriptionMaxLength: 1000,
	endpointLongTextMaxLength: 100000,
	endpointIconUrlMaxLength: 2048,
	endpointPriceDescriptionMaxLength: 100,
	imageSideMin: 256,
	imageSideMax: 2048,
	transcriptionMaxSeconds: 2.5 * 3600,
	transcriptionMaxBytes: 3_000_000_000,
	rateLimitPerMinute: 240,
} as const;

export const NAME_PATTERN = /^[a-z][a-z0-9-]{0,61}[a-z0-9]$/;
export const NAME_RULE =
	'must be 2-63 lower-case letters, digits or hyphens, starting with a letter and ending with a letter or digit';

/** Organization, project, endpoint and queue names share one rule on the real service. */
export const resourceNameSchema = z
	.string({ error: 'must be a text value' })
	.regex(NAME_PATTERN, { error: NAME_RULE });

export const uuidSchema = z
	.string({ error: 'must be a text value' })
	.regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, {
		error: 'must be a job id (a UUID like 3f2a9c1e-8b4d-4e6f-9a0b-1c2d3e4f5a6b)',
	});

export const dateTimeSchema = z.iso.datetime({
	offset: true,
	error: 'must be an ISO 8601 date-time',
});

export const httpUrlSchema = z.string({ error: 'must be a text value' }).refine(isHttpUrl, {
	error: 'must be a full http:// or https:// URL',
});

export const webhookUrlSchema = z
	.string({ error: 'must be a text value' })
	.min(1, { error: 'must not be empty' })
	.max(LIMITS.webhookUrlMaxLength, {
		error: `must be at most ${LIMITS.webhookUrlMaxLength} characters`,
	})
	.refine(isHttpUrl, { error: 'must be a full http:// or https:// URL' });

export const pageNumberSchema = z
	.number({ error: 'must be a whole number' })
	.int({ error: 'must be a whole number' })
	.min(1, { error: `must be between 1 and ${LIMITS.pageMax}` })
	.max(LIMITS.pageMax, { error: `must be between 1 and ${LIMITS.pageMax}` });

export const pageSizeSchema = z
	.number({ error: 'must be a whole number' })
	.int({ error: 'must be a whole number' })
	.min(1, { error: `must be between 1 and ${LIMITS.pageSizeMax}` })
	.max(LIMITS.pageSizeMax, { error: `must be between 1 and ${LIMITS.pageSizeMax}` });

export const pageQuerySchema = z.strictObject({
	page: pageNumberSchema.optional(),
	page_size: pageSizeSchema.optional(),
});
export type PageQuery = z.infer<typeof pageQuerySchema>;

/** Any JSON value; `undefined` (a missing field) is not JSON. */
export const jsonValueSchema = z
	.unknown()
	.refine((value) => value !== undefined, { error: 'is required' });

export function isHttpUrl(value: string): boolean {
	try {
		const url = new URL(value);
		return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
	} catch {
		return false;
	}
}

/** A page of items as the management API returns it (endpoints, jobs). */
export function pageSchema<T extends z.ZodType>(item: T) {
	return z.looseObject({
		items: z.array(item).max(LIMITS.pageSizeMax),
		page: z.number().int().min(1).max(LIMITS.pageMax),
		page_size: z.number().int().min(1).max(LIMITS.pageSizeMax),
		total_size: z.number().int().min(0).max(LIMITS.totalSizeMax),
	});
}
