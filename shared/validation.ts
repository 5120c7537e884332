import type { z } from 'zod/v4';
import {
	ResponseFormatError,
	ValidationError,
	type FieldIssue,
	type RequestDescription,
} from './errors';

const PREVIEW_LENGTH = 40;

/** A short, safe preview of a value for an error message. */
export function previewValue(value: unknown): string | undefined {
	if (value === undefined) return undefined;
	if (typeof value === 'string') {
		return (
			JSON.stringify(value.length > PREVIEW_LENGTH ? `${value.slice(0, PREVIEW_LENGTH)}…` : value) +
			(value.length > PREVIEW_LENGTH ? ` (${value.length} characters)` : '')
		);
	}
	if (typeof value === 'number' || typeof value === 'boolean' || value === null)
		return String(value);
	if (Array.isArray(value)) return `(a list of ${value.length})`;
	return '(an object)';
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
	let current = root;
	for (const key of path) {
		if (current === null || typeof current !== 'object') return undefined;
		current = (current as Record<PropertyKey, unknown>)[key];
	}
	return current;
}

function ruleOf(issue: z.core.$ZodIssue, value: unknown): string {
	if (issue.code === 'unrecognized_keys')
		return `has unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
	if (value === undefined && issue.code !== 'custom') return 'is required';
	return issue.message;
}

export function issuesOf(error: z.ZodError, input: unknown): FieldIssue[] {
	return error.issues.map((issue) => {
		const value = issue.code === 'unrecognized_keys' ? undefined : valueAt(input, issue.path);
		return {
			field: issue.path.map(String).join('.'),
			rule: ruleOf(issue, value),
			received: previewValue(value),
		};
	});
}

/** Parses user input; on failure throws a ValidationError naming each field, its rule and its value. */
export function parseOrThrow<T extends z.ZodType>(
	schema: T,
	input: unknown,
	subject?: string,
): z.output<T> {
	const result = schema.safeParse(input);
	if (result.success) return result.data;
	throw new ValidationError(issuesOf(result.error, input), subject);
}

/** Parses what the service sent; a mismatch is the service's fault, not the user's. */
export function parseResponse<T extends z.ZodType>(
	schema: T,
	body: unknown,
	request: RequestDescription,
	status: number,
): z.output<T> {
	const result = schema.safeParse(body);
	if (result.success) return result.data;
	const issues = issuesOf(result.error, body)
		.slice(0, 3)
		.map((issue) => `${issue.field || 'body'} ${issue.rule}`)
		.join('; ');
	throw new ResponseFormatError(
		`GPU Cloud sent an unexpected reply to ${request.method} ${request.path}: ${issues}`,
		{
			status,
			request,
		},
	);
}
