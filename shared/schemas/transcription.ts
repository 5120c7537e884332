import { z } from 'zod/v4';
import { mediaUrlSchema } from './media';

export const TRANSCRIPTION_ENDPOINT = 'transcribe';

/** The languages `llm_translation` supports; the service accepts them lower-case or capitalised. */
export const TRANSLATION_LANGUAGES = [
	'English',
	'French',
	'German',
	'Italian',
	'Portuguese',
	'Hindi',
	'Spanish',
	'Thai',
] as const;
export type TranslationLanguage = (typeof TRANSLATION_LANGUAGES)[number];

/** Returns the canonical language name, or undefined when the service does not support it. */
export function canonicalTranslationLanguage(name: string): TranslationLanguage | undefined {
	const wanted = name.trim().toLowerCase();
	return TRANSLATION_LANGUAGES.find((language) => language.toLowerCase() === wanted);
}

const llmTranslationSchema = z
	.string({ error: 'must be a comma-separated list of languages' })
	.superRefine((value, ctx) => {
		const names = value.split(',').map((part) => part.trim());
		if (names.some((part) => part.length === 0)) {
			ctx.addIssue({
				code: 'custom',
				message: 'must be a comma-separated list of languages with no empty entries',
			});
			return;
		}
		const unsupported = names.filter((part) => !canonicalTranslationLanguage(part));
		if (unsupported.length > 0) {
			ctx.addIssue({
				code: 'custom',
				message: `has unsupported language ${unsupported.map((u) => `"${u}"`).join(', ')}; supported: ${TRANSLATION_LANGUAGES.join(', ')}`,
			});
		}
	});

const flag = z.boolean({ error: 'must be true or false' });

export const transcriptionInputSchema = z.strictObject({
	url: mediaUrlSchema('audio/*,video/*'),
	language_code: z
		.string({ error: 'must be a text value' })
		.regex(/^[a-z]{2,3}(-[A-Za-z]{2,4})?$/, {
			error: 'must be a language code such as "en", "fr" or "pt-BR"',
		})
		.optional(),
	return_as_file: flag.optional(),
	word_level_timestamps: flag.optional(),
	sentence_level_timestamps: flag.optional(),
	diarization: flag.optional(),
	sentence_diarization: flag.optional(),
	srt: flag.optional(),
	srt_translation: flag.optional(),
	translate: z
		.literal('to_eng', { error: 'must be "to_eng" (the service translates into English only)' })
		.optional(),
	llm_translation: llmTranslationSchema.optional(),
	summarize: z
		.number({ error: 'must be a whole number of words' })
		.int({ error: 'must be a whole number of words' })
		.min(0, { error: 'must be 0 (off) or a positive word limit' })
		.optional(),
	custom_vocabulary: z.string({ error: 'must be a text value' }).optional(),
	custom_prompt: z.string({ error: 'must be a text value' }).optional(),
	classification_labels: z.string({ error: 'must be a text value' }).optional(),
	overall_classification: flag.optional(),
	overall_sentiment_analysis: flag.optional(),
});
export type TranscriptionInput = z.infer<typeof transcriptionInputSchema>;

const seconds = z.number();

export const transcriptionOutputSchema = z.looseObject({
	text: z.string().optional(),
	url: z.string().optional(),
	duration_in_seconds: seconds.optional(),
	duration: seconds.optional(),
	processing_time: seconds.optional(),
	summary: z.string().optional(),
	srt_content: z.string().optional(),
	llm_translation: z.record(z.string(), z.string()).optional(),
	sentence_level_timestamps: z
		.array(
			z.looseObject({
				text: z.string(),
				start: seconds,
				end: seconds,
				speaker: z.string().optional(),
			}),
		)
		.optional(),
	word_segments: z
		.array(
			z.looseObject({
				word: z.string(),
				start: seconds,
				end: seconds,
				score: z.number().optional(),
				speaker: z.string().optional(),
			}),
		)
		.optional(),
	error: z.string().optional(),
});
export type TranscriptionOutput = z.infer<typeof transcriptionOutputSchema>;
