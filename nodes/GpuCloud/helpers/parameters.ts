import type { IExecuteFunctions } from 'n8n-workflow';
import { DateTime } from 'luxon';
import { z } from 'zod/v4';
import {
	NAME_RULE,
	ValidationError,
	parseOrThrow,
	previewValue,
	resourceNameSchema,
	uuidSchema,
} from '../../../shared';

/**
 * Reading parameters the user typed, checking each against the shared rules under the name the
 * user sees in the node ("Queue Name ... must be ..."), before any request is built.
 */

export function fieldError(displayName: string, rule: string, value?: unknown): ValidationError {
	return new ValidationError([{ field: displayName, rule, received: previewValue(value) }]);
}

/** A resource name (endpoint, project, queue): the shared name rule, with a plainer word for empty. */
export function checkName(value: unknown, displayName: string): string {
	if (typeof value === 'string' && value.trim() === '')
		throw fieldError(displayName, `is required; it ${NAME_RULE}`);
	return parseOrThrow(
		resourceNameSchema,
		typeof value === 'string' ? value.trim() : value,
		displayName,
	);
}

/** The value of a resource locator parameter, whichever mode the user picked. */
export function readLocatorName(
	context: IExecuteFunctions,
	parameter: string,
	itemIndex: number,
	displayName: string,
): string {
	return checkName(
		context.getNodeParameter(parameter, itemIndex, '', { extractValue: true }),
		displayName,
	);
}

export function readString(
	context: IExecuteFunctions,
	parameter: string,
	itemIndex: number,
	fallback = '',
): string {
	const value = context.getNodeParameter(parameter, itemIndex, fallback);
	return typeof value === 'string' ? value : String(value);
}

/** A JSON parameter: typed as text in the editor, or an object when the user mapped one. */
export function readJson(
	context: IExecuteFunctions,
	parameter: string,
	itemIndex: number,
	displayName: string,
): unknown {
	const value: unknown = context.getNodeParameter(parameter, itemIndex, undefined);
	if (typeof value !== 'string') return value;
	if (value.trim() === '')
		throw fieldError(
			displayName,
			'is required: enter a JSON value, for example {"url": "https://..."}',
		);
	return parseJsonValue(value, displayName);
}

/** Checks one value against one shared schema, naming the field as the node shows it. */
export function check<T extends z.ZodType>(
	schema: T,
	value: unknown,
	displayName: string,
): z.output<T> {
	return parseOrThrow(schema, value, displayName);
}

const limitSchema = z
	.number({ error: 'must be a whole number' })
	.int({ error: 'must be a whole number' })
	.min(1, { error: 'must be at least 1' });

/** How many results a Get Many returns: "Limit", or no bound with "Return All". */
export function readLimit(context: IExecuteFunctions, itemIndex: number): number {
	if (context.getNodeParameter('returnAll', itemIndex, false) === true)
		return Number.POSITIVE_INFINITY;
	return check(limitSchema, context.getNodeParameter('limit', itemIndex, 50), 'Limit');
}

/**
 * A "dateTime" parameter as epoch milliseconds; empty is undefined. A time without a zone is in the
 * workflow's time zone, as n8n shows it in the date picker.
 */
export function readDateTime(
	context: IExecuteFunctions,
	value: unknown,
	displayName: string,
): number | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	const parsed =
		typeof value === 'string'
			? DateTime.fromISO(value, { zone: context.getTimezone() })
			: undefined;
	if (!parsed?.isValid)
		throw fieldError(displayName, 'must be a date and time, e.g. 2026-11-24T09:30:00', value);
	return parsed.toMillis();
}

const minutesSchema = z
	.number({ error: 'must be a number of minutes' })
	.positive({ error: 'must be more than 0 minutes' })
	.max(7 * 24 * 60, { error: 'must be at most 10080 minutes (7 days)' });

export function readTimeoutMs(
	context: IExecuteFunctions,
	parameter: string,
	itemIndex: number,
): number {
	return (
		check(minutesSchema, context.getNodeParameter(parameter, itemIndex, 60), 'Timeout (Minutes)') *
		60_000
	);
}

const collectionSchema = z.record(z.string(), z.unknown());

/** A collection parameter ("Options") as plain values; n8n checks the fields it knows first. */
export function readCollection(
	context: IExecuteFunctions,
	parameter: string,
	itemIndex: number,
): Record<string, unknown> {
	const parsed = collectionSchema.safeParse(context.getNodeParameter(parameter, itemIndex, {}));
	return parsed.success ? parsed.data : {};
}

/** A JSON value given either as text or as an already-parsed value (from an expression). */
export function parseJsonValue(value: unknown, displayName: string): unknown {
	if (typeof value !== 'string') return value;
	try {
		return JSON.parse(value);
	} catch (error) {
		const reason = error instanceof Error ? error.message : 'not valid JSON';
		throw fieldError(displayName, `must be valid JSON (${reason})`);
	}
}

/** The endpoint and job id that Get, Cancel and Wait for Completion address a job by. */
export function readJobReference(
	context: IExecuteFunctions,
	itemIndex: number,
): { endpoint: string; jobId: string } {
	return {
		endpoint: readLocatorName(context, 'endpoint', itemIndex, 'Inference Endpoint'),
		jobId: check(uuidSchema, readString(context, 'jobId', itemIndex).trim(), 'Job ID'),
	};
}
