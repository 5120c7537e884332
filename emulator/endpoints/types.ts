import { z } from 'zod/v4';
import type { FileStore } from '../files';
import { describeIssues } from '../http';

export interface ProcessContext {
	jobId: string;
	/** How long the job ran, reported as processing_time. */
	processingSeconds: number;
	files: FileStore;
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
	input: I;
	output: z.ZodType;
	process(input: z.output<I>, context: ProcessContext): ProcessResult;
}

/** A catalogue item plus what its jobs do with raw (unchecked) input. */
export interface Endpoint extends CatalogueText {
	durationFactor: number;
	inputSchemaJson: string;
	outputSchemaJson: string;
	run(input: unknown, context: ProcessContext): ProcessResult;
}

/** Compact single-line JSON Schema, as the real catalogue publishes. */
function schemaJson(schema: z.ZodType): string {
	const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { unrepresentable: 'any' });
	return JSON.stringify(rest);
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
		inputSchemaJson: schemaJson(spec.input),
		outputSchemaJson: schemaJson(spec.output),
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
