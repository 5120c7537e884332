/**
 * An endpoint's published `input_schema` (JSON Schema, as a string in the catalogue), for a front
 * end to refuse job input the endpoint would refuse, before a job is created and billed (the Slack
 * app does; the n8n nodes do not yet). The common keywords are checked; any other keyword is left to the service, so a schema this does not understand never
 * blocks a valid input. Also a one-line summary of what an endpoint expects, for people.
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

function check(
	schema: Schema,
	value: unknown,
	path: string,
	depth: number,
	problems: string[],
): void {
	if (problems.length >= MAX_PROBLEMS || depth > MAX_DEPTH) return;
	if (schema.type !== undefined && !matchesType(value, schema.type)) {
		problems.push(`${path} must be ${typeName(schema.type)}, not ${typeOf(value)}`);
		return;
	}
	if (
		Array.isArray(schema.enum) &&
		!schema.enum.some((option) => JSON.stringify(option) === JSON.stringify(value))
	) {
		problems.push(
			`${path} must be one of ${schema.enum.map((option) => JSON.stringify(option)).join(', ')}`,
		);
	}
	if ('const' in schema && JSON.stringify(schema.const) !== JSON.stringify(value))
		problems.push(`${path} must be ${JSON.stringify(schema.const)}`);
	if (typeof value === 'string') {
		if (typeof schema.minLength === 'number' && value.length < schema.minLength)
			problems.push(`${path} must have at least ${schema.minLength} characters`);
		if (typeof schema.maxLength === 'number' && value.length > schema.maxLength)
			problems.push(`${path} must have at most ${schema.maxLength} characters`);
	}
	if (typeof value === 'number') {
		if (typeof schema.minimum === 'number' && value < schema.minimum)
			problems.push(`${path} must be at least ${schema.minimum}`);
		if (typeof schema.maximum === 'number' && value > schema.maximum)
			problems.push(`${path} must be at most ${schema.maximum}`);
		if (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum)
			problems.push(`${path} must be more than ${schema.exclusiveMinimum}`);
		if (typeof schema.exclusiveMaximum === 'number' && value >= schema.exclusiveMaximum)
			problems.push(`${path} must be less than ${schema.exclusiveMaximum}`);
	}
	if (Array.isArray(value)) {
		if (typeof schema.minItems === 'number' && value.length < schema.minItems)
			problems.push(`${path} must have at least ${schema.minItems} items`);
		if (typeof schema.maxItems === 'number' && value.length > schema.maxItems)
			problems.push(`${path} must have at most ${schema.maxItems} items`);
		if (isSchema(schema.items))
			value.forEach((item, index) =>
				check(schema.items as Schema, item, `${path}[${index}]`, depth + 1, problems),
			);
	}
	if (isSchema(value)) {
		const properties = isSchema(schema.properties) ? schema.properties : {};
		const required = Array.isArray(schema.required)
			? schema.required.filter((name): name is string => typeof name === 'string')
			: [];
		for (const name of required) if (!(name in value)) problems.push(`${path}.${name} is required`);
		for (const [name, item] of Object.entries(value)) {
			const property = properties[name];
			if (isSchema(property)) check(property, item, `${path}.${name}`, depth + 1, problems);
			else if (schema.additionalProperties === false)
				problems.push(`${path}.${name} is not a field of this endpoint`);
			else if (isSchema(schema.additionalProperties))
				check(schema.additionalProperties, item, `${path}.${name}`, depth + 1, problems);
		}
	}
	for (const keyword of ['anyOf', 'oneOf'] as const) {
		const options = schema[keyword];
		if (!Array.isArray(options) || options.length === 0) continue;
		const fits = options.filter(isSchema).some((option) => {
			const found: string[] = [];
			check(option, value, path, depth + 1, found);
			return found.length === 0;
		});
		if (!fits) problems.push(`${path} matches none of the forms the endpoint accepts`);
	}
}

/** What is wrong with `input` for this schema, field by field (at most a few), or an empty list. */
export function inputSchemaProblems(schema: Schema, input: unknown): string[] {
	const problems: string[] = [];
	check(schema, input, 'input', 0, problems);
	return problems;
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
