import { z } from 'zod/v4';
import { mediaFieldsOf, type MediaField } from '../../shared/schemas';
import type { FileStore } from '../files';
import { describeIssues } from '../http';
import type { MediaFile } from '../media-download';

export interface ProcessContext {
	jobId: string;
	/** How long the job ran, reported as processing_time. */
	processingSeconds: number;
	files: FileStore;
	/** The file behind the input's media URL, downloaded before the job works (media endpoints only). */
	media?: MediaFile;
}

export type ProcessResult = { ok: true; output: unknown } | { ok: false; error: string };

interface CatalogueText {
	name: string;
	display_name: string;
	description: string;
	readme: string;
	price_description: string;
}

export interface EndpointSpec<I extends z.ZodType> extends CatalogueText {
	/** Jobs take this many times the configured job duration (default 1). */
	durationFactor?: number;
	/** What the media URL must point at, in errors: "an audio or video file". */
	mediaDescription?: string;
	input: I;
	output: z.ZodType;
	process(input: z.output<I>, context: ProcessContext): ProcessResult;
}

/** A catalogue item plus what its jobs do with raw (unchecked) input. */
export interface Endpoint extends CatalogueText {
	durationFactor: number;
	/** The input fields the published schema marks as media URLs: the job downloads them first. */
	mediaFields: readonly MediaField[];
	mediaDescription: string;
	inputSchemaJson: string;
	outputSchemaJson: string;
	/** Whether the input passes the endpoint's rules: a media file is downloaded only for input that does. */
	accepts(input: unknown): boolean;
	run(input: unknown, context: ProcessContext): ProcessResult;
}

/** Compact single-line JSON Schema, as the real catalogue publishes. */
function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
	const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { unrepresentable: 'any' });
	return rest;
}

/** Input the endpoint rejects fails the job, with the field and the rule in the error. */
export function defineEndpoint<I extends z.ZodType>(spec: EndpointSpec<I>): Endpoint {
	return {
		name: spec.name,
		display_name: spec.display_name,
		description: spec.description,
		readme: spec.readme,
		price_description: spec.price_description,
		durationFactor: spec.durationFactor ?? 1,
		mediaFields: mediaFieldsOf(jsonSchemaOf(spec.input)),
		mediaDescription: spec.mediaDescription ?? 'a file this endpoint reads',
		inputSchemaJson: JSON.stringify(jsonSchemaOf(spec.input)),
		outputSchemaJson: JSON.stringify(jsonSchemaOf(spec.output)),
		accepts: (input) => spec.input.safeParse(input).success,
		run(input, context) {
			const parsed = spec.input.safeParse(input);
			if (!parsed.success)
				return {
					ok: false,
					error: `Invalid input: ${describeIssues(parsed.error, input, 'input')}`,
				};
			return spec.process(parsed.data, context);
		},
	};
}

/** The downloaded file of a media endpoint's job; the job store always downloads it first. */
export function requireMedia(context: ProcessContext): MediaFile {
	if (!context.media) throw new Error('a media endpoint ran without its downloaded file');
	return context.media;
}
