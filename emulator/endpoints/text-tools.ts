import { z } from 'zod/v4';
import { TRANSLATION_LANGUAGES, canonicalTranslationLanguage } from '../../shared/schemas';
import { randomFor, round, wordsOf } from '../determinism';
import { defineEndpoint, type Endpoint } from './types';

const text = z
	.string({ error: 'must be a text value' })
	.min(1, { error: 'must not be empty' })
	.max(100_000, {
		error: 'must be at most 100000 characters',
	});
const wholeNumber = (min: number, max: number) =>
	z
		.number({ error: `must be a whole number from ${min} to ${max}` })
		.int({ error: `must be a whole number from ${min} to ${max}` })
		.min(min, { error: `must be a whole number from ${min} to ${max}` })
		.max(max, { error: `must be a whole number from ${min} to ${max}` });

const STOP_WORDS = new Set(
	'a an and are as at be but by for from has have in is it its of on or that the this to was were will with we you i they our your not'.split(
		' ',
	),
);
const POSITIVE = new Set(
	'good great excellent love happy nice wonderful fast helpful thanks thank amazing best like enjoy pleased'.split(
		' ',
	),
);
const NEGATIVE = new Set(
	'bad terrible awful hate sad slow broken poor worst angry problem fail failed error annoying disappointed'.split(
		' ',
	),
);

