import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';
import { z } from 'zod/v4';
import {
	LIMITS,
	TRANSCRIPTION_ENDPOINT,
	TRANSLATION_LANGUAGES,
	httpUrlSchema,
	transcriptionInputSchema,
	type TranscriptionInput,
} from '../../../../shared';
import { createAndWaitForJobs, readWaitSettings } from '../../helpers/jobs';
import { readConcurrency } from '../../helpers/items';
import { jobFormat, transcriptionOutput } from '../../helpers/output';
import { check, checkName, readCollection, readString } from '../../helpers/parameters';
import { concurrencyOption, NAME_HINT, waitProperties } from '../common.descriptions';
import { metadataOption } from '../job/create.operation';
import { readMetadata } from '../job/request';

const properties: INodeProperties[] = [
	{
		displayName: 'Audio or Video URL',
		name: 'url',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. https://storage.example.com/interview.mp3?X-Signature=...',
		description: `A direct-download link to one file, shorter than ${LIMITS.transcriptionMaxSeconds / 3600} hours and smaller than ${LIMITS.transcriptionMaxBytes / 1e9} GB`,
		hint: 'Use a signed (self-authenticating) link: GPU Cloud cannot send login headers to fetch the file',
	},
	{
		displayName: 'Transcription Options',
		name: 'transcriptionOptions',
		type: 'collection',
		placeholder: 'Add transcription option',
		default: {},
		options: [
			{
				displayName: 'Classification Labels',
				name: 'classificationLabels',
				type: 'string',
				default: '',
				placeholder: 'e.g. complaint, question, praise',
				description: 'Comma-separated labels to classify the transcript with',
			},
			{
				displayName: 'Classify Whole Transcript',
				name: 'overallClassification',
				type: 'boolean',
				default: false,
				description: 'Whether to classify the whole transcript with the labels above',
			},
			{
				displayName: 'Custom Prompt',
				name: 'customPrompt',
				type: 'string',
				typeOptions: { rows: 3 },
				default: '',
				description: 'Instructions that guide the language model steps (summary, translation)',
			},
			{
				displayName: 'Custom Vocabulary',
				name: 'customVocabulary',
				type: 'string',
				default: '',
				placeholder: 'e.g. n8n, Kubernetes, Zoë',
				description: 'Comma-separated names and terms the speech model should expect',
			},
			{
				displayName: 'Identify Speakers',
				name: 'diarization',
				type: 'boolean',
				default: false,
				description: 'Whether to label words with the speaker who said them',
			},
			{
				displayName: 'Identify Speakers per Sentence',
				name: 'sentenceDiarization',
				type: 'boolean',
				default: false,
				description: 'Whether to label sentences with their speaker',
			},
			{
				displayName: 'Language Code',
				name: 'languageCode',
				type: 'string',
				default: '',
				placeholder: 'e.g. en, fr, pt-BR',
				description: 'The language spoken in the file; leave empty to detect it',
			},
			{
				displayName: 'Return Results as a File',
				name: 'returnAsFile',
				type: 'boolean',
				default: false,
				description:
					'Whether GPU Cloud should return a link to a results file instead of the text (results over 1 MB always come as a file)',
			},
			{
				displayName: 'Sentence Timestamps',
				name: 'sentenceLevelTimestamps',
				type: 'boolean',
				default: false,
				description: 'Whether to return each sentence with its start and end time (as "segments")',
			},
			{
				displayName: 'Sentiment Analysis',
				name: 'overallSentimentAnalysis',
				type: 'boolean',
				default: false,
				description: 'Whether to rate the sentiment of the whole transcript',
			},
			{
				displayName: 'Subtitles (SRT)',
				name: 'srt',
				type: 'boolean',
				default: false,
				description: 'Whether to return subtitles in SRT format (as "srt")',
			},
			{
				displayName: 'Subtitles of Translations (SRT)',
				name: 'srtTranslation',
				type: 'boolean',
				default: false,
				description: 'Whether to return SRT subtitles for the translations too',
			},
			{
				displayName: 'Summary Length (Words)',
				name: 'summarize',
				type: 'number',
				typeOptions: { minValue: 0 },
				default: 0,
				description:
					'Produce a summary of at most this many words (as "summary"); 0 means no summary',
			},
			{
				displayName: 'Translate Into',
				name: 'llmTranslation',
				type: 'multiOptions',
				options: TRANSLATION_LANGUAGES.map((language) => ({ name: language, value: language })),
				default: [],
				description:
					'Languages to translate the transcript into (as "translations.&lt;Language&gt;")',
			},
			{
				displayName: 'Translate to English (Speech Model)',
				name: 'translateToEnglish',
				type: 'boolean',
				default: false,
				description:
					'Whether the speech model itself should output English instead of the spoken language',
			},
			{
				displayName: 'Word Timestamps',
				name: 'wordLevelTimestamps',
				type: 'boolean',
				default: false,
				description: 'Whether to return each word with its start and end time (as "words")',
			},
		],
	},
	...waitProperties(true),
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [
			concurrencyOption,
			{
				displayName: 'Endpoint Name',
				name: 'endpointName',
				type: 'string',
				default: TRANSCRIPTION_ENDPOINT,
				hint: NAME_HINT,
				description: `The transcription endpoint to use, "${TRANSCRIPTION_ENDPOINT}" unless your organization runs another`,
			},
			metadataOption,
		],
	},
];

