import type { webApi } from '@slack/bolt';
import type { Clock } from '../../shared/clock';
import { z } from 'zod/v4';
import type { FileSpec, ResultPart, SlackMessage, ThreadRef } from '../model';
import { withCallPriority } from './call-budget';
import { SlackAnswerLost } from './slack-client';

type WebClient = webApi.WebClient;

/** Marks a message as part of a result; its key says which part (`<job id>:result`). */
export const RESULT_EVENT = 'gpu_cloud_result';
/** Marks a parent message: what was asked, so a thread can be recognised after a restart. */
export const REQUEST_EVENT = 'gpu_cloud_request';
/** Marks a chat answer, so follow-ups can tell the model's turns from people's. */
export const ANSWER_EVENT = 'gpu_cloud_answer';

export type MessagePayload = Record<string, string | number | boolean>;

/** Metadata the app leaves on a message, by which it finds the message again. */
export interface MessageMark {
	eventType: string;
	payload: MessagePayload;
}

/** Posts of one message whose answer was lost, each after looking that the one before did not land. */
const POSTS_PER_MESSAGE = 3;
/** A post given up on may still be under way at Slack (a timeout): it lands within this, before the app looks. */
const SETTLE_MS = 1000;
/** How far before the first post a lost parent is looked for: Slack's clock and ours may differ a little. */
const CLOCK_SKEW_S = 60;

const uploadReplySchema = z.object({
	files: z.array(z.object({ files: z.array(z.object({ id: z.string() })).optional() })),
});

/** The ids of the files filesUploadV2 shared (one completeUploadExternal answer per upload). */
function uploadedFileIds(reply: unknown): string[] {
	const parsed = uploadReplySchema.safeParse(reply);
	return parsed.success
		? parsed.data.files.flatMap((entry) => (entry.files ?? []).map((file) => file.id))
		: [];
}

export interface ThreadMessage {
	ts: string;
	user?: string;
	botId?: string;
	text: string;
	/** The text of its `markdown` blocks (an answer written by edits keeps the whole answer there). */
	markdown?: string;
	metadata?: { eventType: string; payload: Record<string, unknown> };
	fileNames: string[];
	/** Its buttons' action ids and values (a running job's parent carries its Cancel). */
	buttons: { actionId: string; value: string }[];
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
	return value && typeof value === 'object' && !Array.isArray(value)
		? (value as Record<string, unknown>)
		: undefined;
}

/** Reads a message from the Web API into the few fields the app relies on. */
function toThreadMessage(raw: unknown): ThreadMessage | undefined {
	const message = asRecord(raw);
	if (!message || typeof message.ts !== 'string') return undefined;
	const metadata = asRecord(message.metadata);
	const payload = asRecord(metadata?.event_payload);
	const files = Array.isArray(message.files) ? message.files : [];
	const blocks = (Array.isArray(message.blocks) ? message.blocks : []).flatMap((block) => {
		const record = asRecord(block);
		return record ? [record] : [];
	});
	const markdown = blocks.flatMap((block) =>
		block.type === 'markdown' && typeof block.text === 'string' ? [block.text] : [],
	);
	const buttons = blocks.flatMap((block) =>
		(Array.isArray(block.elements) ? block.elements : []).flatMap((element) => {
			const record = asRecord(element);
			return typeof record?.action_id === 'string' && typeof record.value === 'string'
				? [{ actionId: record.action_id, value: record.value }]
				: [];
		}),
	);
	return {
		ts: message.ts,
		user: typeof message.user === 'string' ? message.user : undefined,
		botId: typeof message.bot_id === 'string' ? message.bot_id : undefined,
		text: typeof message.text === 'string' ? message.text : '',
		...(markdown.length ? { markdown: markdown.join('') } : {}),
		metadata:
			metadata && typeof metadata.event_type === 'string' && payload
				? { eventType: metadata.event_type, payload }
				: undefined,
		fileNames: files.flatMap((file) => {
			const record = asRecord(file);
			return typeof record?.name === 'string' ? [record.name] : [];
		}),
		buttons,
	};
}

/**
 * Everything the app writes into Slack threads. Results are posted part by part, skipping parts
 * the thread already shows, which makes a repeated delivery (a webhook and a poll racing, or a
 * restart after a crash mid-post) post each part once.
 */
/** Told of every parent message posted and every message edited (the Home tab follows them). */
export interface ParentObserver {
	posted(channel: string, ts: string, user: string, message: SlackMessage): void;
	updated(channel: string, ts: string, message: SlackMessage): void;
}

export class SlackThreads {
	constructor(
		private readonly client: WebClient,
		private readonly botUserId: () => string | undefined,
		private readonly clock: Clock,
		private readonly observer?: ParentObserver,
	) {}

