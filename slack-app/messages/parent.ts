import { isTerminalStatus, type Job } from '../../shared/schemas';
import { FILE_LINK_PATH, type KnownBlock, type RequestState, type SlackMessage } from '../model';
import { ACTIONS, encodeValue, type ImageRequest, type JobRef } from './actions';
import {
	context,
	escapeText,
	escapeWithin,
	formatDuration,
	mention,
	section,
	slackDate,
	truncate,
} from './format';

/** What the parent message says was asked for. */
export type RequestSubject =
	| { kind: 'job'; endpoint: string }
	/** `file`: the name of a file shared in Slack, which the app serves at `url` for the job. */
	| { kind: 'transcribe'; url: string; file?: string }
	| { kind: 'image'; request: ImageRequest }
	| { kind: 'chat'; message: string }
	| { kind: 'queue'; name: string; project: string };

export interface ParentView {
	user: string;
	subject: RequestSubject;
	state: RequestState;
	elapsedMs?: number;
	/** When work started (epoch ms): a pending or running request shows it as "2 minutes ago". */
	startedAtMs?: number;
	job?: JobRef;
	/** One more line under the status, e.g. who cancelled or the service's error. */
	note?: string;
}

const STATE_LINE: Record<RequestState, { emoji: string; label: (elapsed: string) => string }> = {
	pending: {
		emoji: ':hourglass_flowing_sand:',
		label: (since) => `Pending${since ? ` · queued ${since}` : ''}`,
	},
	running: { emoji: ':gear:', label: (since) => `Running${since ? ` · started ${since}` : ''}` },
	succeeded: { emoji: ':white_check_mark:', label: (t) => `Succeeded in ${t}` },
	failed: { emoji: ':x:', label: (t) => `Failed after ${t}` },
	cancelled: { emoji: ':no_entry_sign:', label: (t) => `Cancelled after ${t}` },
	interrupted: { emoji: ':warning:', label: () => 'Interrupted: the app restarted while this ran' },
};

/** Who asked for what; a queue's line follows its state, since creating it is the whole request. */
export function describeSubject(subject: RequestSubject, state: RequestState = 'running'): string {
	switch (subject.kind) {
		case 'job':
			return `ran a job on \`${escapeText(subject.endpoint)}\``;
		case 'transcribe':
			return subject.file
				? `asked for a transcription of the file ${escapeText(subject.file)}`
				: `asked for a transcription of ${escapeText(subject.url)}`;
		case 'image': {
			const { count, prompt } = subject.request;
			return `asked for ${count === 1 ? 'an image' : `${count} images`}: _${escapeWithin(prompt, 500)}_`;
		}
		case 'chat':
			return `asked: ${escapeWithin(subject.message, 2000)}`;
		case 'queue': {
			const verb =
				state === 'succeeded'
					? 'created'
					: state === 'pending' || state === 'running'
						? 'is creating'
						: 'could not create';
			return `${verb} queue \`${escapeText(subject.name)}\` in project \`${escapeText(subject.project)}\``;
		}
	}
}

/**
 * The status with its time. While work goes on, the time is when it started, formatted by each
 * reader's Slack client ("12 seconds ago"), so it is right between the app's edits; once ended, how long it took.
 */
export function statusLine(state: RequestState, elapsedMs = 0, startedAtMs?: number): string {
	const line = STATE_LINE[state];
	const active = state === 'pending' || state === 'running';
	const time = active
		? startedAtMs === undefined
			? ''
			: slackDate(startedAtMs, '{ago}', `${formatDuration(elapsedMs)} ago`)
		: formatDuration(elapsedMs);
	return `${line.emoji} ${line.label(time)}`;
}

/** A button of the parent's actions. */
function button(actionId: string, text: string, value: string) {
	return {
		type: 'button' as const,
		action_id: actionId,
		text: { type: 'plain_text' as const, text },
		value,
	};
}

function buttons(view: ParentView): KnownBlock | undefined {
	const elements = [];
	const active = view.state === 'pending' || view.state === 'running';
	if (view.job) {
		const value = encodeValue(view.job);
		if (active && value) {
			elements.push({
				...button(ACTIONS.cancel, 'Cancel', value),
				style: 'danger' as const,
				confirm: {
					title: { type: 'plain_text' as const, text: 'Cancel this job?' },
					text: { type: 'plain_text' as const, text: 'GPU time already used is still billed.' },
					confirm: { type: 'plain_text' as const, text: 'Cancel job' },
					deny: { type: 'plain_text' as const, text: 'Keep running' },
				},
			});
		}
		if (value) {
			elements.push(button(ACTIONS.showInput, 'Show input', value));
		}
	}
	if (view.subject.kind === 'image') {
		const value = encodeValue(view.subject.request);
		if (value) {
			elements.push(button(ACTIONS.showInput, 'Show input', value));
			if (!active) {
				elements.push(button(ACTIONS.regenerateImage, 'Regenerate', value));
			}
		}
	}
	return elements.length > 0
		? { type: 'actions', block_id: 'gpu.parent_actions', elements }
		: undefined;
}

