import {
	TRANSCRIPTION_ENDPOINT,
	transcriptionOutputSchema,
	type Job,
	type TranscriptionOutput,
} from '../../shared/schemas';
import type { ResultPart, SlackMessage } from '../model';
import {
	codeBlock,
	context,
	escapeText,
	escapeWithin,
	formatDuration,
	readableJson,
	section,
	SLACK_LIMITS,
	truncate,
} from './format';

/** Output longer than this goes into an uploaded file, with a preview in the message. */
export const INLINE_OUTPUT_LIMIT = 2500;
const PREVIEW_LENGTH = 1200;

/** Short, stable tag for file names: the first block of the job or request id. */
export function shortRef(ref: string): string {
	return ref.split('-')[0].slice(0, 12);
}

/** `text` is the notification fallback, already escaped by the caller. */
function message(key: string, text: string, blocks: SlackMessage['blocks']): ResultPart {
	return {
		kind: 'message',
		key,
		message: { text: truncate(text, SLACK_LIMITS.fallbackText), blocks },
	};
}

function textFile(filename: string, title: string, content: string): ResultPart {
	return {
		kind: 'file',
		key: filename,
		file: { filename, title, content: Buffer.from(content, 'utf8') },
	};
}

/** The service's failure text: the `error` member of a failed job's output, else the output itself. */
export function failureDetail(output: unknown): string {
	if (output && typeof output === 'object' && 'error' in output) {
		const error = (output as { error: unknown }).error;
		return typeof error === 'string' ? error : readableJson(error);
	}
	return output === undefined ? 'The service reported no reason.' : readableJson(output);
}

function genericOutput(job: Job): ResultPart[] {
	const text = readableJson(job.output ?? null);
	const isJson = typeof job.output !== 'string';
	if (text.length <= INLINE_OUTPUT_LIMIT) {
		return [
			message(`${job.id}:result`, `Output: ${escapeWithin(text, SLACK_LIMITS.fallbackText - 10)}`, [
				section('*Output*'),
				section(codeBlock(text)),
			]),
		];
	}
	const filename = `output-${shortRef(job.id)}.${isJson ? 'json' : 'txt'}`;
	return [
		message(`${job.id}:result`, `Output (${text.length} characters, full text in ${filename})`, [
			section(
				`*Output* (${text.length.toLocaleString('en-US')} characters; the full output is in \`${filename}\` below)`,
			),
			section(codeBlock(`${text.slice(0, PREVIEW_LENGTH)}\n…`)),
		]),
		textFile(filename, `Job ${job.id} output`, text),
	];
}

function transcriptText(output: TranscriptionOutput): string {
	const parts = [`Transcript\n\n${output.text ?? ''}`];
	if (output.summary) parts.push(`Summary\n\n${output.summary}`);
	for (const [language, text] of Object.entries(output.llm_translation ?? {}))
		parts.push(`${language}\n\n${text}`);
	return parts.join('\n\n---\n\n');
}

