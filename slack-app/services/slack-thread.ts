import type { webApi } from '@slack/bolt';
import type { ResultPart, SlackMessage, ThreadRef } from '../model';

type WebClient = webApi.WebClient;

/** Marks a message as part of a result; its key says which part (`<job id>:result`). */
export const RESULT_EVENT = 'gpu_cloud_result';
/** Marks a parent message: what was asked, so a thread can be recognised after a restart. */
export const REQUEST_EVENT = 'gpu_cloud_request';
/** Marks a chat answer, so follow-ups can tell the model's turns from people's. */
export const ANSWER_EVENT = 'gpu_cloud_answer';

export type MessagePayload = Record<string, string | number | boolean>;

export interface ThreadMessage {
	ts: string;
	user?: string;
	botId?: string;
	text: string;
	metadata?: { eventType: string; payload: Record<string, unknown> };
	fileNames: string[];
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
	return {
		ts: message.ts,
		user: typeof message.user === 'string' ? message.user : undefined,
		botId: typeof message.bot_id === 'string' ? message.bot_id : undefined,
		text: typeof message.text === 'string' ? message.text : '',
		metadata:
			metadata && typeof metadata.event_type === 'string' && payload
				? { eventType: metadata.event_type, payload }
				: undefined,
		fileNames: files.flatMap((file) => {
			const record = asRecord(file);
			return typeof record?.name === 'string' ? [record.name] : [];
		}),
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
		private readonly observer?: ParentObserver,
	) {}

	async postParent(
		channel: string,
		message: SlackMessage,
		payload: MessagePayload,
	): Promise<string> {
		const reply = await this.client.chat.postMessage({
			channel,
			text: message.text,
			blocks: message.blocks,
			metadata: { event_type: REQUEST_EVENT, event_payload: payload },
			unfurl_links: false,
		});
		if (!reply.ts) throw new Error('Slack did not return the message timestamp.');
		if (typeof payload.user === 'string')
			this.observer?.posted(channel, reply.ts, payload.user, message);
		return reply.ts;
	}

	async update(channel: string, ts: string, message: SlackMessage): Promise<void> {
		await this.client.chat.update({ channel, ts, text: message.text, blocks: message.blocks });
		this.observer?.updated(channel, ts, message);
	}

	async reply(
		thread: ThreadRef,
		message: SlackMessage,
		metadata?: { eventType: string; payload: MessagePayload },
	): Promise<string> {
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
		const bot = this.botUserId();
		for (const message of await this.read(thread)) {
			if (message.user !== bot && message.botId === undefined) continue;
			if (
				message.metadata?.eventType === RESULT_EVENT &&
				typeof message.metadata.payload.key === 'string'
			)
				keys.add(message.metadata.payload.key);
			for (const name of message.fileNames) keys.add(name);
		}
		return keys;
	}

	/** Posts the parts the thread does not show yet: messages first, then all missing files in one upload. */
	async postParts(thread: ThreadRef, parts: ResultPart[]): Promise<void> {
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
		const files = missing.flatMap((part) => (part.kind === 'file' ? [part.file] : []));
		if (files.length > 0) {
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
		}
	}
}
