import {
	inputFromFields,
	inputSchemaProblems,
	readSchemaForm,
	type SchemaField,
	type SchemaFieldsForm,
} from '../../shared';
import {
	PRODUCT_LISTING_SCHEMA,
	VOICES,
	VOICE_COUNT,
	WIDE_FORM_FIELDS,
} from '../../emulator/endpoints/form-shapes';

/** The form of a schema the test expects to be read as fields. */
function fieldsOf(schema: unknown): SchemaFieldsForm {
	const form = readSchemaForm(JSON.stringify(schema));
	if (form.kind !== 'fields') throw new Error(`expected fields, got: ${form.reason}`);
	return form;
}

function field(form: SchemaFieldsForm, name: string): SchemaField {
	const found = form.fields.find((candidate) => candidate.name === name);
	if (!found) throw new Error(`no field ${name}`);
	return found;
}

describe('reading a published input schema as form fields', () => {
	it('reads each property as a field: title, description, kind, required, default', () => {
		const form = fieldsOf({
			type: 'object',
			required: ['text'],
			properties: {
				text: { type: 'string', maxLength: 100000, description: 'What to work on.' },
				title: { title: 'Headline', type: 'string', maxLength: 80 },
				count: { type: 'integer', minimum: 1, default: 3 },
				ratio: { type: 'number' },
				strict: { type: 'boolean', default: false },
				mode: { type: 'string', enum: ['fast', 'accurate'] },
				link: { type: 'string', format: 'uri' },
			},
		});
		expect(form.fields).toEqual([
			{
				name: 'text',
				title: 'text',
				description: 'What to work on.',
				kind: 'longText',
				required: true,
			},
			{ name: 'title', title: 'Headline', kind: 'text', required: false },
			{ name: 'count', title: 'count', kind: 'integer', required: false, default: 3 },
			{ name: 'ratio', title: 'ratio', kind: 'number', required: false },
			{ name: 'strict', title: 'strict', kind: 'boolean', required: false, default: false },
			{ name: 'mode', title: 'mode', kind: 'enum', required: false, options: ['fast', 'accurate'] },
			{ name: 'link', title: 'link', kind: 'url', required: false },
		]);
	});

	it('says what a media URL field reads (x-media), through a $ref too; a plain URL reads nothing', () => {
		const form = fieldsOf({
			type: 'object',
			properties: {
				audio: { type: 'string', format: 'uri', 'x-media': 'audio/*,video/*' },
				scan: { $ref: '#/$defs/Scan' },
				page: { type: 'string', format: 'uri' },
				note: { type: 'string', 'x-media': 'image/*' },
			},
			$defs: { Scan: { type: 'string', format: 'uri', 'x-media': 'application/pdf,image/*' } },
		});
		expect(field(form, 'audio')).toMatchObject({ kind: 'url', media: 'audio/*,video/*' });
		expect(field(form, 'scan').media).toBe('application/pdf,image/*');
		expect(field(form, 'page').media).toBeUndefined();
		// Media is a URL the service downloads: a text field marked so is still text.
		expect(field(form, 'note')).toMatchObject({ kind: 'text' });
		expect(field(form, 'note').media).toBeUndefined();
	});

	it('follows $ref into #/definitions and #/$defs, also through a one-item allOf', () => {
		const form = fieldsOf(PRODUCT_LISTING_SCHEMA);
		expect(field(form, 'category')).toMatchObject({
			kind: 'enum',
			required: true,
			title: 'Category',
			options: expect.arrayContaining(['apparel', 'books']),
		});
		expect(field(form, 'tone')).toMatchObject({
			kind: 'enum',
			title: 'Tone',
			default: 'friendly',
			description: 'How it sounds.',
			options: ['friendly', 'formal', 'playful'],
		});
		expect(field(form, 'dimensions')).toMatchObject({ kind: 'json', title: 'Dimensions' });
	});

	it('reads anyOf with null as an optional field of the other type, and oneOf of constants as a choice', () => {
		const form = fieldsOf(PRODUCT_LISTING_SCHEMA);
		expect(field(form, 'max_words')).toMatchObject({
			kind: 'integer',
			title: 'Max words',
			required: false,
		});
		expect(field(form, 'max_words')).not.toHaveProperty('default');
		expect(field(form, 'length')).toMatchObject({ kind: 'enum', options: ['short', 'long'] });
		const mixed = fieldsOf({
			type: 'object',
			properties: { source: { oneOf: [{ type: 'string' }, { type: 'object' }] } },
		});
		expect(field(mixed, 'source').kind).toBe('json');
	});

	it('infers a missing type from enum, format, bounds or default, and takes anything else as JSON', () => {
		const form = fieldsOf(PRODUCT_LISTING_SCHEMA);
		expect(field(form, 'language')).toMatchObject({ kind: 'enum', default: 'en' });
		expect(field(form, 'temperature')).toMatchObject({ kind: 'number', default: 0.7 });
		const untyped = fieldsOf({
			properties: {
				site: { format: 'uri' },
				label: { maxLength: 20 },
				anything: { description: 'Any value.' },
			},
		});
		expect(untyped.fields.map(({ name, kind }) => [name, kind])).toEqual([
			['site', 'url'],
			['label', 'text'],
			['anything', 'json'],
		]);
	});

	it('makes nested objects, arrays and external $refs JSON fields', () => {
		const form = fieldsOf(PRODUCT_LISTING_SCHEMA);
		expect(field(form, 'features')).toMatchObject({ kind: 'json', jsonShape: 'array' });
		expect(field(form, 'dimensions')).toMatchObject({ kind: 'json', jsonShape: 'object' });
		expect(field(form, 'brand_kit').kind).toBe('json');
		expect(field(form, 'brand_kit')).not.toHaveProperty('jsonShape');
	});

	it('keeps every value of a huge enum, in order', () => {
		const form = fieldsOf({
			type: 'object',
			properties: { voice: { type: 'string', enum: VOICES } },
		});
		expect(field(form, 'voice').options).toEqual(VOICES);
		expect(VOICES).toHaveLength(VOICE_COUNT);
	});

	it('falls back to JSON, saying why, for a schema it cannot turn into fields', () => {
		const cases: [string | undefined, RegExp][] = [
			[undefined, /publishes no input schema/],
			['', /publishes no input schema/],
			['url: string (required)', /not valid JSON/],
			['[1, 2]', /not a JSON object/],
			[JSON.stringify({ type: 'array', items: { type: 'string' } }), /takes an array/],
			[JSON.stringify({ type: 'object' }), /names no properties/],
			[
				JSON.stringify({
					oneOf: [
						{ type: 'object', properties: { url: { type: 'string' } } },
						{ type: 'object', properties: { text: { type: 'string' } } },
					],
				}),
				/one of several shapes/,
			],
			[JSON.stringify({ $ref: 'https://schemas.example.com/input.json' }), /outside the schema/],
		];
		for (const [schema, reason] of cases) {
			const form = readSchemaForm(schema);
			expect(form).toEqual({ kind: 'json', reason: expect.stringMatching(reason) });
		}
	});

	it('reads a top-level $ref and stops at a $ref cycle', () => {
		const form = fieldsOf({
			$ref: '#/$defs/Input',
			$defs: {
				Input: { type: 'object', properties: { node: { $ref: '#/$defs/Loop' } } },
				Loop: { $ref: '#/$defs/Loop' },
			},
		});
		expect(form.fields).toEqual([{ name: 'node', title: 'node', kind: 'json', required: false }]);
	});

	it(`reads a ${WIDE_FORM_FIELDS}-property schema published as a compact string near 100,000 characters`, () => {
		const properties: Record<string, unknown> = {};
		for (let n = 0; n < WIDE_FORM_FIELDS; n++)
			properties[`field_${n}`] = { type: 'string', description: 'x'.repeat(285) };
		const text = JSON.stringify({ type: 'object', properties });
		expect(text.length).toBeGreaterThan(90000);
		expect(text.length).toBeLessThanOrEqual(100000);
		const form = readSchemaForm(text);
		expect(form.kind === 'fields' && form.fields.length).toBe(WIDE_FORM_FIELDS);
	});
});

