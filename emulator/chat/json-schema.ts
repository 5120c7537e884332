/**
 * Builds a JSON value that satisfies a JSON schema, the way constrained decoding makes a real model
 * answer: enough of JSON Schema for tool parameters and response formats (types, enum/const,
 * required and optional properties, bounds, array sizes, anyOf/oneOf/allOf, local $ref). Text is
 * taken from the conversation so the value reads as an answer rather than filler.
 */

type Schema = Record<string, unknown>;

const MAX_DEPTH = 8;

function isSchema(value: unknown): value is Schema {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function numberAt(schema: Schema, key: string): number | undefined {
	const value = schema[key];
	return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function resolveRef(ref: string, root: Schema): Schema {
	if (!ref.startsWith('#')) return {};
	let current: unknown = root;
	for (const segment of ref.slice(1).split('/').filter(Boolean)) {
		const key = decodeURIComponent(segment.replace(/~1/g, '/').replace(/~0/g, '~'));
		current = isSchema(current) ? current[key] : undefined;
	}
	return isSchema(current) ? current : {};
}

function typeOf(schema: Schema): string | undefined {
	const type = schema.type;
	if (typeof type === 'string') return type;
	if (Array.isArray(type))
		return (
			type.find((entry): entry is string => typeof entry === 'string' && entry !== 'null') ?? 'null'
		);
	if (isSchema(schema.properties) || Array.isArray(schema.required)) return 'object';
	if (schema.items !== undefined) return 'array';
	return undefined;
}

function fitText(source: string, schema: Schema): string {
	const format = schema.format;
	if (format === 'date-time') return '2026-01-01T00:00:00Z';
	if (format === 'date') return '2026-01-01';
	if (format === 'time') return '00:00:00Z';
	if (format === 'email') return 'someone@example.com';
	if (format === 'uri' || format === 'url') return 'https://example.com/';
	if (format === 'uuid') return '00000000-0000-4000-8000-000000000000';
	const min = numberAt(schema, 'minLength') ?? 0;
	const max = numberAt(schema, 'maxLength');
	let value = source.length > 0 ? source : 'text';
	if (max !== undefined && value.length > max) value = value.slice(0, max);
	if (value.length < min) value = value.padEnd(min, '.');
	return value;
}

function fitNumber(schema: Schema, integer: boolean): number {
	const minimum = numberAt(schema, 'minimum');
	const maximum = numberAt(schema, 'maximum');
	const exclusiveMinimum = numberAt(schema, 'exclusiveMinimum');
	const exclusiveMaximum = numberAt(schema, 'exclusiveMaximum');
	const step = numberAt(schema, 'multipleOf') ?? (integer ? 1 : undefined);
	let low = Math.max(minimum ?? -Infinity, exclusiveMinimum ?? -Infinity);
	if (exclusiveMinimum !== undefined && low === exclusiveMinimum)
		low += step ?? Number.EPSILON * Math.max(1, Math.abs(low));
	let high = Math.min(maximum ?? Infinity, exclusiveMaximum ?? Infinity);
	if (exclusiveMaximum !== undefined && high === exclusiveMaximum)
		high -= step ?? Number.EPSILON * Math.max(1, Math.abs(high));
	let value = 1;
	if (value < low) value = low;
	if (value > high) value = high;
	if (step !== undefined && step > 0) {
		const up = Math.ceil(value / step) * step;
		value = up <= high ? up : Math.floor(value / step) * step;
	}
	return integer ? Math.round(value) : value;
}

function mergeAll(schemas: unknown[], root: Schema): Schema {
	const merged: Schema = {};
	const properties: Schema = {};
	const required: unknown[] = [];
	for (const part of schemas) {
		const schema =
			isSchema(part) && typeof part.$ref === 'string' ? resolveRef(part.$ref, root) : part;
		if (!isSchema(schema)) continue;
		Object.assign(merged, schema);
		if (isSchema(schema.properties)) Object.assign(properties, schema.properties);
		if (Array.isArray(schema.required)) required.push(...(schema.required as unknown[]));
	}
	if (Object.keys(properties).length > 0) merged.properties = properties;
	if (required.length > 0) merged.required = required;
	return merged;
}

/** A value that satisfies `schema`; strings say `text` (cut or padded to the schema's lengths). */
export function exampleFor(
	schema: unknown,
	text: string,
	root: Schema = isSchema(schema) ? schema : {},
	depth = 0,
): unknown {
	if (!isSchema(schema) || depth > MAX_DEPTH) return null;
	if (typeof schema.$ref === 'string')
		return exampleFor(resolveRef(schema.$ref, root), text, root, depth + 1);
	if ('const' in schema) return schema.const;
	if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
	if ('default' in schema) return schema.default;
	if (Array.isArray(schema.allOf))
		return exampleFor(mergeAll(schema.allOf, root), text, root, depth + 1);
	for (const key of ['anyOf', 'oneOf']) {
		const options = schema[key];
		if (Array.isArray(options) && options.length > 0) {
			const chosen =
				options.find((option) => !(isSchema(option) && option.type === 'null')) ?? options[0];
			return exampleFor(chosen, text, root, depth + 1);
		}
	}
	switch (typeOf(schema)) {
		case 'string':
			return fitText(text, schema);
		case 'integer':
			return fitNumber(schema, true);
		case 'number':
			return fitNumber(schema, false);
		case 'boolean':
			return true;
		case 'null':
			return null;
		case 'array': {
			const count = Math.min(
				Math.max(numberAt(schema, 'minItems') ?? 1, 1),
				numberAt(schema, 'maxItems') ?? 1,
			);
			const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : [];
			return Array.from({ length: Math.max(count, prefix.length) }, (_, index) =>
				exampleFor(prefix[index] ?? schema.items ?? {}, text, root, depth + 1),
			);
		}
		case 'object': {
			const properties = isSchema(schema.properties) ? schema.properties : {};
			const value: Record<string, unknown> = {};
			for (const [key, property] of Object.entries(properties))
				value[key] = exampleFor(property, text, root, depth + 1);
			const required = Array.isArray(schema.required)
				? schema.required.filter((key): key is string => typeof key === 'string')
				: [];
			for (const key of required)
				if (!(key in value))
					value[key] = exampleFor(schema.additionalProperties ?? {}, text, root, depth + 1);
			return value;
		}
		default:
			return text;
	}
}
