/**
 * An endpoint's published `input_schema` (JSON Schema, as a string in the catalogue), read once for
 * every front end: to refuse job input the endpoint would refuse, before a job is created and billed
 * (the Slack app's `/gpu job`, every job the n8n node creates); to turn the schema into form fields
 * and the filled fields back into an input (`readSchemaForm`, `inputFromFields`: the n8n node's
 * fields and the Slack job form); and to summarise what an endpoint expects, for people. The common
 * keywords are checked and local `$ref`s followed; any other keyword is left to the service, so a
 * schema this does not understand never blocks a valid input.
 */

import { MEDIA_KEYWORD } from './schemas/media';

export type Schema = Record<string, unknown>;

/** Deeper than this, a schema or an input is not followed further (the service still checks it). */
const MAX_DEPTH = 32;
const MAX_PROBLEMS = 5;
/** A chain of `$ref`s longer than this is taken as a cycle. */
const MAX_REF_HOPS = 16;
/** An enum rule names this many options at most: catalogues publish enums of hundreds. */
const NAMED_OPTIONS = 10;

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

/** What a local JSON pointer (`#`, `#/definitions/Item`, `#/$defs/Item`) names in the document. */
function pointerTarget(root: Schema, ref: string): Schema | undefined {
	if (!ref.startsWith('#')) return undefined;
	let target: unknown = root;
	for (const token of ref.slice(1).split('/').slice(1)) {
		let key: string;
		try {
			key = decodeURIComponent(token).replaceAll('~1', '/').replaceAll('~0', '~');
		} catch {
			return undefined;
		}
		if (!isSchema(target) || !Object.hasOwn(target, key)) return undefined;
		target = target[key];
	}
	return isSchema(target) ? target : undefined;
}

/**
 * The schema with its `$ref` followed (the referring schema's own keywords, such as a title or a
 * default, win over the target's), or undefined when it cannot be: a reference outside this
 * document, to nothing, or a cycle.
 */