	/**
	 * Posts a request's parent; `payload.ref` names the request, so a post whose answer was lost is
	 * found. It acknowledges the request: first in the call budget.
	 */
	postParent(
		channel: string,
		message: SlackMessage,
		payload: MessagePayload & { ref: string },
	): Promise<string> {
		return withCallPriority('first', () => this.postParentNow(channel, message, payload));
	}

	private async postParentNow(
		channel: string,
		message: SlackMessage,
		payload: MessagePayload & { ref: string },
	): Promise<string> {
		// Compared with Slack's message timestamps, which are wall-clock time.
		const oldest = Date.now() / 1000 - CLOCK_SKEW_S;
		const mark = { eventType: REQUEST_EVENT, payload: { ref: payload.ref } };
		const ts = await this.postOnce(
			async () => {
				const reply = await this.client.chat.postMessage({
					channel,
					text: message.text,
					blocks: message.blocks,
					metadata: { event_type: REQUEST_EVENT, event_payload: payload },
					unfurl_links: false,
				});
				if (!reply.ts) throw new Error('Slack did not return the message timestamp.');
				return reply.ts;
			},
			() => this.findInChannel(channel, oldest, mark),
		);
		if (typeof payload.user === 'string') this.observer?.posted(channel, ts, payload.user, message);
		return ts;
	}

	/**
	 * Posts a request's parent as a reply in someone else's thread (a shared file's); found again by
	 * its `ref` when the answer to the post was lost. First in the call budget, as every parent.
	 */
	postParentReply(
		thread: ThreadRef,
		message: SlackMessage,
		payload: MessagePayload & { ref: string },
	): Promise<string> {
		return withCallPriority('first', async () => {
			const ts = await this.reply(thread, message, {
				eventType: REQUEST_EVENT,
				payload,
			});
			if (typeof payload.user === 'string')
				this.observer?.posted(thread.channel, ts, payload.user, message);
			return ts;
		});
	}

	/**
	 * Shares one file in a channel, with a comment, and answers its id: what a Workflow Builder step
	 * hands on to later steps. A lost answer is not posted again (the step fails instead): a file has
	 * no mark to find it by.
	 */
	shareFile(channel: string, file: FileSpec, comment: string): Promise<string> {
		return withCallPriority('first', async () => {
			const reply = await this.client.filesUploadV2({
				channel_id: channel,
				initial_comment: comment,
				file_uploads: [
					{
						file: file.content,
						filename: file.filename,
						title: file.title,
						...(file.altText ? { alt_text: file.altText } : {}),
					},
				],
			});
			const id = uploadedFileIds(reply)[0];
			if (!id) throw new Error('Slack did not return the uploaded file.');
			return id;
		});
	}

	async update(channel: string, ts: string, message: SlackMessage): Promise<void> {
		await this.client.chat.update({ channel, ts, text: message.text, blocks: message.blocks });
		this.observer?.updated(channel, ts, message);
	}

	/** Posts into a thread; a reply with metadata is found again when the answer to its post was lost. */
	async reply(thread: ThreadRef, message: SlackMessage, metadata?: MessageMark): Promise<string> {
		const post = async () => {
			const reply = await this.client.chat.postMessage({
				channel: thread.channel,
				thread_ts: thread.threadTs,
				text: message.text,
				blocks: message.blocks,
				unfurl_links: false,
				...(metadata
					? { metadata: { event_type: metadata.eventType, event_payload: metadata.payload } }
					: {}),
			});
			return reply.ts ?? '';
		};
		// Nothing tells an unmarked reply from another: it is not posted again.
		return metadata ? this.writeMarked(thread, metadata, post) : post();
	}

	/**
	 * Sends a call that leaves `mark` on a message of the thread and resolves with that message's ts;
	 * when Slack's answer is lost, the call is sent again only if the thread does not show the mark.
	 */
	writeMarked(thread: ThreadRef, mark: MessageMark, send: () => Promise<string>): Promise<string> {
		return this.postOnce(send, () => this.findMarked(thread, mark));
	}

	/** The timestamp of the app's message in the thread that carries `mark`, if there is one. */
	async findMarked(thread: ThreadRef, mark: MessageMark): Promise<string | undefined> {
		return marked(await this.read(thread), mark, this.fromApp);
	}

	async ephemeral(
		channel: string,
		user: string,
		message: SlackMessage,
		threadTs?: string,
	): Promise<void> {
		await this.client.chat.postEphemeral({
			channel,
			user,
			text: message.text,
			blocks: message.blocks,
			...(threadTs ? { thread_ts: threadTs } : {}),
		});
	}