function terms(value: string): string[] {
	return wordsOf(value.toLowerCase())
		.map((word) => word.replace(/[^\p{L}\p{N}'-]/gu, ''))
		.filter((word) => word.length > 0);
}

function sentiment(value: string) {
	const words = terms(value);
	const score = words.reduce(
		(sum, word) => sum + (POSITIVE.has(word) ? 1 : NEGATIVE.has(word) ? -1 : 0),
		0,
	);
	const label = score > 0 ? 'positive' : score < 0 ? 'negative' : 'neutral';
	return {
		label,
		score: round(Math.max(-1, Math.min(1, score / Math.max(3, words.length / 4))), 3),
	};
}

const LANGUAGE_HINTS: Record<string, readonly string[]> = {
	en: ['the', 'and', 'is', 'of', 'to', 'with'],
	fr: ['le', 'la', 'les', 'et', 'est', 'avec', 'une', 'des'],
	de: ['der', 'die', 'das', 'und', 'ist', 'mit', 'nicht', 'ein'],
	es: ['el', 'los', 'las', 'y', 'es', 'con', 'una', 'por'],
	it: ['il', 'gli', 'e', 'è', 'con', 'una', 'per', 'che'],
	pt: ['o', 'os', 'e', 'é', 'com', 'uma', 'não', 'para'],
};

const translateText = defineEndpoint({
	name: 'translate-text',
	display_name: 'Text Translation',
	description: 'Translates text into one of eight languages.',
	readme:
		'# Text Translation. Input: text and target_language (English, French, German, Italian, Portuguese, Hindi, Spanish or Thai).',
	price_description: '$0.02 per 1000 characters',
	input: z.strictObject({
		text,
		target_language: z
			.string({ error: 'must be a language name' })
			.refine((name) => canonicalTranslationLanguage(name) !== undefined, {
				error: `must be one of ${TRANSLATION_LANGUAGES.join(', ')}`,
			}),
	}),
	output: z.object({ translation: z.string(), target_language: z.string() }),
	process: (input) => {
		const language = canonicalTranslationLanguage(input.target_language) ?? 'English';
		return {
			ok: true,
			output: { translation: `[${language}] ${input.text}`, target_language: language },
		};
	},
});

const summarizeText = defineEndpoint({
	name: 'summarize-text',
	display_name: 'Text Summary',
	description: 'Shortens long text to a summary with a word limit.',
	readme:
		'# Text Summary. Input: text and max_words (1-1000, default 50). Output: summary and word_count.',
	price_description: '$0.01 per 1000 words',
	input: z.strictObject({ text, max_words: wholeNumber(1, 1000).optional() }),
	output: z.object({ summary: z.string(), word_count: z.number().int() }),
	process: (input) => {
		const words = wordsOf(input.text).slice(0, input.max_words ?? 50);
		return { ok: true, output: { summary: words.join(' '), word_count: words.length } };
	},
});

const sentimentEndpoint = defineEndpoint({
	name: 'sentiment',
	display_name: 'Sentiment Analysis',
	description: 'Labels text as positive, negative or neutral with a score from -1 to 1.',
	readme:
		'# Sentiment Analysis. Input: text. Output: label (positive, negative, neutral) and score (-1 to 1).',
	price_description: '$0.005 per request',
	input: z.strictObject({ text }),
	output: z.object({ label: z.enum(['positive', 'negative', 'neutral']), score: z.number() }),
	process: (input) => ({ ok: true, output: sentiment(input.text) }),
});

const detectLanguage = defineEndpoint({
	name: 'detect-language',
	display_name: 'Language Detection',
	description: 'Guesses the language of a text and how sure it is.',
	readme:
		'# Language Detection. Input: text. Output: language_code (ISO 639-1) and confidence (0-1).',
	price_description: '$0.002 per request',
	input: z.strictObject({ text }),
	output: z.object({ language_code: z.string(), confidence: z.number() }),
	process: (input) => {
		const words = terms(input.text);
		let best = 'en';
		let bestHits = 0;
		for (const [code, hints] of Object.entries(LANGUAGE_HINTS)) {
			const hits = words.filter((word) => hints.includes(word)).length;
			if (hits > bestHits) [best, bestHits] = [code, hits];
		}
		return {
			ok: true,
			output: {
				language_code: best,
				confidence: round(Math.min(0.99, 0.5 + bestHits / Math.max(2, words.length)), 2),
			},
		};
	},
});

const textEmbedding = defineEndpoint({
	name: 'text-embedding',
	display_name: 'Text Embeddings',
	description: 'Turns text into a unit-length vector for search and clustering.',
	readme:
		'# Text Embeddings. Input: text and dimensions (8-1024, default 16). Output: embedding (numbers) and dimensions.',
	price_description: '$0.01 per 1000 requests',
	input: z.strictObject({ text, dimensions: wholeNumber(8, 1024).optional() }),
	output: z.object({ embedding: z.array(z.number()), dimensions: z.number().int() }),
	process: (input) => {
		const random = randomFor(input.text);
		const raw = Array.from({ length: input.dimensions ?? 16 }, () => random() * 2 - 1);
		const norm = Math.sqrt(raw.reduce((sum, value) => sum + value * value, 0)) || 1;
		return {
			ok: true,
			output: { embedding: raw.map((value) => round(value / norm, 6)), dimensions: raw.length },
		};
	},
});

const keywords = defineEndpoint({
	name: 'extract-keywords',
	display_name: 'Keyword Extraction',
	description: 'Finds the most frequent meaningful words of a text.',
	readme:
		'# Keyword Extraction. Input: text and count (1-50, default 5). Output: keywords, most frequent first.',
	price_description: '$0.005 per request',
	input: z.strictObject({ text, count: wholeNumber(1, 50).optional() }),
	output: z.object({ keywords: z.array(z.string()) }),
	process: (input) => {
		const counts = new Map<string, number>();
		for (const word of terms(input.text)) {
			if (!STOP_WORDS.has(word) && word.length > 2) counts.set(word, (counts.get(word) ?? 0) + 1);
		}
		const ranked = [...counts.entries()]
			.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
			.map(([word]) => word);
		return { ok: true, output: { keywords: ranked.slice(0, input.count ?? 5) } };
	},
});

const PII_PATTERNS: readonly [string, RegExp][] = [
	['email', /[\w.+-]+@[\w-]+\.[\w.-]+/g],
	['phone', /\+?\d[\d\s().-]{7,}\d/g],
];

const redactPii = defineEndpoint({
	name: 'redact-pii',
	display_name: 'PII Redaction',
	description: 'Replaces e-mail addresses and phone numbers in text with placeholders.',
	readme:
		'# PII Redaction. Input: text. Output: text with [EMAIL] and [PHONE] placeholders, and the number of redactions.',
	price_description: '$0.01 per 1000 characters',
	input: z.strictObject({ text }),
	output: z.object({ text: z.string(), redactions: z.number().int() }),
	process: (input) => {
		let redactions = 0;
		let result = input.text;
		for (const [kind, pattern] of PII_PATTERNS) {
			result = result.replace(pattern, () => {
				redactions++;
				return `[${kind.toUpperCase()}]`;
			});
		}
		return { ok: true, output: { text: result, redactions } };
	},
});

const FLAGGED_TERMS: Record<string, readonly string[]> = {
	violence: ['kill', 'attack', 'weapon'],
	harassment: ['idiot', 'stupid', 'loser'],
	spam: ['free money', 'click here', 'winner'],
};

const moderateText = defineEndpoint({
	name: 'moderate-text',
	display_name: 'Content Moderation',
	description: 'Flags text that looks violent, harassing or spammy.',
	readme:
		'# Content Moderation. Input: text. Output: flagged (true or false) and categories (true or false per category).',
	price_description: '$0.001 per request',
	input: z.strictObject({ text }),
	output: z.object({ flagged: z.boolean(), categories: z.record(z.string(), z.boolean()) }),
	process: (input) => {
		const lower = input.text.toLowerCase();
		const categories = Object.fromEntries(
			Object.entries(FLAGGED_TERMS).map(([category, list]) => [
				category,
				list.some((term) => lower.includes(term)),
			]),
		);
		return { ok: true, output: { flagged: Object.values(categories).some(Boolean), categories } };
	},
});

const echo = defineEndpoint({
	name: 'echo',
	display_name: 'Echo',
	description: 'Returns its input unchanged; handy for testing integrations.',
	readme: '# Echo. Any JSON input comes back as output.echo.',
	price_description: 'Free',
	input: z.unknown(),
	output: z.object({ echo: z.unknown() }),
	process: (input) => ({ ok: true, output: { echo: input } }),
});

/** The job duration multiplier of `batch-echo`: long enough to look at, or cancel, a running job. */
export const SLOW_DURATION_FACTOR = 20;

const batchEcho = defineEndpoint({
	name: 'batch-echo',
	display_name: 'Batch Echo',
	description: `Like Echo, but each job waits behind batch work and takes ${SLOW_DURATION_FACTOR} times as long; handy for testing status checks and cancellation.`,
	readme: '# Batch Echo. Any JSON input comes back as output.echo, slowly.',
	price_description: 'Free',
	durationFactor: SLOW_DURATION_FACTOR,
	input: z.unknown(),
	output: z.object({ echo: z.unknown() }),
	process: (input) => ({ ok: true, output: { echo: input } }),
});

export const textEndpoints: readonly Endpoint[] = [
	translateText,
	summarizeText,
	sentimentEndpoint,
	detectLanguage,
	textEmbedding,
	keywords,
	redactPii,
	moderateText,
	echo,
	batchEcho,
];
