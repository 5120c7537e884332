import { inputSchemaProblems, parseInputSchema } from '../../shared/input-schema';
import { mediaFieldsOf } from '../../shared/schemas';
import type { Endpoint, ProcessResult } from './types';

/**
 * Endpoints whose published input schemas have the shapes real catalogues publish and a form must
 * still read: hand-written JSON Schema (`$ref`s into `definitions` and `$defs`, `allOf` around a
 * `$ref`, nullable `anyOf`, `oneOf` of constants, properties without a `type`, nested objects and
 * arrays, an external `$ref`), a very wide schema, a very long enum, and a schema that is not JSON.
 * Their jobs check the input with the same reading of the schema the front ends use.
 */

const OUTPUT_SCHEMA_JSON = JSON.stringify({
	type: 'object',
	properties: { received: { type: 'object' }, summary: { type: 'string' } },
});

/** Schemas authored as JSON, so they are published as they are written (compact, one line). */
function schemaEndpoint(
	catalogue: Omit<
		Endpoint,
		'durationFactor' | 'outputSchemaJson' | 'run' | 'mediaFields' | 'mediaDescription' | 'accepts'
	>,
	summary: (input: Record<string, unknown>) => string,
): Endpoint {
	const schema = parseInputSchema(catalogue.inputSchemaJson);
	const problemsOf = (input: unknown) => (schema ? inputSchemaProblems(schema, input) : []);
	return {
		...catalogue,
		durationFactor: 1,
		outputSchemaJson: OUTPUT_SCHEMA_JSON,
		// A field the schema marks as media is downloaded first, as for every endpoint.
		mediaFields: mediaFieldsOf(schema),
		mediaDescription: 'a file this endpoint reads',
		accepts: (input) => problemsOf(input).length === 0,
		run(input): ProcessResult {
			const problems = problemsOf(input);
			if (problems.length > 0) return { ok: false, error: `Invalid input: ${problems.join('; ')}` };
			if (typeof input !== 'object' || input === null || Array.isArray(input))
				return { ok: false, error: 'Invalid input: input must be an object' };
			const received = input as Record<string, unknown>;
			return { ok: true, output: { received, summary: summary(received) } };
		},
	};
}

const CATEGORIES = ['apparel', 'electronics', 'home', 'garden', 'toys', 'books', 'sports'];

/** Written the way Python services generate their schemas (pydantic v1 and v2 shapes mixed). */
export const PRODUCT_LISTING_SCHEMA = {
	title: 'ListingRequest',
	type: 'object',
	required: ['product_name', 'category'],
	properties: {
		product_name: {
			title: 'Product name',
			type: 'string',
			minLength: 1,
			maxLength: 200,
			description: 'What the product is called.',
		},
		category: { $ref: '#/definitions/Category' },
		tone: { allOf: [{ $ref: '#/$defs/Tone' }], default: 'friendly', description: 'How it sounds.' },
		max_words: {
			title: 'Max words',
			anyOf: [{ type: 'integer', minimum: 20, maximum: 2000 }, { type: 'null' }],
			default: null,
			description: 'Upper bound on the length of the listing.',
		},
		price: { title: 'Price', type: 'number', minimum: 0, description: 'In the shop currency.' },
		image_url: { title: 'Image URL', type: 'string', format: 'uri' },
		notes: {
			title: 'Notes',
			type: 'string',
			maxLength: 100000,
			description: 'Anything the writer should know.',
		},
		include_seo: { title: 'Include SEO keywords', type: 'boolean', default: true },
		language: { title: 'Language', enum: ['en', 'fr', 'de', 'es'], default: 'en' },
		temperature: { title: 'Creativity', minimum: 0, maximum: 2, default: 0.7 },
		length: { title: 'Length', oneOf: [{ const: 'short' }, { const: 'long' }] },
		features: {
			title: 'Features',
			type: 'array',
			items: { type: 'string' },
			description: 'One short phrase each.',
		},
		dimensions: { $ref: '#/definitions/Dimensions' },
		brand_kit: { $ref: 'https://schemas.example.com/brand-kit.json' },
	},
	definitions: {
		Category: { title: 'Category', type: 'string', enum: CATEGORIES },
		Dimensions: {
			title: 'Dimensions',
			type: 'object',
			properties: { width_cm: { type: 'number' }, height_cm: { type: 'number' } },
		},
	},
	$defs: { Tone: { title: 'Tone', type: 'string', enum: ['friendly', 'formal', 'playful'] } },
};