function followRefs(schema: Schema, root: Schema): Schema | undefined {
	let current = schema;
	for (let hop = 0; hop < MAX_REF_HOPS; hop++) {
		if (typeof current.$ref !== 'string') return current;
		const target = pointerTarget(root, current.$ref);
		if (!target) return undefined;
		const { $ref: _followed, ...own } = current;
		current = { ...target, ...own };
	}
	return undefined;
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

/** `"a", "b" or "c"`, or the first few and how many others for a long enum. */
function describeOptions(options: readonly unknown[]): string {
	const named = options.slice(0, NAMED_OPTIONS).map((option) => JSON.stringify(option));
	const others = options.length - named.length;
	return others > 0 ? `${named.join(', ')} or one of ${others} others` : named.join(', ');
}

function check(
	written: Schema,
	value: unknown,
	path: string,
	depth: number,
	issues: InputSchemaIssue[],
	root: Schema,
): void {
	if (issues.length >= MAX_PROBLEMS || depth > MAX_DEPTH) return;
	const schema = followRefs(written, root);
	// A reference this cannot follow is the service's to check.
	if (!schema) return;
	const broken = (rule: string, at = path) => issues.push({ path: at, rule });
	const checkAgainst = (sub: Schema, item: unknown, at: string) =>
		check(sub, item, at, depth + 1, issues, root);
	if (schema.type !== undefined && !matchesType(value, schema.type)) {
		broken(`must be ${typeName(schema.type)}, not ${typeOf(value)}`);
		return;
	}
	if (
		Array.isArray(schema.enum) &&
		!schema.enum.some((option) => JSON.stringify(option) === JSON.stringify(value))
	) {
		broken(`must be one of ${describeOptions(schema.enum)}`);
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
		const { items } = schema;
		if (isSchema(items))
			value.forEach((item, index) => checkAgainst(items, item, `${path}[${index}]`));
	}
	if (isSchema(value)) {
		const properties = isSchema(schema.properties) ? schema.properties : {};
		const required = Array.isArray(schema.required)
			? schema.required.filter((name): name is string => typeof name === 'string')
			: [];
		for (const name of required) if (!(name in value)) broken('is required', child(path, name));
		for (const [name, item] of Object.entries(value)) {
			const property = properties[name];
			if (isSchema(property)) checkAgainst(property, item, child(path, name));
			else if (schema.additionalProperties === false)
				broken('is not a field of this endpoint', child(path, name));
			else if (isSchema(schema.additionalProperties))
				checkAgainst(schema.additionalProperties, item, child(path, name));
		}
	}
	if (Array.isArray(schema.allOf))
		for (const part of schema.allOf) if (isSchema(part)) checkAgainst(part, value, path);
	for (const keyword of ['anyOf', 'oneOf'] as const) {
		const options = schema[keyword];
		if (!Array.isArray(options) || options.length === 0) continue;
		const attempts = options.filter(isSchema).map((option) => {
			const found: InputSchemaIssue[] = [];
			check(option, value, path, depth + 1, found, root);
			const followed = followRefs(option, root);
			return { found, sameType: followed?.type !== undefined && matchesType(value, followed.type) };
		});
		if (attempts.some(({ found }) => found.length === 0)) continue;
		// When one form has the value's type (an integer or null), its rule is the one that was broken.
		const typed = attempts.filter(({ sameType }) => sameType);
		if (typed.length === 1) issues.push(...typed[0].found.slice(0, MAX_PROBLEMS - issues.length));
		else broken('matches none of the forms the endpoint accepts');
	}
}

/** What is wrong with `input` for this schema, field by field (at most a few), or an empty list. */
export function inputSchemaIssues(schema: Schema, input: unknown): InputSchemaIssue[] {
	const issues: InputSchemaIssue[] = [];
	check(schema, input, '', 0, issues, schema);
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

/** How a front end shows one property: text, long text, number, whole number, yes/no, choice, URL, or JSON. */
export type SchemaFieldKind =
	| 'text'
	| 'longText'
	| 'number'
	| 'integer'
	| 'boolean'
	| 'enum'
	| 'url'
	| 'json';

export type SchemaOption = string | number | boolean;

/** One top-level property of an endpoint's input, as a form shows it. */
export interface SchemaField {
	name: string;
	/** The property's `title`, else its name. */
	title: string;
	description?: string;
	kind: SchemaFieldKind;
	required: boolean;
	/** The schema's `default`, when it suits the kind (a nullable's `null` does not). */
	default?: unknown;
	/** The choices of an `enum` field, in the schema's order (all of them, however many). */
	options?: SchemaOption[];
	/** What a JSON field holds, when the schema says: an object or an array. */
	jsonShape?: 'object' | 'array';
	/**
	 * A URL field the service downloads media from: the media types it reads, as the schema's
	 * `x-media` lists them (`audio/*,video/*`). A form may take a file for it instead of a URL.
	 */
	media?: string;
}

/** A schema read as fields; `schema` is what `inputFromFields` checks the filled fields against. */
export interface SchemaFieldsForm {
	kind: 'fields';
	fields: SchemaField[];
	schema: Schema;
}

/** A schema no form can show: the input is written as JSON, and `reason` is the sentence saying why. */
export interface SchemaJsonForm {
	kind: 'json';
	reason: string;
}

export type SchemaForm = SchemaFieldsForm | SchemaJsonForm;

/** A string this long or longer has room for paragraphs: a multi-line box. */
const LONG_TEXT_MIN_MAX_LENGTH = 501;
const URL_FORMATS = new Set(['uri', 'url', 'iri']);
const NUMBER_KEYWORDS = [
	'minimum',
	'maximum',
	'exclusiveMinimum',
	'exclusiveMaximum',
	'multipleOf',
];
const TEXT_KEYWORDS = ['minLength', 'maxLength', 'pattern'];

function isOption(value: unknown): value is SchemaOption {
	return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/** The schema's types other than `null` (a nullable field is an optional one). */
function typesOf(schema: Schema): string[] | undefined {
	if (schema.type === undefined) return undefined;
	const types = Array.isArray(schema.type) ? schema.type : [schema.type];
	return types.filter((type): type is string => typeof type === 'string' && type !== 'null');
}

function isNullOnly(schema: Schema): boolean {
	return schema.type === 'null' || ('const' in schema && schema.const === null);
}

/** A string field: a URL, one line, or several. */
function textKind(schema: Schema): SchemaFieldKind {
	if (typeof schema.format === 'string' && URL_FORMATS.has(schema.format)) return 'url';
	return typeof schema.maxLength === 'number' && schema.maxLength >= LONG_TEXT_MIN_MAX_LENGTH
		? 'longText'
		: 'text';
}

interface FieldShape {
	kind: SchemaFieldKind;
	options?: SchemaOption[];
	jsonShape?: 'object' | 'array';
}

/**
 * How a property is shown: `$ref`s followed, a one-part `allOf` unwrapped, `null` alternatives
 * dropped, constants gathered into a choice; a missing `type` inferred from the other keywords or
 * the default; anything else (objects, arrays, mixed forms, references that cannot be followed) JSON.
 */
function shapeOf(written: Schema, root: Schema, depth = 0): FieldShape {
	const json: FieldShape = { kind: 'json' };
	const schema = depth <= MAX_DEPTH ? unwrapped(written, root) : undefined;
	if (!schema) return json;
	const { anyOf, oneOf } = schema;
	// A one-part allOf whose part cannot be followed stays: its shape is unknown.
	if (Array.isArray(schema.allOf) && schema.allOf.length === 1) return json;
	if ('const' in schema)
		return isOption(schema.const) ? { kind: 'enum', options: [schema.const] } : json;
	if (Array.isArray(schema.enum)) {
		const options = schema.enum.filter(isOption);
		return options.length > 0 ? { kind: 'enum', options } : json;
	}
	const alternatives = Array.isArray(anyOf) ? anyOf : Array.isArray(oneOf) ? oneOf : undefined;
	if (alternatives) {
		const followed = alternatives.map((option) =>
			isSchema(option) ? followRefs(option, root) : undefined,
		);
		if (followed.some((option) => option === undefined)) return json;
		const kept = followed.filter((option): option is Schema => !!option && !isNullOnly(option));
		if (kept.length === 1) {
			const { anyOf: _any, oneOf: _one, ...own } = schema;
			return shapeOf({ ...kept[0], ...own }, root, depth + 1);
		}
		const shapes = kept.map((option) => shapeOf(option, root, depth + 1));
		return shapes.length > 0 && shapes.every((shape) => shape.kind === 'enum')
			? { kind: 'enum', options: [...new Set(shapes.flatMap((shape) => shape.options ?? []))] }
			: json;
	}
	const types = typesOf(schema);
	if (types !== undefined) {
		if (types.length !== 1) return json;
		const [type] = types;
		if (type === 'string') return { kind: textKind(schema) };
		if (type === 'integer' || type === 'number' || type === 'boolean') return { kind: type };
		return type === 'object' || type === 'array' ? { kind: 'json', jsonShape: type } : json;
	}
	const has = (keywords: string[]) => keywords.some((keyword) => keyword in schema);
	if (has(['properties', 'additionalProperties'])) return { kind: 'json', jsonShape: 'object' };
	if (has(['items', 'prefixItems'])) return { kind: 'json', jsonShape: 'array' };
	if (typeof schema.format === 'string' || has(TEXT_KEYWORDS)) return { kind: textKind(schema) };
	if (has(NUMBER_KEYWORDS)) return { kind: 'number' };
	if (typeof schema.default === 'string') return { kind: textKind(schema) };
	if (typeof schema.default === 'boolean') return { kind: 'boolean' };
	if (typeof schema.default === 'number')
		return { kind: Number.isInteger(schema.default) ? 'integer' : 'number' };
	return json;
}

function defaultSuits(value: unknown, shape: FieldShape): boolean {
	switch (shape.kind) {
		case 'text':
		case 'longText':
		case 'url':
			return typeof value === 'string';
		case 'number':
			return typeof value === 'number';
		case 'integer':
			return Number.isInteger(value);
		case 'boolean':
			return typeof value === 'boolean';
		case 'enum':
			return isOption(value) && (shape.options ?? []).includes(value);
		case 'json':
			return value !== null && value !== undefined;
	}
}

/** The schema with its `$ref`s followed and a one-part `allOf` unwrapped, own keywords on top. */
function unwrapped(written: Schema, root: Schema): Schema | undefined {
	const schema = followRefs(written, root);
	if (!schema || !Array.isArray(schema.allOf) || schema.allOf.length !== 1) return schema;
	const [part] = schema.allOf;
	const inner = isSchema(part) ? followRefs(part, root) : undefined;
	if (!inner) return schema;
	const { allOf: _unwrapped, ...own } = schema;
	return { ...inner, ...own };
}

function fieldOf(name: string, written: Schema, root: Schema, required: boolean): SchemaField {
	const schema = unwrapped(written, root) ?? written;
	const shape = shapeOf(written, root);
	const field: SchemaField = {
		name,
		title: typeof schema.title === 'string' && schema.title.trim() !== '' ? schema.title : name,
		kind: shape.kind,
		required,
	};
	if (typeof schema.description === 'string' && schema.description.trim() !== '')
		field.description = schema.description;
	if ('default' in schema && defaultSuits(schema.default, shape)) field.default = schema.default;
	if (shape.options) field.options = shape.options;
	if (shape.jsonShape) field.jsonShape = shape.jsonShape;
	if (shape.kind === 'url' && typeof schema[MEDIA_KEYWORD] === 'string')
		field.media = schema[MEDIA_KEYWORD];
	return field;
}

function jsonForm(why: string): SchemaJsonForm {
	return { kind: 'json', reason: `${why}, so its input is written as JSON.` };
}

/**
 * An endpoint's published input schema as form fields, one per top-level property, in the schema's
 * order; or, when the schema cannot be shown as fields, the verdict that the input is written as JSON
 * with the sentence saying why.
 */
export function readSchemaForm(inputSchema: string | undefined): SchemaForm {
	if (inputSchema === undefined || inputSchema.trim() === '')
		return jsonForm('The endpoint publishes no input schema');
	let parsed: unknown;
	try {
		parsed = JSON.parse(inputSchema);
	} catch {
		return jsonForm("The endpoint's input schema is not valid JSON");
	}
	if (!isSchema(parsed)) return jsonForm("The endpoint's input schema is not a JSON object");
	const root = parsed;
	const followed = followRefs(root, root);
	if (!followed) {
		return typeof root.$ref === 'string' && !root.$ref.startsWith('#')
			? jsonForm(`The endpoint's input schema points outside the schema ($ref ${root.$ref})`)
			: jsonForm("The endpoint's input schema has a $ref that leads nowhere");
	}
	const schema = unwrapped(followed, root) ?? followed;
	const alternatives = [schema.anyOf, schema.oneOf].find(Array.isArray);
	if (alternatives && alternatives.length > 1)
		return jsonForm('The endpoint accepts one of several shapes of input');
	const types = typesOf(schema);
	if (types !== undefined && !types.includes('object')) {
		const type = typeName(types);
		return jsonForm(
			`The endpoint takes ${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type} as its input, not named fields`,
		);
	}
	const { properties } = schema;
	if (!isSchema(properties) || Object.keys(properties).length === 0)
		return jsonForm("The endpoint's input schema names no properties");
	const required = new Set(Array.isArray(schema.required) ? schema.required : []);
	const fields = Object.entries(properties).map(([name, property]) =>
		fieldOf(name, isSchema(property) ? property : {}, root, required.has(name)),
	);
	return { kind: 'fields', fields, schema: root };
}

type Converted = { value: unknown } | { rule: string };

const DECIMAL = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

function numberFrom(raw: unknown): number | undefined {
	if (typeof raw === 'number') return Number.isFinite(raw) ? raw : undefined;
	if (typeof raw === 'string' && DECIMAL.test(raw.trim())) return Number(raw.trim());
	return undefined;
}

/** A filled value (typed, as n8n gives it, or text, as a Slack form gives it) as the field's type. */
function convert(field: SchemaField, raw: unknown): Converted {
	switch (field.kind) {
		case 'text':
		case 'longText':
		case 'url': {
			if (typeof raw === 'number' || typeof raw === 'boolean') return { value: String(raw) };
			if (typeof raw !== 'string') return { rule: 'must be text' };
			return { value: field.kind === 'url' ? raw.trim() : raw };
		}
		case 'number':
		case 'integer': {
			const number = numberFrom(raw);
			if (number === undefined) return { rule: 'must be a number' };
			if (field.kind === 'integer' && !Number.isInteger(number))
				return { rule: 'must be a whole number' };
			return { value: number };
		}
		case 'boolean': {
			if (typeof raw === 'boolean') return { value: raw };
			const text = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
			if (text === 'true' || text === 'false') return { value: text === 'true' };
			return { rule: 'must be true or false' };
		}
		case 'enum': {
			const options = field.options ?? [];
			const match = options.find((option) => option === raw || String(option) === String(raw));
			return match === undefined
				? { rule: `must be one of ${describeOptions(options)}` }
				: { value: match };
		}
		case 'json': {
			if (typeof raw !== 'string') return { value: raw };
			try {
				return { value: JSON.parse(raw) };
			} catch (error) {
				return { rule: `must be JSON (${error instanceof Error ? error.message : 'unreadable'})` };
			}
		}
	}
}

function isBlank(raw: unknown): boolean {
	return raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '');
}

/**
 * The input a form's filled fields make, checked against the schema: each value converted to its
 * field's type, blank optional fields left out, and every problem named by its field (`path`).
 * `base` holds what the form takes as JSON beside its fields (an "advanced" box); fields win over it.
 */
export function inputFromFields(
	form: SchemaFieldsForm,
	values: Readonly<Record<string, unknown>>,
	base: Readonly<Record<string, unknown>> = {},
): { input: Record<string, unknown>; issues: InputSchemaIssue[] } {
	const input: Record<string, unknown> = { ...base };
	const issues: InputSchemaIssue[] = [];
	for (const field of form.fields) {
		const raw = values[field.name];
		if (isBlank(raw)) {
			if (field.required && !(field.name in input))
				issues.push({ path: field.name, rule: 'is required' });
			continue;
		}
		const converted = convert(field, raw);
		if ('rule' in converted) issues.push({ path: field.name, rule: converted.rule });
		else input[field.name] = converted.value;
	}
	const named = new Set(issues.map(({ path }) => path));
	for (const issue of inputSchemaIssues(form.schema, input))
		if (!named.has(issue.path.split(/[.[]/)[0])) issues.push(issue);
	return { input, issues };
}