describe('turning filled fields back into an input', () => {
	const form = fieldsOf(PRODUCT_LISTING_SCHEMA);

	it('converts each field to its type and leaves empty optional fields out', () => {
		const result = inputFromFields(form, {
			product_name: 'Trail shoe',
			category: 'sports',
			max_words: '120',
			price: '59.5',
			include_seo: 'false',
			temperature: 1,
			features: '["light", "waterproof"]',
			dimensions: { width_cm: 10 },
			notes: '',
			image_url: '   ',
			tone: undefined,
		});
		expect(result).toEqual({
			input: {
				product_name: 'Trail shoe',
				category: 'sports',
				max_words: 120,
				price: 59.5,
				include_seo: false,
				temperature: 1,
				features: ['light', 'waterproof'],
				dimensions: { width_cm: 10 },
			},
			issues: [],
		});
	});

	it('names the field for a required field left empty, a wrong type, a value outside the schema and bad JSON', () => {
		const { issues } = inputFromFields(form, {
			product_name: '',
			category: 'cars',
			max_words: '12.5',
			price: 'cheap',
			features: '["light"',
		});
		expect(issues).toEqual(
			expect.arrayContaining([
				{ path: 'product_name', rule: 'is required' },
				{ path: 'category', rule: expect.stringMatching(/^must be one of "apparel"/) },
				{ path: 'max_words', rule: 'must be a whole number' },
				{ path: 'price', rule: 'must be a number' },
				{ path: 'features', rule: expect.stringMatching(/^must be JSON/) },
			]),
		);
	});

	it('checks the input against the schema, naming the field of a broken rule', () => {
		const { issues } = inputFromFields(form, {
			product_name: 'Lamp',
			category: 'home',
			max_words: 5,
			dimensions: '{"width_cm": "wide"}',
		});
		expect(issues).toEqual([
			{ path: 'max_words', rule: 'must be at least 20' },
			{ path: 'dimensions.width_cm', rule: 'must be number, not string' },
		]);
	});

	it('accepts a 100,000-character text and refuses one more, naming the field', () => {
		const ok = inputFromFields(form, {
			product_name: 'Book',
			category: 'books',
			notes: 'n'.repeat(100000),
		});
		expect(ok.issues).toEqual([]);
		const long = inputFromFields(form, {
			product_name: 'Book',
			category: 'books',
			notes: 'n'.repeat(100001),
		});
		expect(long.issues).toEqual([{ path: 'notes', rule: 'must have at most 100000 characters' }]);
	});

	it('matches a choice given as text to a number or boolean option', () => {
		const numeric = fieldsOf({
			type: 'object',
			properties: { level: { enum: [1, 2, 3] }, flag: { enum: [true, false] } },
		});
		expect(inputFromFields(numeric, { level: '2', flag: 'true' })).toEqual({
			input: { level: 2, flag: true },
			issues: [],
		});
	});

	it('names at most a few of a huge enum in its rule', () => {
		const voices = fieldsOf({ type: 'object', properties: { voice: { enum: VOICES } } });
		const { issues } = inputFromFields(voices, { voice: 'nobody' });
		expect(issues).toHaveLength(1);
		expect(issues[0].rule).toMatch(/^must be one of "en-us-voice-001", .* or one of 490 others$/);
		expect(inputSchemaProblems(voices.schema, { voice: 'nobody' })[0].length).toBeLessThan(400);
	});
});
