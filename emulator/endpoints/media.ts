import { z } from 'zod/v4';
import { mediaUrlSchema } from '../../shared/schemas';
import { pick, randomFor, round, wordsOf } from '../determinism';
import { defineEndpoint, requireMedia, type Endpoint } from './types';
import { pcmWav } from '../wav';

const SUBJECTS = [
	'a red bicycle',
	'two people',
	'a small dog',
	'a mountain lake',
	'a city street',
	'a wooden table',
	'a sailing boat',
];
const PLACES = [
	'in a sunny park',
	'at night',
	'next to a window',
	'under a cloudy sky',
	'on a busy market',
	'in the snow',
];
const DOCUMENT_LINES = [
	'INVOICE No. 2024-0117',
	'Date: 12 March 2024',
	'Bill to: Example Trading Ltd.',
	'Item: GPU hours, 120 x $0.35',
	'Total due: $42.00',
	'Payment terms: 30 days',
	'Thank you for your business.',
];

const imageCaption = defineEndpoint({
	name: 'caption-image',
	display_name: 'Image Captioning',
	description: 'Describes the content of an image in one sentence.',
	readme: '# Image Captioning. Input: url of a publicly readable or signed image. Output: caption.',
	price_description: '$0.003 per image',
	mediaDescription: 'an image',
	input: z.strictObject({ url: mediaUrlSchema('image/*') }),
	output: z.object({ caption: z.string() }),
	process: (_input, context) => {
		const random = randomFor(requireMedia(context).sha256);
		return {
			ok: true,
			output: { caption: `A photo of ${pick(SUBJECTS, random)} ${pick(PLACES, random)}.` },
		};
	},
});

const documentOcr = defineEndpoint({
	name: 'document-ocr',
	display_name: 'Document OCR',
	description: 'Reads the printed text of a scanned document or photo.',
	readme:
		'# Document OCR. Input: url of a PDF or image and an optional language_code. Output: text, pages and lines.',
	price_description: '$1.50 per 1000 pages',
	mediaDescription: 'a PDF or an image',
	input: z.strictObject({
		url: mediaUrlSchema('application/pdf,image/*'),
		language_code: z.string({ error: 'must be a text value' }).optional(),
	}),
	output: z.object({ text: z.string(), pages: z.number().int(), lines: z.array(z.string()) }),
	process: (_input, context) => {
		const random = randomFor(requireMedia(context).sha256);
		const lines = DOCUMENT_LINES.slice(0, 3 + Math.floor(random() * (DOCUMENT_LINES.length - 2)));
		return {
			ok: true,
			output: { text: lines.join('\n'), pages: 1 + Math.floor(random() * 3), lines },
		};
	},
});

const SAMPLE_RATE = 8000;
const SECONDS_PER_WORD = 0.35;

/** A mono 8-bit WAV whose tone follows the words: real, playable audio of a plausible length. */
function speech(text: string): { wav: Buffer; seconds: number } {
	const words = wordsOf(text);
	const seconds = Math.min(30, Math.max(0.5, words.length * SECONDS_PER_WORD));
	const perWord = Math.round(SECONDS_PER_WORD * SAMPLE_RATE);
	const wav = pcmWav(seconds, SAMPLE_RATE, (i) => {
		const word = words[Math.floor(i / perWord) % Math.max(1, words.length)] ?? '';
		const pitch = 180 + (word.length % 8) * 30;
		return Math.sin((2 * Math.PI * pitch * i) / SAMPLE_RATE);
	});
	return { wav, seconds };
}

const textToSpeech = defineEndpoint({
	name: 'text-to-speech',
	display_name: 'Text to Speech',
	description: 'Turns text into spoken audio and returns a link to a WAV file.',
	readme:
		'# Text to Speech. Input: text (up to 5000 characters) and voice (alloy, echo or nova). Output: url of a WAV file and duration_in_seconds.',
	price_description: '$0.015 per 1000 characters',
	input: z.strictObject({
		text: z
			.string({ error: 'must be a text value' })
			.min(1, { error: 'must not be empty' })
			.max(5000, { error: 'must be at most 5000 characters' }),
		voice: z
			.enum(['alloy', 'echo', 'nova'], { error: 'must be "alloy", "echo" or "nova"' })
			.optional(),
	}),
	output: z.object({ url: z.string(), duration_in_seconds: z.number(), voice: z.string() }),
	process: (input, context) => {
		const { wav, seconds } = speech(input.text);
		const url = context.files.put('wav', 'audio/wav', wav);
		return {
			ok: true,
			output: { url, duration_in_seconds: round(seconds, 2), voice: input.voice ?? 'alloy' },
		};
	},
});

export const mediaEndpoints: readonly Endpoint[] = [imageCaption, documentOcr, textToSpeech];
