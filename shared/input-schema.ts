/**
 * An endpoint's published `input_schema` (JSON Schema, as a string in the catalogue), for a front
 * end to refuse job input the endpoint would refuse, before a job is created and billed: the Slack
 * app checks `/gpu job` input with it, and the n8n node checks the input of every job it creates
 * (Job > Create, Create and Wait, Transcription). The common keywords are checked; any other keyword
 * is left to the service, so a schema this does not understand never blocks a valid input. Also a
 * one-line summary of what an endpoint expects, for people.
 */

type Schema = Record<string, unknown>;

/** Deeper than this, a schema or an input is not followed further (the service still checks it). */
const MAX_DEPTH = 32;
const MAX_PROBLEMS = 5;

function isSchema(value: unknown): value is Schema {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The published schema, or undefined when it is not a JSON object (then nothing is checked). */
export function parseInputSchema(text: string | undefined): Schema | undefined {
	if (!text) return undefined;
	try {
		const schema: unknown = JSON.parse(text);
		return isSchema(schema) ? schema : undefined;
	} catch {
		return undefined;
	}
}

function typeOf(value: unknown): string {
	if (value === null) return 'null';
	if (Array.isArray(value)) return 'array';
	if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
	return typeof value;
}

function matchesType(value: unknown, type: unknown): boolean {
	const types = Array.isArray(type) ? type : [type];
	const actual = typeOf(value);
	return types.some((name) => name === actual || (name === 'number' && actual === 'integer'));
}

function typeName(type: unknown): string {
	return Array.isArray(type) ? type.join(' or ') : String(type);
}

/** One broken rule: where in the input (`""` for the whole input, else e.g. `items[0].text`) and what. */
export interface InputSchemaIssue {
	path: string;
	rule: string;
}

function child(path: string, name: string): string {
	return path === '' ? name : `${path}.${name}`;
}

function check(
	schema: Schema,
	value: unknown,
	path: string,
	depth: number,
	issues: InputSchemaIssue[],
): void {
	if (issues.length >= MAX_PROBLEMS || depth > MAX_DEPTH) return;
	const broken = (rule: string, at = path) => issues.push({ path: at, rule });
	if (schema.type !== undefined && !matchesType(value, schema.type)) {
		broken(`must be ${typeName(schema.type)}, not ${typeOf(value)}`);
		return;
	}
	if (
		Array.isArray(schema.enum) &&
		!schema.enum.some((option) => JSON.stringify(option) === JSON.stringify(value))
	) {
		broken(`must be one of ${schema.enum.map((option) => JSON.stringify(option)).join(', ')}`);
	}
	if ('const' in schema && JSON.stringify(schema.const) !== JSON.stringify(value))
		broken(`must be ${JSON.stringify(schema.const)}`);
	if (typeof value === 'string') {
		if (typeof schema.minLength === 'number' && value.length < schema.minLength)
			broken(`must have at least ${schema.minLength} characters`);
		if (typeof schema.maxLength === 'number' && value.length > schema.maxLength)
			broken(`must have at most ${schema.maxLength} characters`);
	}
	if (typeof value === 'number') {
		if (typeof schema.minimum === 'number' && value < schema.minimum)
			broken(`must be at least ${schema.minimum}`);
		if (typeof schema.maximum === 'number' && value > schema.maximum)
			broken(`must be at most ${schema.maximum}`);
		if (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum)
			broken(`must be more than ${schema.exclusiveMinimum}`);
		if (typeof schema.exclusiveMaximum === 'number' && value >= schema.exclusiveMaximum)
			broken(`must be less than ${schema.exclusiveMaximum}`);
	}
	if (Array.isArray(value)) {
		if (typeof schema.minItems === 'number' && value.length < schema.minItems)
			broken(`must have at least ${schema.minItems} items`);
		if (typeof schema.maxItems === 'number' && value.length > schema.maxItems)
			broken(`must have at most ${schema.maxItems} items`);
		if (isSchema(schema.items))
			value.forEach((item, index) =>
				check(schema.items as Schema, item, `${path}[${index}]`, depth + 1, issues),
			);
	}
	if (isSchema(value)) {
		const properties = isSchema(schema.properties) ? schema.properties : {};
		const required = Array.isArray(schema.required)
			? schema.required.filter((name): name is string => typeof name === 'string')
			: [];
		for (const name of required) if (!(name in value)) broken('is required', child(path, name));
		for (const [name, item] of Object.entries(value)) {
			const property = properties[name];
			if (isSchema(property)) check(property, item, child(path, name), depth + 1, issues);
			else if (schema.additionalProperties === false)
				broken('is not a field of this endpoint', child(path, name));
			else if (isSchema(schema.additionalProperties))
				check(schema.additionalProperties, item, child(path, name), depth + 1, issues);
		}
	}
	for (const keyword of ['anyOf', 'oneOf'] as const) {
		const options = schema[keyword];
		if (!Array.isArray(options) || options.length === 0) continue;
		const fits = options.filter(isSchema).some((option) => {
			const found: InputSchemaIssue[] = [];
			check(option, value, path, depth + 1, found);
			return found.length === 0;
		});
		if (!fits) broken('matches none of the forms the endpoint accepts');
	}
}

/** What is wrong with `input` for this schema, field by field (at most a few), or an empty list. */
export function inputSchemaIssues(schema: Schema, input: unknown): InputSchemaIssue[] {
	const issues: InputSchemaIssue[] = [];
	check(schema, input, '', 0, issues);
	return issues;
}

/** The same as sentences (`input.text must be string, not integer`). */
export function inputSchemaProblems(schema: Schema, input: unknown): string[] {
	return inputSchemaIssues(schema, input).map(
		({ path, rule }) => `input${path === '' || path.startsWith('[') ? path : `.${path}`} ${rule}`,
	);
}

/** What an endpoint takes, from its published input_schema, for the catalogue and the job form. */
export function expectedInput(inputSchema: string | undefined): string | undefined {
	return describeInputSchema(parseInputSchema(inputSchema));
}

/** `text (string, required), max_words (integer)`: the top-level fields an endpoint expects. */
export function describeInputSchema(schema: Schema | undefined): string | undefined {
	if (!schema) return undefined;
	if (!isSchema(schema.properties))
		return schema.type !== undefined ? `any ${typeName(schema.type)}` : undefined;
	const required = new Set(Array.isArray(schema.required) ? schema.required : []);
	const fields = Object.entries(schema.properties).map(([name, property]) => {
		const facts = [
			isSchema(property) && property.type !== undefined ? typeName(property.type) : undefined,
			required.has(name) ? 'required' : undefined,
		].filter(Boolean);
		return facts.length ? `${name} (${facts.join(', ')})` : name;
	});
	return fields.length ? fields.join(', ') : 'an empty object';
}

/**
 * What an endpoint's input takes within `maxChars`, for a catalogue a model reads: required fields
 * first, then the others, and how many fields did not fit.
 */
export function summarizeInputSchema(
	schema: Schema | undefined,
	maxChars: number,
): string | undefined {
	if (!schema || !isSchema(schema.properties)) return describeInputSchema(schema);
	const required = new Set(Array.isArray(schema.required) ? schema.required : []);
	const names = Object.keys(schema.properties);
	const ordered = [
		...names.filter((name) => required.has(name)),
		...names.filter((name) => !required.has(name)),
	];
	const parts: string[] = [];
	for (const [index, name] of ordered.entries()) {
		const field = describeInputSchema({
			properties: { [name]: schema.properties[name] },
			required: required.has(name) ? [name] : [],
		});
		const left = ordered.length - index - 1;
		const more = left > 0 ? `, +${left} more fields` : '';
		const next = [...parts, field].join(', ');
		if (next.length + more.length > maxChars) {
			return parts.length > 0
				? `${parts.join(', ')}, +${ordered.length - index} more fields`
				: `${ordered.length} fields`;
		}
		parts.push(field ?? name);
	}
	return parts.length ? parts.join(', ') : 'an empty object';
}
