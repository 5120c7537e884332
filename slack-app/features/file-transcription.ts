import type { webApi } from '@slack/bolt';
import { z } from 'zod/v4';
import { LIMITS } from '../../shared/schemas';
import { noticeMessage, serviceErrorMessage } from '../messages/errors';
import type { FileRoute, SharedFile } from '../requests/file-links';
import type { RequestLifecycle } from '../requests/lifecycle';
import type { PrivateReply, RequestContext } from '../requests/outcome';
import { describeError, slackErrorCode } from '../slack/errors';
import type { ThreadRef } from '../model';
import type { JobService } from './jobs';

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
export const NO_FILE_ROUTE =
	'GPU Cloud reads a recording only from an address it can download, and this app has none to give it: it has no public address (it runs in Socket Mode, or without SLACK_PUBLIC_URL) and no object storage. An operator can set SLACK_PUBLIC_URL to the public HTTPS address of the app, or object storage (SLACK_STORAGE_ENDPOINT, with its bucket and keys). Meanwhile, `/gpu transcribe <url>` takes a direct download link.';

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
		const { lifecycle, links, jobs, team } = this.options;
		const refused = lifecycle.refusal(context);
		if (refused) return refused;
		if (!links) return noticeMessage(NO_FILE_ROUTE);
		const found = await this.read(fileId);
		if ('reply' in found) return found.reply;
		const file = found.file;
		const problem = fileProblem(file);
		if (problem) return noticeMessage(problem);
		return jobs.transcribePrepared(context, {
			subject: { kind: 'transcribe', url: '', file: file.name },
			prepare: async () => {
				const link = await links.create(team, file);
				return {
					input: { url: link.url },
					created: (job) => link.bind({ endpoint: job.inference_endpoint_name, id: job.id }),
					ended: () => link.revoke(),
				};
			},
			thread,
			step,
		});
	}

	/** The file as the bot sees it, or the sentence saying why it cannot. */
	private async read(fileId: string): Promise<{ file: SharedFile } | { reply: PrivateReply }> {
		let answer: unknown;
		try {
			answer = (await this.options.client.files.info({ file: fileId })).file;
		} catch (error) {
			const code = slackErrorCode(error);
			if (code === 'file_not_found' || code === 'file_deleted')
				return {
					reply: noticeMessage(
						'GPU Cloud cannot see this file. Invite the app to the channel it was shared in (`/invite @GPU Cloud`), then try again.',
					),
				};
			if (code === 'missing_scope')
				return {
					reply: noticeMessage(
						'The app may not read files yet (it lacks the files:read permission). A workspace admin can reinstall it from the current manifest.',
					),
				};
			return { reply: serviceErrorMessage('Reading the file from Slack', describeError(error)) };
		}
		const parsed = slackFileSchema.safeParse(answer);
		const source = parsed.success
			? (parsed.data.url_private_download ?? parsed.data.url_private)
			: undefined;
		if (!parsed.success || !source)
			return {
				reply: serviceErrorMessage('Reading the file from Slack', 'Slack described it unreadably.'),
			};
		const { id, name, mimetype, size, duration_ms: durationMs } = parsed.data;
		return { file: { id, name, mimetype, size, durationMs, source } };
	}
}

/** Why GPU Cloud would refuse the file (its kind, the spec's size limit), before any job. */
export function fileProblem(
	file: Pick<SharedFile, 'name' | 'mimetype' | 'size' | 'durationMs'>,
): string | undefined {
	if (!/^(audio|video)\//.test(file.mimetype))
		return `${file.name} is not an audio or video file (Slack says ${file.mimetype}); GPU Cloud transcribes audio and video.`;
	if (file.size >= LIMITS.transcriptionMaxBytes)
		return `${file.name} is ${(file.size / 1e9).toFixed(1)} GB; GPU Cloud transcribes files under ${LIMITS.transcriptionMaxBytes / 1e9} GB.`;
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
