import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';
import { z } from 'zod/v4';
import {
	LIMITS,
	PRESIGN_MAX_SECONDS,
	TRANSCRIPTION_ENDPOINT,
	TRANSLATION_LANGUAGES,
	httpUrlSchema,
	transcriptionInputSchema,
	type TranscriptionInput,
} from '../../../../shared';
import {
	BinaryUploads,
	withUploadsDeletedAfter,
	linkLifetimeSchema,
	linkLifetimeSeconds,
} from '../../helpers/binary-upload';
import { createAndWaitForJobs, readWaitSettings } from '../../helpers/jobs';
import { readConcurrency } from '../../helpers/items';
import { jobFormat, transcriptionOutput } from '../../helpers/output';
import { check, checkName, fieldError, readCollection, readString } from '../../helpers/parameters';
import { hasObjectStorage } from '../../transport/storage';
import { concurrencyOption, NAME_HINT, waitProperties } from '../common.descriptions';
import { metadataOption } from '../job/create.operation';
import { readMetadata } from '../job/request';

const properties: INodeProperties[] = [
	{
		displayName: 'Source',
		name: 'source',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'URL',
				value: 'url',
				description: 'A direct-download link GPU Cloud can read without logging in',
			},
			{
				name: 'Binary File',
				value: 'binaryFile',
				description:
					'A file from an earlier node, put in your object storage and handed over as an expiring link',
			},
		],
		default: 'url',
	},
	{
		displayName: 'Input Binary Field',
		name: 'binaryPropertyName',
		type: 'string',
		default: 'data',
		required: true,
		displayOptions: { show: { source: ['binaryFile'] } },
		description: `The binary field of the input item holding the audio or video file, smaller than ${LIMITS.transcriptionMaxBytes / 1e9} GB`,
		hint: 'Uploaded to the bucket of the GPU Cloud Object Storage credential, then deleted when the job ends',
	},
	{
		displayName: 'Audio or Video URL',
		name: 'url',
		type: 'string',
		default: '',
		required: true,
		displayOptions: { show: { source: ['url'] } },
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
			{
				displayName: 'Keep Uploaded File',
				name: 'keepUploadedFile',
				type: 'boolean',
				default: false,
				displayOptions: { show: { '/source': ['binaryFile'] } },
				description:
					'Whether to leave the uploaded file in the bucket after the job (its link still expires)',
			},
			{
				displayName: 'Link Lifetime (Minutes)',
				name: 'linkLifetimeMinutes',
				type: 'number',
				typeOptions: { minValue: 1, maxValue: PRESIGN_MAX_SECONDS / 60, numberPrecision: 0 },
				default: 60,
				displayOptions: { show: { '/source': ['binaryFile'] } },
				description:
					'How long GPU Cloud may download the uploaded file; without this option, as long as the node waits (Timeout), at most 7 days',
			},
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

const transcriptionOptionsSchema = transcriptionInputSchema.omit({ url: true });
type TranscriptionOptionsInput = z.infer<typeof transcriptionOptionsSchema>;

/** The job input's options from the node's fields, in the service's names; empty text fields are left out. */
function transcriptionOptionsInput(
	options: z.infer<typeof optionsSchema>,
): TranscriptionOptionsInput {
	const text = (value: string | undefined) =>
		value && value.trim() !== '' ? value.trim() : undefined;
	const input = {
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
	return check(transcriptionOptionsSchema, defined, 'Transcription');
}

const sourceSchema = z.enum(['url', 'binaryFile']);
/**
 * Where GPU Cloud reads the file: the URL given, or the item's binary file put in object storage
 * (with its key, to delete after the job unless the user keeps it).
 */
async function fileUrl(
	context: IExecuteFunctions,
	uploads: BinaryUploads,
	itemIndex: number,
	options: Record<string, unknown>,
	waitTimeoutMs: number,
): Promise<{ url: string; uploadedObjects?: string[] }> {
	const source = check(
		sourceSchema,
		context.getNodeParameter('source', itemIndex, 'url'),
		'Source',
	);
	if (source === 'url')
		return {
			url: check(httpUrlSchema, readString(context, 'url', itemIndex).trim(), 'Audio or Video URL'),
		};
	if (!hasObjectStorage(context))
		throw fieldError(
			'Source',
			'is Binary File, which needs a GPU Cloud Object Storage API credential on this node (the bucket GPU Cloud downloads the file from)',
		);
	const lifetimeSeconds =
		options.linkLifetimeMinutes === undefined
			? linkLifetimeSeconds(waitTimeoutMs)
			: check(linkLifetimeSchema, options.linkLifetimeMinutes, 'Link Lifetime (Minutes)') * 60;
	const property = readString(context, 'binaryPropertyName', itemIndex, 'data').trim();
	const uploaded = await uploads.upload(
		itemIndex,
		property,
		'Input Binary Field',
		lifetimeSeconds,
		'transcriptions',
	);
	return options.keepUploadedFile === true
		? { url: uploaded.url }
		: { url: uploaded.url, uploadedObjects: [uploaded.key] };
}

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	return withUploadsDeletedAfter(this, (uploads) =>
		createAndWaitForJobs(
			this,
			items,
			readConcurrency(this),
			async (i) => {
				const options = readCollection(this, 'options', i);
				const transcriptionOptions = transcriptionOptionsInput(
					check(
						optionsSchema,
						readCollection(this, 'transcriptionOptions', i),
						'Transcription Options',
					),
				);
				const metadata = readMetadata(options);
				const endpoint = checkName(
					typeof options.endpointName === 'string' ? options.endpointName : TRANSCRIPTION_ENDPOINT,
					'Endpoint Name',
				);
				const wait = readWaitSettings(this, i, true);
				// Every other field is checked before the file is uploaded.
				const { url, uploadedObjects } = await fileUrl(this, uploads, i, options, wait.timeoutMs);
				const input: TranscriptionInput = check(
					transcriptionInputSchema,
					{ url, ...transcriptionOptions },
					'Transcription',
				);
				return {
					endpoint,
					request: { input, ...(metadata === undefined ? {} : { metadata }) },
					wait,
					...(uploadedObjects === undefined ? {} : { uploadedObjects }),
				};
			},
			jobFormat(this, transcriptionOutput),
		),
	);
}