/** The parent message in the channel: who asked for what, and where it stands. Edited in place. */
export function parentMessage(view: ParentView): SlackMessage {
	const who = `${mention(view.user)} ${describeSubject(view.subject, view.state)}`;
	const status = statusLine(view.state, view.elapsedMs, view.startedAtMs);
	const lines = [status];
	if (view.job)
		lines.push(`Job \`${escapeText(view.job.jobId)}\` on \`${escapeText(view.job.endpoint)}\``);
	const blocks: KnownBlock[] = [section(who), context(lines.join(' · '))];
	if (view.note) blocks.push(context(escapeWithin(view.note, 2000)));
	const actions = buttons(view);
	if (actions) blocks.push(actions);
	return { text: truncate(`${who} · ${status}`, 3000), blocks };
}

function inputUrl(input: unknown): string {
	return input && typeof input === 'object' && 'url' in input && typeof input.url === 'string'
		? input.url
		: '(no URL)';
}

/** The parent of a job, from the job itself: its status, elapsed time and (for transcriptions) the URL. */
export function jobParentMessage(
	job: Job,
	origin: { user: string; kind: 'job' | 'transcribe' },
	nowMs: number,
	note?: string,
): SlackMessage {
	const created = Date.parse(job.create_time);
	const end = isTerminalStatus(job.status) ? Date.parse(job.update_time) : nowMs;
	const subject: RequestSubject =
		origin.kind === 'transcribe'
			? transcriptionSubject(inputUrl(job.input))
			: { kind: 'job', endpoint: job.inference_endpoint_name };
	return parentMessage({
		user: origin.user,
		subject,
		state: job.status,
		elapsedMs: Math.max(0, end - created),
		startedAtMs: created,
		job: { endpoint: job.inference_endpoint_name, jobId: job.id },
		note,
	});
}

/**
 * A transcription's subject from its input URL: a file the app serves, or a presigned URL (a shared
 * file put in object storage), is named by its file name, never by its URL (a capability).
 */
export function transcriptionSubject(url: string): RequestSubject {
	const file = sharedFileName(url);
	return file === undefined ? { kind: 'transcribe', url } : { kind: 'transcribe', url: '', file };
}

/** The file name behind the app's own link or a presigned URL; undefined for any other URL. */
function sharedFileName(url: string): string | undefined {
	const served = FILE_LINK_PATTERN.exec(url)?.[1] ?? presignedName(url);
	if (served === undefined) return undefined;
	try {
		return decodeURIComponent(served);
	} catch {
		return served;
	}
}

/**
 * A job's input as people may see it (Show input): each file the app handed GPU Cloud (its own link
 * or a presigned URL) named by its file name. The link would let anyone read the file, which its
 * owner may have shared with nobody.
 */
export function hideFileLinks(input: unknown): unknown {
	if (typeof input === 'string') {
		const file = sharedFileName(input);
		return file === undefined ? input : `${file} (a shared file; its link is not shown)`;
	}
	if (Array.isArray(input)) return input.map(hideFileLinks);
	if (input !== null && typeof input === 'object')
		return Object.fromEntries(
			Object.entries(input).map(([key, value]) => [key, hideFileLinks(value)]),
		);
	return input;
}

/** The last path segment of an S3 presigned URL (Signature V4 in its query); undefined for any other. */
function presignedName(url: string): string | undefined {
	if (!/[?&]X-Amz-Signature=/i.test(url)) return undefined;
	try {
		return new URL(url).pathname.split('/').pop() || 'file';
	} catch {
		return 'file';
	}
}

const FILE_LINK_PATTERN = new RegExp(`${FILE_LINK_PATH}/[A-Za-z0-9_-]{43}/([^/?#]+)$`);

/** Slack's agent session titles are at most 200 characters (agents.sessions.setStatus). */
const SESSION_TITLE_LIMIT = 200;

/** A request's thread, named in Slack's session list: what was asked, in plain words. */
export function sessionTitle(subject: RequestSubject): string {
	const title = (() => {
		switch (subject.kind) {
			case 'job':
				return `GPU job on ${subject.endpoint}`;
			case 'transcribe':
				return `Transcription of ${subject.file ?? subject.url}`;
			case 'image':
				return `Image: ${subject.request.prompt}`;
			case 'chat':
				return subject.message;
			case 'queue':
				return `Queue ${subject.name}`;
		}
	})();
	return truncate(title.replace(/\s+/g, ' ').trim(), SESSION_TITLE_LIMIT) || 'GPU Cloud request';
}
