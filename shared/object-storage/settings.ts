import { z } from 'zod/v4';
import { isHttpUrl } from '../schemas';

/** How a bucket is named in request URLs: `endpoint/bucket/key` or `bucket.endpoint/key`. */
export const ADDRESSING_STYLES = ['path', 'virtual-hosted'] as const;
export type AddressingStyle = (typeof ADDRESSING_STYLES)[number];

/** S3's bucket naming rules (general purpose buckets). */
const BUCKET_PATTERN = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

const text = (rule: string) =>
	z
		.string({ error: `must be ${rule}` })
		.trim()
		.min(1, { error: `must be ${rule}` });

/** S3-compatible storage a file is put in so the service can download it from a presigned URL. */
export const objectStorageSettingsSchema = z.strictObject({
	/** e.g. https://s3.eu-west-1.amazonaws.com, https://<account>.r2.cloudflarestorage.com, http://127.0.0.1:9000 */
	endpoint: z
		.string({ error: 'must be the storage service URL' })
		.trim()
		.refine(isHttpUrl, { error: 'must be a full http:// or https:// URL', abort: true })
		.refine((url) => !new URL(url).search && !new URL(url).hash, {
			error: 'must be the service URL alone, without ? or #',
		}),
	region: text('the bucket’s region, such as us-east-1 (auto for Cloudflare R2)').regex(
		/^[a-z0-9-]+$/,
		{ error: 'must be a region name such as us-east-1 (lower-case letters, digits, hyphens)' },
	),
	bucket: z.string({ error: 'must be the bucket name' }).trim().regex(BUCKET_PATTERN, {
		error:
			'must be 3-63 lower-case letters, digits, dots or hyphens, starting and ending with a letter or digit',
	}),
	/** Folder-like start of every key this package writes, e.g. `gpu-cloud/`. */
	keyPrefix: z
		.string({ error: 'must be text' })
		.trim()
		.max(512, { error: 'must be at most 512 characters' })
		.refine((prefix) => !prefix.startsWith('/'), { error: 'must not start with /' })
		.default(''),
	accessKeyId: text('the access key ID'),
	secretAccessKey: z
		.string({ error: 'must be the secret access key' })
		.min(1, { error: 'must be the secret access key' }),
	addressing: z
		.enum(ADDRESSING_STYLES, { error: 'must be "path" or "virtual-hosted"' })
		.default('path'),
});
export type ObjectStorageSettings = z.output<typeof objectStorageSettingsSchema>;
export type ObjectStorageSettingsInput = z.input<typeof objectStorageSettingsSchema>;
export type ObjectStorageField = keyof ObjectStorageSettings;

/** How each setting is named where the user set it; errors name the field this way. */
export type ObjectStorageLabels = Readonly<Record<ObjectStorageField, string>>;

export const DEFAULT_LABELS: ObjectStorageLabels = {
	endpoint: 'endpoint',
	region: 'region',
	bucket: 'bucket',
	keyPrefix: 'key prefix',
	accessKeyId: 'access key ID',
	secretAccessKey: 'secret access key',
	addressing: 'addressing style',
};

/**
 * The settings' fields of a larger record (a stored credential may carry fields of its own), unchecked:
 * parseObjectStorageSettings checks them.
 */
export const storedSettingsSchema = z.object({
	endpoint: z.unknown(),
	region: z.unknown(),
	bucket: z.unknown(),
	keyPrefix: z.unknown().optional(),
	accessKeyId: z.unknown(),
	secretAccessKey: z.unknown(),
	addressing: z.unknown().optional(),
});