const displayOptions = { show: { resource: ['transcription'], operation: ['transcribe'] } };

export const description = updateDisplayOptions(displayOptions, properties);

const optionsSchema = z.object({
	classificationLabels: z.string().optional(),
	overallClassification: z.boolean().optional(),
	customPrompt: z.string().optional(),
	customVocabulary: z.string().optional(),
	diarization: z.boolean().optional(),
	sentenceDiarization: z.boolean().optional(),
	languageCode: z.string().optional(),
	returnAsFile: z.boolean().optional(),
	sentenceLevelTimestamps: z.boolean().optional(),
	overallSentimentAnalysis: z.boolean().optional(),
	srt: z.boolean().optional(),
	srtTranslation: z.boolean().optional(),
	summarize: z.number().optional(),
	llmTranslation: z.array(z.string()).optional(),
	translateToEnglish: z.boolean().optional(),
	wordLevelTimestamps: z.boolean().optional(),
});

/** The job input from the node's fields, in the service's names; empty text fields are left out. */
function transcriptionInput(
	url: string,
	options: z.infer<typeof optionsSchema>,
): TranscriptionInput {
	const text = (value: string | undefined) =>
		value && value.trim() !== '' ? value.trim() : undefined;
	const input = {
		url: check(httpUrlSchema, url.trim(), 'Audio or Video URL'),
		language_code: text(options.languageCode),
		return_as_file: options.returnAsFile,
		word_level_timestamps: options.wordLevelTimestamps,
		sentence_level_timestamps: options.sentenceLevelTimestamps,
		diarization: options.diarization,
		sentence_diarization: options.sentenceDiarization,
		srt: options.srt,
		srt_translation: options.srtTranslation,
		translate: options.translateToEnglish ? 'to_eng' : undefined,
		llm_translation: options.llmTranslation?.length ? options.llmTranslation.join(',') : undefined,
		summarize: options.summarize || undefined,
		custom_vocabulary: text(options.customVocabulary),
		custom_prompt: text(options.customPrompt),
		classification_labels: text(options.classificationLabels),
		overall_classification: options.overallClassification,
		overall_sentiment_analysis: options.overallSentimentAnalysis,
	};
	const defined = Object.fromEntries(
		Object.entries(input).filter(([, value]) => value !== undefined && value !== false),
	);
	return check(transcriptionInputSchema, defined, 'Transcription');
}

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	return await createAndWaitForJobs(
		this,
		items,
		readConcurrency(this),
		(i) => {
			const options = readCollection(this, 'options', i);
			const transcriptionOptions = check(
				optionsSchema,
				readCollection(this, 'transcriptionOptions', i),
				'Transcription Options',
			);
			const metadata = readMetadata(options);
			return {
				endpoint: checkName(
					typeof options.endpointName === 'string' ? options.endpointName : TRANSCRIPTION_ENDPOINT,
					'Endpoint Name',
				),
				request: {
					input: transcriptionInput(readString(this, 'url', i), transcriptionOptions),
					...(metadata === undefined ? {} : { metadata }),
				},
				wait: readWaitSettings(this, i, true),
			};
		},
		jobFormat(this, transcriptionOutput),
	);
}