const productListing = schemaEndpoint(
	{
		name: 'product-listing',
		display_name: 'Product Listing Writer',
		description: 'Writes a shop listing from a product name, a category and a few facts.',
		readme:
			'# Product Listing Writer. Input: product_name and category, plus optional tone, length, features and more.',
		price_description: '$0.01 per listing',
		inputSchemaJson: JSON.stringify(PRODUCT_LISTING_SCHEMA),
	},
	(input) => `A ${String(input.tone ?? 'friendly')} listing for ${String(input.product_name)}.`,
);

export const WIDE_FORM_FIELDS = 300;

/** A survey-extraction schema with one property per question, as form services publish them. */
function wideFormSchema(): Record<string, unknown> {
	const properties: Record<string, unknown> = {};
	for (let n = 1; n <= WIDE_FORM_FIELDS; n++) {
		const name = `q${String(n).padStart(3, '0')}`;
		const title = `Question ${n}`;
		const description = `The answer to question ${n} of the intake survey.`;
		properties[name] =
			n % 4 === 0
				? { title, description, type: 'boolean' }
				: n % 4 === 1
					? { title, description, type: 'string', maxLength: 500 }
					: n % 4 === 2
						? { title, description, type: 'integer', minimum: 0, maximum: 10 }
						: { title, description, type: 'string', enum: ['yes', 'no', 'unsure'] };
	}
	return { type: 'object', required: ['q001', 'q002'], properties };
}

const surveyIntake = schemaEndpoint(
	{
		name: 'survey-intake',
		display_name: 'Survey Intake',
		description: `Scores an intake survey of ${WIDE_FORM_FIELDS} questions.`,
		readme: `# Survey Intake. Input: the answers q001 to q${WIDE_FORM_FIELDS}; q001 and q002 are required.`,
		price_description: '$0.002 per survey',
		inputSchemaJson: JSON.stringify(wideFormSchema()),
	},
	(input) => `${Object.keys(input).length} answers scored.`,
);

export const VOICE_COUNT = 500;
const ACCENTS = ['us', 'gb', 'au', 'in', 'ie'];

/** `en-us-voice-001`...: as many voices as a large speech catalogue lists. */
export const VOICES: readonly string[] = Array.from(
	{ length: VOICE_COUNT },
	(_, n) => `en-${ACCENTS[n % ACCENTS.length]}-voice-${String(n + 1).padStart(3, '0')}`,
);

const voiceOver = schemaEndpoint(
	{
		name: 'voice-over',
		display_name: 'Voice Over',
		description: `Reads a script aloud in one of ${VOICE_COUNT} voices.`,
		readme: `# Voice Over. Input: script and voice (one of ${VOICE_COUNT}); speed is optional.`,
		price_description: '$0.02 per 1000 characters',
		inputSchemaJson: JSON.stringify({
			type: 'object',
			required: ['script', 'voice'],
			properties: {
				script: { title: 'Script', type: 'string', minLength: 1, maxLength: 5000 },
				voice: { title: 'Voice', type: 'string', enum: VOICES, description: 'Who reads it.' },
				speed: { title: 'Speed', type: 'number', minimum: 0.5, maximum: 2, default: 1 },
			},
		}),
	},
	(input) => `${String(input.script).length} characters read by ${String(input.voice)}.`,
);

/** A legacy endpoint that publishes prose where its schema should be. */
const legacyOcr = schemaEndpoint(
	{
		name: 'legacy-ocr',
		display_name: 'Legacy OCR',
		description: 'Reads the text of a scanned page (older service).',
		readme: '# Legacy OCR. Input: url of a scanned page.',
		price_description: '$0.005 per page',
		inputSchemaJson: 'url: string (required), language: string',
	},
	(input) => `Read ${String(input.url)}.`,
);

export const formShapeEndpoints: readonly Endpoint[] = [
	productListing,
	surveyIntake,
	voiceOver,
	legacyOcr,
];