	/** The thread's messages, parent first, with metadata. */
	async read(thread: ThreadRef): Promise<ThreadMessage[]> {
		const messages: ThreadMessage[] = [];
		let cursor: string | undefined;
		do {
			const page = await this.client.conversations.replies({
				channel: thread.channel,
				ts: thread.threadTs,
				include_all_metadata: true,
				limit: 200,
				...(cursor ? { cursor } : {}),
			});
			for (const raw of page.messages ?? []) {
				const message = toThreadMessage(raw);
				if (message) messages.push(message);
			}
			cursor = page.response_metadata?.next_cursor || undefined;
		} while (cursor);
		return messages;
	}

	/** Keys of the result parts this app already posted in the thread. */
	async postedKeys(thread: ThreadRef): Promise<Set<string>> {
		const keys = new Set<string>();
		for (const message of await this.read(thread)) {
			if (!this.fromApp(message)) continue;
			if (
				message.metadata?.eventType === RESULT_EVENT &&
				typeof message.metadata.payload.key === 'string'
			)
				keys.add(message.metadata.payload.key);
			for (const name of message.fileNames) keys.add(name);
		}
		return keys;
	}

	/**
	 * Posts the parts the thread does not show yet: messages first, then all missing files in one
	 * upload. Results go first in the call budget.
	 */
	postParts(thread: ThreadRef, parts: ResultPart[]): Promise<void> {
		return withCallPriority('first', () => this.postPartsNow(thread, parts));
	}

	private async postPartsNow(thread: ThreadRef, parts: ResultPart[]): Promise<void> {
		if (parts.length === 0) return;
		const existing = await this.postedKeys(thread);
		const missing = parts.filter((part) => !existing.has(part.key));
		for (const part of missing) {
			if (part.kind === 'message') {
				await this.reply(thread, part.message, {
					eventType: RESULT_EVENT,
					payload: { key: part.key },
				});
			}
		}
		let files = missing.flatMap((part) => (part.kind === 'file' ? [part.file] : []));
		if (files.length === 0) return;
		await this.postOnce(
			async () => {
				await this.client.filesUploadV2({
					channel_id: thread.channel,
					thread_ts: thread.threadTs,
					file_uploads: files.map((file) => ({
						file: file.content,
						filename: file.filename,
						title: file.title,
						...(file.altText ? { alt_text: file.altText } : {}),
					})),
				});
				return true;
			},
			// Only the files the thread does not show are uploaded again.
			async () => {
				const shown = await this.postedKeys(thread);
				files = files.filter((file) => !shown.has(file.filename));
				return files.length === 0 ? true : undefined;
			},
		);
	}

	/**
	 * The one way the app posts again after Slack's answer to a post was lost (`SlackAnswerLost`): a
	 * moment later it looks whether the post landed (`landed`: what it made, or undefined) and posts
	 * again only if it did not.
	 */
	private async postOnce<T>(
		post: () => Promise<T>,
		landed: () => Promise<T | undefined>,
	): Promise<T> {
		for (let attempt = 1; ; attempt++) {
			try {
				return await post();
			} catch (error) {
				if (!(error instanceof SlackAnswerLost)) throw error;
				await this.clock.sleep(SETTLE_MS);
				const found = await landed();
				if (found !== undefined) return found;
				if (attempt >= POSTS_PER_MESSAGE) throw error;
			}
		}
	}

	/** The app's top-level message with this mark in a channel, newest first, posted after `oldest` (seconds). */
	private async findInChannel(
		channel: string,
		oldest: number,
		mark: MessageMark,
	): Promise<string | undefined> {
		let cursor: string | undefined;
		do {
			const page = await this.client.conversations.history({
				channel,
				oldest: oldest.toFixed(6),
				include_all_metadata: true,
				limit: 200,
				...(cursor ? { cursor } : {}),
			});
			const messages = (page.messages ?? []).flatMap((raw) => toThreadMessage(raw) ?? []);
			const found = marked(messages, mark, this.fromApp);
			if (found) return found;
			cursor = page.response_metadata?.next_cursor || undefined;
		} while (cursor);
		return undefined;
	}

	private readonly fromApp = (message: ThreadMessage): boolean =>
		writtenByApp(message, this.botUserId());
}

/**
 * Written by this app: Slack shows a bot token's posts under the bot's user id. Any other app in the
 * channel can post our metadata too, so a bot id alone proves nothing (it could hide a result, pass
 * its words off as the model's, or open a chat).
 */
export function writtenByApp(message: ThreadMessage, botUserId: string | undefined): boolean {
	return botUserId !== undefined && botUserId !== '' && message.user === botUserId;
}

/** The timestamp of the app's message carrying this mark (its event type and every field of its payload). */
function marked(
	messages: ThreadMessage[],
	mark: MessageMark,
	fromApp: (message: ThreadMessage) => boolean,
): string | undefined {
	return messages.find(
		(message) =>
			fromApp(message) &&
			message.metadata?.eventType === mark.eventType &&
			Object.entries(mark.payload).every(
				([key, value]) => message.metadata?.payload[key] === value,
			),
	)?.ts;
}
