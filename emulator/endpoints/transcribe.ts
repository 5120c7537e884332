import {
	TRANSCRIPTION_ENDPOINT,
	canonicalTranslationLanguage,
	transcriptionInputSchema,
	transcriptionOutputSchema,
	type TranscriptionInput,
} from '../../shared/schemas';
import { randomFor, round, wordsOf } from '../determinism';
import type { MediaFile } from '../media-download';
import { defineEndpoint, requireMedia, type ProcessContext } from './types';

/** What the emulated recordings say; each audio URL picks its own sentences. */
const SENTENCES = [
	'Welcome everyone to the weekly planning meeting.',
	'Today we will review the results from the last release.',
	'The new onboarding flow reduced support tickets by a third.',
	'We still see slow uploads from customers in the southern region.',
	'The data team finished migrating the reporting pipeline.',
	'Please send your updates before Thursday afternoon.',
	'Our next milestone is the public beta in early spring.',
	'The budget for cloud compute stays the same this quarter.',
	'Two new engineers join the platform team next Monday.',
	'Customer interviews point to pricing as the main question.',
	'We agreed to pause the mobile redesign until the audit is done.',
	'The incident last Tuesday was caused by an expired certificate.',
	'Marketing will publish the case study once legal approves it.',
	'Let us keep the demo short and focus on the search feature.',
	'Thanks for joining, and see you all next week.',
] as const;

const SECONDS_PER_WORD = 0.42;
const PAUSE_SECONDS = 0.6;
/** About how long one of the sentences above takes to say. */
const SECONDS_PER_SENTENCE = 3.5;

interface TimedSentence {
	text: string;
	start: number;
	end: number;
	speaker?: string;
	words: { word: string; start: number; end: number; score: number; speaker?: string }[];
}

/**
 * What the file says: sentences picked by its bytes' hash. A recording whose real length is known
 * (a WAV) gets as many sentences as fit, timed to end inside it.
 */
function recording(input: TranscriptionInput, media: MediaFile): TimedSentence[] {
	const random = randomFor(media.sha256);
	const guessed = 3 + Math.floor(random() * 5);
	const count =
		media.seconds === undefined
			? guessed
			: Math.min(guessed, Math.max(1, Math.floor(media.seconds / SECONDS_PER_SENTENCE)));
	const first = Math.floor(random() * SENTENCES.length);
	const diarized = input.diarization === true || input.sentence_diarization === true;
	const sentences: TimedSentence[] = [];
	let clock = round(0.2 + random() * 0.5, 2);
	for (let i = 0; i < count; i++) {
		const text = SENTENCES[(first + i) % SENTENCES.length] ?? SENTENCES[0];
		const speaker = diarized ? `SPEAKER_0${i % 2}` : undefined;
		const start = clock;
		const words = wordsOf(text).map((word) => {
			const wordStart = clock;
			clock = round(clock + SECONDS_PER_WORD, 2);
			return {
				word,
				start: wordStart,
				end: round(clock - 0.05, 2),
				score: round(0.8 + random() * 0.19, 3),
				...(speaker ? { speaker } : {}),
			};
		});
		sentences.push({
			text,
			start,
			end: round(clock - 0.05, 2),
			...(speaker ? { speaker } : {}),
			words,
		});
		clock = round(clock + PAUSE_SECONDS, 2);
	}
	return media.seconds === undefined ? sentences : fitted(sentences, media.seconds);
}

/** Scales every time so that the last word ends just before the recording does. */
function fitted(sentences: TimedSentence[], seconds: number): TimedSentence[] {
	const lastEnd = sentences[sentences.length - 1]?.end ?? 0;
	if (lastEnd === 0) return sentences;
	const scale = (seconds * 0.95) / lastEnd;
	const at = (time: number) => Math.min(round(time * scale, 2), round(seconds, 2));
	return sentences.map((sentence) => ({
		...sentence,
		start: at(sentence.start),
		end: at(sentence.end),
		words: sentence.words.map((word) => ({ ...word, start: at(word.start), end: at(word.end) })),
	}));
}

function srtTime(seconds: number): string {
	const ms = Math.round(seconds * 1000);
	const pad = (value: number, width = 2) => String(value).padStart(width, '0');
	return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)},${pad(ms % 1000, 3)}`;
}

function srt(sentences: readonly TimedSentence[]): string {
	return sentences
		.map((s, i) => `${i + 1}\n${srtTime(s.start)} --> ${srtTime(s.end)}\n${s.text}\n`)
		.join('\n');
}

function transcribe(input: TranscriptionInput, context: ProcessContext) {
	const media = requireMedia(context);
	const sentences = recording(input, media);
	const text = sentences.map((s) => s.text).join(' ');
	const lastEnd = sentences[sentences.length - 1]?.end ?? 0;
	const durationInSeconds = round(media.seconds ?? lastEnd + 0.8, 2);
	const output: Record<string, unknown> = {
		text,
		duration_in_seconds: durationInSeconds,
		duration: round(durationInSeconds / 3600, 6),
		processing_time: round(context.processingSeconds, 3),
	};
	if (input.sentence_level_timestamps) {
		output.sentence_level_timestamps = sentences.map(({ words: _words, ...sentence }) => sentence);
	}
	if (input.word_level_timestamps) output.word_segments = sentences.flatMap((s) => s.words);
	if (input.srt) output.srt_content = srt(sentences);
	if (input.summarize !== undefined && input.summarize > 0) {
		output.summary = wordsOf(`The recording covers: ${text}`).slice(0, input.summarize).join(' ');
	}
	if (input.llm_translation) {
		const translations: Record<string, string> = {};
		for (const name of input.llm_translation.split(',')) {
			const language = canonicalTranslationLanguage(name);
			if (language) translations[language] = `[${language}] ${text}`;
		}
		output.llm_translation = translations;
	}
	if (input.overall_sentiment_analysis) output.overall_sentiment = 'positive';
	if (input.overall_classification && input.classification_labels) {
		output.overall_classification = input.classification_labels.split(',')[0]?.trim();
	}
	if (!input.return_as_file) return output;
	const url = context.files.put('json', 'application/json', JSON.stringify(output));
	return {
		url,
		duration_in_seconds: output.duration_in_seconds,
		duration: output.duration,
		processing_time: output.processing_time,
	};
}

export const transcribeEndpoint = defineEndpoint({
	name: TRANSCRIPTION_ENDPOINT,
	display_name: 'Transcription',
	description:
		'Speech to text for one audio or video file per job, with optional word and sentence timestamps, speaker labels, subtitles, summaries and translations.',
	readme:
		'# Transcription. Create a job with input.url set to a signed, direct-download URL of one file (shorter than 2.5 hours, smaller than 3 GB). Options: word_level_timestamps, sentence_level_timestamps, diarization, srt, summarize (word limit, 0 = off), llm_translation (comma-separated: English, French, German, Italian, Portuguese, Hindi, Spanish, Thai), translate ("to_eng") and return_as_file.',
	price_description: '$0.10 per hour of audio',
	mediaDescription: 'an audio or video file',
	input: transcriptionInputSchema,
	output: transcriptionOutputSchema,
	process: (input, context) => ({ ok: true, output: transcribe(input, context) }),
});
