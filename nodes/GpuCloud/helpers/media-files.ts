import type { IExecuteFunctions } from 'n8n-workflow';
import { z } from 'zod/v4';
import type { CreateJobRequest } from '../../../shared';
import { hasObjectStorage } from '../transport/storage';
import { BinaryUploads, inspectBinary } from './binary-upload';
import { check, fieldError } from './parameters';

/** The parameter as the node shows it, which errors name. */
export const MEDIA_FILES = 'Files for Media Fields';

/** A file of the item for one media field of the endpoint (a URL GPU Cloud downloads). */
export interface MediaFile {
	field: string;
	property: string;
	mimeType: string;
}

/**
 * The item's files for media fields. They are checked when the node reads its parameters, and
 * uploaded only when the item's job is about to be created, once its whole input has been checked
 * against the endpoint's schema: a refused input leaves nothing in the bucket.
 */
export interface MediaFiles {
	files: readonly MediaFile[];
	/** Uploads each file and makes its link the field's value; the keys of the objects to delete after the job. */
	attach(request: CreateJobRequest): Promise<string[]>;
}

const entriesSchema = z.array(
	z.object({
		field: z.string({ error: 'must be the name of a media field' }).default(''),
		binaryPropertyName: z.string({ error: 'must be a binary field name' }).default('data'),
	}),
);

function isBlank(value: unknown): boolean {
	return (
		value === undefined || value === null || (typeof value === 'string' && value.trim() === '')
	);
}

/**
 * The item's "Files for Media Fields", checked before any request: a field named once, not also
 * filled in "Input Fields", a storage credential to upload to, and a binary file of the item under
 * each name given, smaller than GPU Cloud's limit. Undefined when the item gives no file.
 */
export async function readMediaFiles(
	context: IExecuteFunctions,
	itemIndex: number,
	fields: Readonly<Record<string, unknown>>,
	uploads: BinaryUploads,
	link: { lifetimeSeconds: number; keep: boolean },
): Promise<MediaFiles | undefined> {
	const entries = check(
		entriesSchema,
		context.getNodeParameter('mediaFiles.files', itemIndex, []),
		MEDIA_FILES,
	);
	if (entries.length === 0) return undefined;
	if (!hasObjectStorage(context))
		throw fieldError(
			MEDIA_FILES,
			'needs a GPU Cloud Object Storage API credential on this node (the bucket GPU Cloud downloads the files from)',
		);
	const files: MediaFile[] = [];
	for (const entry of entries) {
		const field = entry.field.trim();
		if (field === '')
			throw fieldError(
				MEDIA_FILES,
				'has a file without its Media Field: choose the field it is for',
			);
		if (files.some((file) => file.field === field))
			throw fieldError(MEDIA_FILES, `gives "${field}" two files: one file per field`);
		if (!isBlank(fields[field]))
			throw fieldError(
				MEDIA_FILES,
				`gives a file for "${field}", which Input Fields fills too: give the field a URL or a file, not both`,
			);
		const property = entry.binaryPropertyName.trim();
		const { mimeType } = await inspectBinary(context, itemIndex, property, inputName(field));
		files.push({ field, property, mimeType });
	}
	return {
		files,
		attach: async (request) => {
			const input = request.input;
			if (typeof input !== 'object' || input === null || Array.isArray(input))
				throw fieldError('Input', 'must be an object to take files for its fields');
			const keys: string[] = [];
			const linked: Record<string, unknown> = { ...input };
			for (const { field, property } of files) {
				const uploaded = await uploads.upload(
					itemIndex,
					property,
					inputName(field),
					link.lifetimeSeconds,
					'inputs',
				);
				keys.push(uploaded.key);
				linked[field] = uploaded.url;
			}
			request.input = linked;
			return link.keep ? [] : keys;
		},
	};
}

function inputName(field: string): string {
	return `Input Binary Field of "${field}"`;
}
