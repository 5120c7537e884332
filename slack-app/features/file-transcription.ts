import type { webApi } from '@slack/bolt';
import { z } from 'zod/v4';
import { acceptsMediaType, LIMITS } from '../../shared/schemas';
import { noticeMessage, serviceErrorMessage } from '../messages/errors';
import type { FileLink, FileRoute, SharedFile } from '../requests/file-links';
import type { RequestLifecycle } from '../requests/lifecycle';
import type { PrivateReply, RequestContext } from '../requests/outcome';
import { describeError, slackErrorCode } from '../slack/errors';
import type { ThreadRef } from '../model';
import type { JobService, PreparedInput } from './jobs';

type WebClient = webApi.WebClient;

/** The part of Slack's file object (files.info) a transcription reads. */
const slackFileSchema = z.looseObject({
	id: z.string(),
	name: z.string().default('file'),
	mimetype: z.string().default('application/octet-stream'),
	size: z.number().int().nonnegative(),
	duration_ms: z.number().nonnegative().optional(),
	url_private_download: z.url().optional(),
	url_private: z.url().optional(),
});

/** Why a file cannot be sent without a public address or storage: said to the person, for the operator. */
function noFileRoute(what: string, meanwhile: string): string {
	return `GPU Cloud reads ${what} only from an address it can download, and this app has none to give it: it has no public address (it runs in Socket Mode, or without SLACK_PUBLIC_URL) and no object storage. An operator can set SLACK_PUBLIC_URL to the public HTTPS address of the app, or object storage (SLACK_STORAGE_ENDPOINT, with its bucket and keys). ${meanwhile}`;
}

export const NO_FILE_ROUTE = noFileRoute(
	'a recording',
	'Meanwhile, `/gpu transcribe <url>` takes a direct download link.',
);
/** The same, on a job form's file input (a field error shows no formatting). */
export const NO_FORM_FILE_ROUTE = noFileRoute(
	'a file',
	'Meanwhile, the URL box above takes a direct download link.',
);

/** A file attached for one field of a job's input. */
export interface AttachedFile {
	field: string;
	file: SharedFile;
}

/** A file as the bot sees it, or the sentence saying why it cannot (`failed`: Slack's call failed). */
export type SeenFile = { file: SharedFile } | { problem: string; failed?: true };

export interface FileTranscriptionOptions {
	client: WebClient;
	jobs: JobService;
	lifecycle: RequestLifecycle;
	team: string;
	/** How files reach GPU Cloud: object storage, or the app's own links (a public address); none otherwise. */
	links?: FileRoute;
}

/**
 * Transcribes a file shared in Slack (the message shortcut, a file sent to the app, the Workflow
 * Builder step): Slack's file object says what the file is; the spec's limits and the app's means
 * of handing it over are checked before any job; the service reads the file through a link the
 * app serves for that job only.
 */
export class FileTranscription {
	constructor(private readonly options: FileTranscriptionOptions) {}

	/**
	 * `thread`: where the file was shared (its thread's root); the parent and the transcript go
	 * there. Without it (a workflow step) the parent is a new message in the context's channel.
	 */
	async transcribe(
		context: RequestContext,
		fileId: string,
		{ step, thread }: { step?: string; thread?: ThreadRef } = {},
	): Promise<PrivateReply> {
		const { lifecycle, links, jobs } = this.options;
		const refused = lifecycle.refusal(context);
		if (refused) return refused;
		if (!links) return noticeMessage(NO_FILE_ROUTE);
		const seen = await this.see(fileId);
		if ('problem' in seen)
			return seen.failed
				? serviceErrorMessage('Reading the file from Slack', seen.problem)
				: noticeMessage(seen.problem);
		const file = seen.file;
		const problem = fileProblem(file);
		if (problem) return noticeMessage(problem);
		return jobs.transcribePrepared(context, {
			subject: { kind: 'transcribe', url: '', file: file.name },
			prepare: this.linkedInput({}, [{ field: 'url', file }]),
			thread,
			step,
		});
	}

	/** Whether the app has a way to hand files to GPU Cloud (storage, or its own public links). */
	get canSend(): boolean {
		return this.options.links !== undefined;
	}

