import { z } from 'zod/v4';
import { httpUrlSchema } from './common';

/**
 * The JSON Schema keyword that marks a string field as the URL of a media file the service
 * downloads, with the media types it reads in the form of an HTML `accept` list
 * (`"audio/*,video/*"`). The field also carries `format: "uri"`. A keyword of our own, not
 * `contentMediaType`: that one describes the string's own content, not what a URL points at.
 */
export const MEDIA_KEYWORD = 'x-media';

/** A media URL field: a full http(s) URL the service GETs without any header. */
export function mediaUrlSchema(accept: string) {
	return httpUrlSchema.meta({ format: 'uri', [MEDIA_KEYWORD]: accept });
}

export interface MediaField {
	/** The input property holding the URL. */
	field: string;
	/** What the endpoint reads, e.g. `audio/*,video/*`. */
	accept: string;
}

const markedPropertiesSchema = z.object({
	properties: z.record(z.string(), z.unknown()).optional(),
});
const markedFieldSchema = z.object({ type: z.literal('string'), [MEDIA_KEYWORD]: z.string() });

/** The top-level input fields a published input schema marks as media URLs, in schema order. */
export function mediaFieldsOf(inputSchema: unknown): MediaField[] {
	const parsed = markedPropertiesSchema.safeParse(inputSchema);
	if (!parsed.success) return [];
	const fields: MediaField[] = [];
	for (const [field, property] of Object.entries(parsed.data.properties ?? {})) {
		const marked = markedFieldSchema.safeParse(property);
		if (marked.success) fields.push({ field, accept: marked.data[MEDIA_KEYWORD] });
	}
	return fields;
}

/** Whether a media type (`audio/wav`) is one an `accept` list (`audio/*,video/*`) names. */
export function acceptsMediaType(accept: string, mediaType: string): boolean {
	const [type] = mediaType.split('/');
	return accept
		.split(',')
		.map((entry) => entry.trim().toLowerCase())
		.some((entry) => entry === mediaType || entry === `${type}/*` || entry === '*/*');
}