function transcriptOutput(job: Job, output: TranscriptionOutput): ResultPart[] {
	const facts = [
		output.duration_in_seconds !== undefined
			? `${formatDuration(output.duration_in_seconds * 1000)} of audio`
			: undefined,
		output.processing_time !== undefined
			? `processed in ${formatDuration(output.processing_time * 1000)}`
			: undefined,
	].filter(Boolean);
	if (output.url && output.text === undefined) {
		return [
			message(`${job.id}:result`, `Transcript ready: ${escapeText(output.url)}`, [
				section(`*Transcript ready* (returned as a file): ${escapeText(output.url)}`),
				...(facts.length ? [context(facts.join(' · '))] : []),
			]),
		];
	}
	const text = output.text ?? '';
	const translations = Object.entries(output.llm_translation ?? {});
	const full = transcriptText(output);
	const long = text.length > INLINE_OUTPUT_LIMIT || full.length > INLINE_OUTPUT_LIMIT * 2;
	const filename = `transcript-${shortRef(job.id)}.txt`;
	const preview = (value: string, max: number) => escapeWithin(value, max);
	const blocks: SlackMessage['blocks'] = [
		section(
			`*Transcript*${facts.length ? ` (${facts.join(', ')})` : ''}\n${preview(text, long ? PREVIEW_LENGTH : INLINE_OUTPUT_LIMIT) || '_(no speech found)_'}`,
		),
	];
	if (output.summary)
		blocks.push(section(`*Summary*\n${preview(output.summary, INLINE_OUTPUT_LIMIT)}`));
	for (const [language, translated] of translations.slice(0, 10)) {
		blocks.push(section(`*${escapeText(language)}*\n${preview(translated, long ? 600 : 1500)}`));
	}
	if (long)
		blocks.push(
			context(
				`The full transcript${translations.length ? ' and translations are' : ' is'} in \`${filename}\` below.`,
			),
		);
	const parts: ResultPart[] = [
		message(`${job.id}:result`, `Transcript: ${escapeWithin(text, 500)}`, blocks),
	];
	if (long) parts.push(textFile(filename, 'Full transcript', full));
	if (output.word_segments?.length) {
		parts.push(
			textFile(
				`word-timestamps-${shortRef(job.id)}.json`,
				'Word timestamps',
				JSON.stringify(output.word_segments, null, 2),
			),
		);
	}
	return parts;
}

/** What goes into the thread when a job ends; each part posted once (see ResultPart). */
export function jobResultParts(job: Job, cancelledBy?: string): ResultPart[] {
	switch (job.status) {
		case 'succeeded': {
			const transcript =
				job.inference_endpoint_name === TRANSCRIPTION_ENDPOINT
					? transcriptionOutputSchema.safeParse(job.output)
					: undefined;
			return transcript?.success ? transcriptOutput(job, transcript.data) : genericOutput(job);
		}
		case 'failed': {
			const detail = failureDetail(job.output);
			return [
				message(`${job.id}:result`, `The job failed: ${escapeWithin(detail, 2000)}`, [
					section(`:x: *The job failed.*\n${codeBlock(detail, 2000)}`),
				]),
			];
		}
		case 'cancelled': {
			const by = cancelledBy ? ` by <@${cancelledBy}>` : '';
			return [
				message(`${job.id}:result`, `The job was cancelled${by}.`, [
					section(`:no_entry_sign: The job was cancelled${by}.`),
				]),
			];
		}
		default:
			return [];
	}
}

/** A failure the app ran into (the service's error detail), posted in the request's thread. */
export function errorParts(ref: string, action: string, detail: string): ResultPart[] {
	return [
		message(`${ref}:error`, `${escapeText(action)} failed: ${escapeWithin(detail, 2000)}`, [
			section(`:x: *${escapeText(action)} failed.*\n${escapeWithin(detail, 2500)}`),
		]),
	];
}

/** Every image of one request shares this prefix, which is how a thread shows what was uploaded. */
export function imageFilePrefix(ref: string): string {
	return `image-${shortRef(ref)}-`;
}

export function imageFilename(ref: string, index: number, extension: string): string {
	return `${imageFilePrefix(ref)}${index + 1}.${extension}`;
}

export function queueCreatedParts(
	ref: string,
	queue: { id: string; name: string; display_name: string; description?: string },
	project: string,
): ResultPart[] {
	const lines = [
		`:white_check_mark: Queue \`${escapeText(queue.name)}\` (${escapeText(queue.display_name)}) created in project \`${escapeText(project)}\`.`,
		`Queue id \`${escapeText(queue.id)}\``,
	];
	if (queue.description) lines.push(`_${escapeText(queue.description)}_`);
	return [
		message(
			`${ref}:result`,
			`Queue ${escapeText(queue.name)} created in project ${escapeText(project)}.`,
			[section(lines.join('\n'))],
		),
	];
}