	/**
	 * Makes the input of a job reading attached files: when the job is about to be created, each
	 * file gets a link (or a stored copy) for that job, and its field that URL; the links end with the
	 * job, or at once when no job was created.
	 */
	linkedInput(
		input: Readonly<Record<string, unknown>>,
		attached: readonly AttachedFile[],
	): () => Promise<PreparedInput> {
		const { links: route, team } = this.options;
		return async () => {
			if (!route) throw new Error(NO_FILE_ROUTE);
			const links: FileLink[] = [];
			try {
				for (const { file } of attached) links.push(await route.create(team, file));
			} catch (error) {
				await Promise.all(links.map((link) => link.revoke()));
				throw error;
			}
			const linked = { ...input };
			attached.forEach(({ field }, index) => (linked[field] = links[index].url));
			return {
				input: linked,
				created: async (job) => {
					const ref = { endpoint: job.inference_endpoint_name, id: job.id };
					await Promise.all(links.map((link) => link.bind(ref)));
				},
				ended: async () => {
					await Promise.all(links.map((link) => link.revoke()));
				},
			};
		};
	}

	/** The file as the bot sees it (files.info), or the sentence saying why it cannot. */
	async see(fileId: string): Promise<SeenFile> {
		let answer: unknown;
		try {
			answer = (await this.options.client.files.info({ file: fileId })).file;
		} catch (error) {
			const code = slackErrorCode(error);
			if (code === 'file_not_found' || code === 'file_deleted')
				return {
					problem:
						'GPU Cloud cannot see this file. Invite the app to the channel it was shared in (`/invite @GPU Cloud`), then try again.',
				};
			if (code === 'missing_scope')
				return {
					problem:
						'The app may not read files yet (it lacks the files:read permission). A workspace admin can reinstall it from the current manifest.',
				};
			return { problem: describeError(error), failed: true };
		}
		const parsed = slackFileSchema.safeParse(answer);
		const source = parsed.success
			? (parsed.data.url_private_download ?? parsed.data.url_private)
			: undefined;
		if (!parsed.success || !source)
			return { problem: 'Slack described it unreadably.', failed: true };
		const { id, name, mimetype, size, duration_ms: durationMs } = parsed.data;
		return { file: { id, name, mimetype, size, durationMs, source } };
	}
}

type CheckedFile = Pick<SharedFile, 'name' | 'mimetype' | 'size' | 'durationMs'>;

/** Why GPU Cloud would refuse the file to transcribe (its kind, the spec's limits), before any job. */
export function fileProblem(file: CheckedFile): string | undefined {
	if (!acceptsMediaType(TRANSCRIBED, file.mimetype))
		return `${file.name} is not an audio or video file (Slack says ${file.mimetype}); GPU Cloud transcribes audio and video.`;
	return limitProblem(file, 'transcribes');
}

/**
 * Why GPU Cloud would refuse the file for a media field reading `accept` (`application/pdf,image/*`):
 * its kind, as Slack's file object says, and the spec's limits.
 */
export function mediaFileProblem(file: CheckedFile, accept: string): string | undefined {
	if (!acceptsMediaType(accept, file.mimetype)) {
		const kinds = accept
			.split(',')
			.map((type) => MEDIA_NAMES[type.trim()] ?? [type.trim(), type.trim()]);
		const named = kinds.map(([name]) => name).join(' or ');
		return `${file.name} is not ${/^[aeiou]/i.test(named) ? 'an' : 'a'} ${named} file (Slack says ${file.mimetype}); this field takes ${kinds.map(([, phrase]) => phrase).join(' or ')}.`;
	}
	return limitProblem(file, 'reads');
}

/** How a media type is named in a sentence: as a kind of file, and as what a field takes. */
const MEDIA_NAMES: Record<string, [string, string]> = {
	'audio/*': ['audio', 'audio'],
	'video/*': ['video', 'video'],
	'image/*': ['image', 'an image'],
	'application/pdf': ['PDF', 'a PDF'],
};

/** The media types a transcription reads. */
const TRANSCRIBED = 'audio/*,video/*';

/** The spec's limits: one file under 3 GB; a recording shorter than 2.5 hours. */
function limitProblem(file: CheckedFile, verb: 'transcribes' | 'reads'): string | undefined {
	if (file.size >= LIMITS.transcriptionMaxBytes)
		return `${file.name} is ${(file.size / 1e9).toFixed(1)} GB; GPU Cloud ${verb} files under ${LIMITS.transcriptionMaxBytes / 1e9} GB.`;
	if (file.size === 0) return `${file.name} is empty.`;
	if (file.durationMs !== undefined && file.durationMs >= LIMITS.transcriptionMaxSeconds * 1000)
		return `${file.name} is ${formatHours(file.durationMs)} long; GPU Cloud transcribes recordings shorter than ${LIMITS.transcriptionMaxSeconds / 3600} hours.`;
	return undefined;
}

/** A length of an hour or more, as people say it: "2 h 31 min". */
function formatHours(ms: number): string {
	const minutes = Math.floor(ms / 60_000);
	return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
