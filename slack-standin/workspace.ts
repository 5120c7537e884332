import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import type { StreamTask, TaskDisplayMode } from './stream-chunks';

/**
 * The state of the stand-in workspace: one team, its channels' messages and threads, ephemeral
 * messages, uploaded files and open modals. Pure bookkeeping; the HTTP layers read and change it.
 */

export const TEAM = { id: 'T0STANDIN', domain: 'standin', name: 'Stand-in workspace' } as const;
/** `name` is the bot user's handle; people see the app by its display name, as in Slack. */
export const BOT = {
	userId: 'U0GPUBOT',
	botId: 'B0GPUBOT',
	appId: 'A0GPUCLOUD',
	name: 'gpu-cloud',
	displayName: 'GPU Cloud',
} as const;
export const LOCAL_USER = { id: 'U0LOCAL', name: 'you' } as const;
export const DEFAULT_CHANNEL = { id: 'C0GENERAL', name: 'general' } as const;
/** The local person's direct messages with the app (its Messages tab). */
export const DIRECT_MESSAGE = { id: 'D0GPUCLOUD', name: 'GPU Cloud' } as const;
/** A channel the app was never invited to: Slack shows the app none of its files. */
export const UNINVITED_CHANNEL = { id: 'C0RANDOM', name: 'random' } as const;

/** The shortcuts the app declares in slack-app/manifest.yaml (test/slack/manifest.test.ts keeps them equal). */
export const SHORTCUTS = [
	{ type: 'global', callbackId: 'gpu.run_job', name: 'Run a GPU job' },
	{
		type: 'message',
		callbackId: 'gpu.ask_about_message',
		name: 'Ask GPU Cloud about this message',
	},
	{ type: 'message', callbackId: 'gpu.transcribe_file', name: 'Transcribe with GPU Cloud' },
] as const;

export interface MessageMetadata {
	event_type: string;
	event_payload: Record<string, unknown>;
}

export interface StoredFile {
	id: string;
	name: string;
	title: string;
	mimetype: string;
	/** Slack's short type name (`wav`, `mp4`, `png`...). */
	filetype: string;
	size: number;
	/** Who uploaded it: a person, or the bot. */
	user: string;
	/** An audio or video file's length, as Slack measures it on upload (WAV here, from its header). */
	durationMs?: number;
	altText?: string;
	content?: Buffer;
	/** Set once files.completeUploadExternal shared it. */
	shared: boolean;
	/** The conversations it was shared in: who may see it follows from them. */
	channels: Set<string>;
	/** Uploaded in a modal's file input: the app the view belongs to sees it (it holds files:read). */
	viaFileInput?: boolean;
}

export interface StoredMessage {
	ts: string;
	channel: string;
	/** The author: a user id, or the bot's user id for the app's messages. */
	user: string;
	botId?: string;
	text: string;
	blocks?: unknown[];
	threadTs?: string;
	metadata?: MessageMetadata;
	fileIds: string[];
	edited: boolean;
	/** True while a chat.startStream message is still being appended to. */
	streaming: boolean;
	/** Created by chat.startStream: its text is standard Markdown, shown above its blocks. */
	streamed: boolean;
	/** A stream's task chunks, each as its latest update says, in the order they first came. */
	tasks?: StreamTask[];
	/** A stream's plan title (its latest plan_update chunk). */
	planTitle?: string;
	/** How chat.startStream asked the tasks to be shown. */
	taskDisplayMode?: TaskDisplayMode;
}

export interface EphemeralMessage {
	id: string;
	ts: string;
	channel: string;
	user: string;
	text: string;
	blocks?: unknown[];
	threadTs?: string;
}

export interface OpenView {
	id: string;
	hash: string;
	user: string;
	view: Record<string, unknown>;
	/** Field errors from the app's last `response_action: errors` answer. */
	errors: Record<string, string>;
}

/** An assistant thread's side panel state, set by the assistant.threads.* methods. */
export interface AssistantThread {
	title?: string;
	status?: string;
	prompts: { title: string; message: string }[];
}

/** Agent session states (https://docs.slack.dev/ai/agent-sessions). */
export const SESSION_STATUSES = ['active', 'processing', 'suspended', 'closed'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** A thread-based agent session, set by agents.sessions.* (or the assistant.threads.* bridge). */
export interface AgentSession {
	status: SessionStatus;
	title?: string;
	/** How often the app set each status, so tests can tell a session left `processing` once. */
	history: SessionStatus[];
}

/** A workflow's run of one of the app's steps, until the app completes or fails it. */
export interface StepExecution {
	id: string;
	callbackId: string;
	inputs: Record<string, unknown>;
	/** The per-run token the event carries; the app may call the Web API with it while the step runs. */
	token: string;
	state: 'running' | 'completed' | 'failed';
	outputs?: Record<string, unknown>;
	error?: string;
}

export interface IssuedTrigger {
	id: string;
	user: string;
	issuedAt: number;
}

/** Slack's own rule: a trigger id is usable for 3 seconds. */
export const TRIGGER_LIFETIME_MS = 3000;

function key(channel: string, ts: string): string {
	return `${channel}/${ts}`;
}

/** A message in the channel itself, not a reply in a thread (a parent's thread_ts is its own ts). */
function isTopLevel(message: StoredMessage): boolean {
	return !message.threadTs || message.threadTs === message.ts;
}

function listIn(lists: Map<string, StoredMessage[]>, at: string): StoredMessage[] {
	const list = lists.get(at) ?? [];
	lists.set(at, list);
	return list;
}

export class Workspace extends EventEmitter {
	readonly messages: StoredMessage[] = [];
	readonly ephemerals: EphemeralMessage[] = [];
	readonly files = new Map<string, StoredFile>();
	readonly views = new Map<string, OpenView>();
	/** Assistant threads by `channel/thread_ts`. */
	readonly assistantThreads = new Map<string, AssistantThread>();
	/** Workflow step runs by function execution id. */
	readonly executions = new Map<string, StepExecution>();
	/** Agent sessions by `channel/thread_ts`. */
	readonly sessions = new Map<string, AgentSession>();
	/** Suggested prompts at the top of a Messages tab (agent messaging), by DM channel. */
	readonly messagesTabPrompts = new Map<
		string,
		{ title?: string; prompts: { title: string; message: string }[] }
	>();
	/** Published Home tabs, by user. */
	readonly homes = new Map<string, OpenView>();
	readonly triggers = new Map<string, IssuedTrigger>();
	readonly channelNames = new Map<string, string>([
		[DEFAULT_CHANNEL.id, DEFAULT_CHANNEL.name],
		[DIRECT_MESSAGE.id, DIRECT_MESSAGE.name],
		[UNINVITED_CHANNEL.id, UNINVITED_CHANNEL.name],
	]);
	/** The conversations the bot is a member of (its DMs are all its own). */
	readonly botChannels = new Set<string>([DEFAULT_CHANNEL.id]);
	private lastTs = 0;
	private version = 0;
	/**
	 * The messages by where they are read from, so that a read costs the size of what it returns: a
	 * burst's thousands of threads otherwise make every chat.postMessage and conversations.replies
	 * scan all messages, and the stand-in falls behind the app it stands in for.
	 */
	private readonly byTs = new Map<string, StoredMessage>();
	private readonly topLevel = new Map<string, StoredMessage[]>();
	private readonly repliesByThread = new Map<string, StoredMessage[]>();

	constructor(private readonly now: () => number = Date.now) {
		super();
		this.setMaxListeners(100);
	}

	get revision(): number {
		return this.version;
	}

	/** Every change bumps the revision and tells listeners (the page, tests waiting for a state). */
	changed(): void {
		this.version++;
		this.emit('change', this.version);
	}

	/** Strictly increasing `seconds.micros` timestamps, like Slack's message ids. */
	nextTs(): string {
		const candidate = Math.max(this.now() * 1000, this.lastTs + 1);
		this.lastTs = candidate;
		return `${Math.floor(candidate / 1e6)}.${String(candidate % 1e6).padStart(6, '0')}`;
	}

	newId(prefix: string): string {
		return `${prefix}${randomBytes(5).toString('hex').toUpperCase()}`;
	}

	post(
		message: Omit<StoredMessage, 'ts' | 'edited' | 'streaming' | 'streamed' | 'fileIds'> &
			Partial<Pick<StoredMessage, 'fileIds' | 'streaming'>>,
	): StoredMessage {
		const streaming = message.streaming ?? false;
		const stored: StoredMessage = {
			...message,
			ts: this.nextTs(),
			edited: false,
			streaming,
			streamed: streaming,
			fileIds: message.fileIds ?? [],
		};
		this.messages.push(stored);
		this.byTs.set(key(stored.channel, stored.ts), stored);
		if (isTopLevel(stored)) listIn(this.topLevel, stored.channel).push(stored);
		else listIn(this.repliesByThread, key(stored.channel, stored.threadTs ?? '')).push(stored);
		// As in Slack, the app's reply in an assistant thread clears its status.
		const assistant =
			stored.threadTs && stored.user === BOT.userId
				? this.assistantThreads.get(`${stored.channel}/${stored.threadTs}`)
				: undefined;
		if (assistant) assistant.status = undefined;
		this.changed();
		return stored;
	}

	find(channel: string, ts: string): StoredMessage | undefined {
		return this.byTs.get(key(channel, ts));
	}

	update(
		channel: string,
		ts: string,
		change: Partial<
			Pick<StoredMessage, 'text' | 'blocks' | 'metadata' | 'streaming' | 'tasks' | 'planTitle'>
		>,
	): StoredMessage | undefined {
		const message = this.find(channel, ts);
		if (!message) return undefined;
		Object.assign(message, change, { edited: true });
		this.changed();
		return message;
	}

	/** Top-level messages of a channel, oldest first. */
	channelMessages(channel: string): StoredMessage[] {
		return [...(this.topLevel.get(channel) ?? [])];
	}

	/** The parent followed by its replies, oldest first, as conversations.replies returns them. */
	thread(channel: string, ts: string): StoredMessage[] {
		const parent = this.find(channel, ts);
		return [...(parent ? [parent] : []), ...this.replies(channel, ts)];
	}

	replies(channel: string, ts: string): StoredMessage[] {
		return [...(this.repliesByThread.get(key(channel, ts)) ?? [])];
	}

	postEphemeral(message: Omit<EphemeralMessage, 'id' | 'ts'>): EphemeralMessage {
		const stored = { ...message, id: this.newId('E'), ts: this.nextTs() };
		this.ephemerals.push(stored);
		this.changed();
		return stored;
	}

	replaceEphemeral(id: string, change: Pick<EphemeralMessage, 'text' | 'blocks'>): boolean {
		const message = this.ephemerals.find((candidate) => candidate.id === id);
		if (!message) return false;
		Object.assign(message, change);
		this.changed();
		return true;
	}

	deleteEphemeral(id: string): void {
		const index = this.ephemerals.findIndex((candidate) => candidate.id === id);
		if (index >= 0) this.ephemerals.splice(index, 1);
		this.changed();
	}

	ephemeralsFor(user: string): EphemeralMessage[] {
		return this.ephemerals.filter((message) => message.user === user);
	}

	issueTrigger(user: string): string {
		const id = `${Date.now()}.${this.newId('TRIG')}`;
		this.triggers.set(id, { id, user, issuedAt: this.now() });
		return id;
	}

	/** A trigger is good once, for a few seconds. */
	redeemTrigger(id: string): IssuedTrigger | 'invalid' | 'expired' {
		const trigger = this.triggers.get(id);
		if (!trigger) return 'invalid';
		this.triggers.delete(id);
		return this.now() - trigger.issuedAt > TRIGGER_LIFETIME_MS ? 'expired' : trigger;
	}

	openView(user: string, view: Record<string, unknown>): OpenView {
		const open: OpenView = { id: this.newId('V'), hash: this.newId('H'), user, view, errors: {} };
		this.views.set(open.id, open);
		this.changed();
		return open;
	}

	updateView(id: string, view: Record<string, unknown>): OpenView | undefined {
		const open = this.views.get(id);
		if (!open) return undefined;
		Object.assign(open, { view, hash: this.newId('H'), errors: {} });
		this.changed();
		return open;
	}

	/** views.publish: each person's Home tab, replaced whole. */
	publishHome(user: string, view: Record<string, unknown>): OpenView {
		const home: OpenView = {
			id: this.homes.get(user)?.id ?? this.newId('V'),
			hash: this.newId('H'),
			user,
			view,
			errors: {},
		};
		this.homes.set(user, home);
		this.changed();
		return home;
	}

	assistantThread(channel: string, threadTs: string): AssistantThread {
		const key = `${channel}/${threadTs}`;
		const thread = this.assistantThreads.get(key) ?? { prompts: [] };
		this.assistantThreads.set(key, thread);
		return thread;
	}

	/** Sets a session's status, creating it (with its title) on the first call, as Slack does. */
	setSession(
		channel: string,
		threadTs: string,
		status: SessionStatus,
		title?: string,
	): AgentSession {
		const key = `${channel}/${threadTs}`;
		const session = this.sessions.get(key) ?? { status, title, history: [] };
		session.status = status;
		session.history.push(status);
		this.sessions.set(key, session);
		this.changed();
		return session;
	}

	session(channel: string, threadTs: string): AgentSession | undefined {
		return this.sessions.get(`${channel}/${threadTs}`);
	}

	/** A person's direct messages with the app: the local person's is the page's DM. */
	directMessageOf(user: string): string {
		return user === LOCAL_USER.id ? DIRECT_MESSAGE.id : `D${user.slice(1)}`;
	}

	/**
	 * A person shares a file in a message, as Slack's composer does: the file is stored, and the
	 * message carrying it is posted with the subtype `file_share`.
	 */
	shareFile(options: {
		user: string;
		channel: string;
		name: string;
		content: Buffer;
		text?: string;
		threadTs?: string;
		mimetype?: string;
	}): { file: StoredFile; message: StoredMessage } {
		const file = this.storeFile(options, { shared: true, channels: new Set([options.channel]) });
		const message = this.post({
			channel: options.channel,
			user: options.user,
			text: options.text ?? '',
			threadTs: options.threadTs,
			fileIds: [file.id],
		});
		return { file, message };
	}

	/**
	 * A person uploads a file in a modal's file input: it is shared in no conversation, and the app
	 * receives it with the view's submission
	 * (https://docs.slack.dev/reference/block-kit/block-elements/file-input-element).
	 */
	uploadToView(options: {
		user: string;
		name: string;
		content: Buffer;
		mimetype?: string;
	}): StoredFile {
		const file = this.storeFile(options, {
			shared: false,
			channels: new Set(),
			viaFileInput: true,
		});
		this.changed();
		return file;
	}

	/** A file someone uploaded, described as Slack's file object describes it. */
	private storeFile(
		upload: { user: string; name: string; content: Buffer; mimetype?: string },
		where: Pick<StoredFile, 'shared' | 'channels' | 'viaFileInput'>,
	): StoredFile {
		const file: StoredFile = {
			id: this.newId('F'),
			name: upload.name,
			title: upload.name,
			mimetype: upload.mimetype ?? mimeType(upload.name),
			filetype: fileType(upload.name),
			size: upload.content.length,
			user: upload.user,
			durationMs: wavDurationMs(upload.content),
			content: upload.content,
			...where,
		};
		this.files.set(file.id, file);
		return file;
	}

	/**
	 * Whether the bot sees a file: its own, one uploaded to it in a file input, or shared in a conversation it is in (Slack answers
	 * `file_not_found` to files.info otherwise, and its file URLs serve it nothing).
	 */
	botSees(file: StoredFile): boolean {
		return (
			file.user === BOT.userId ||
			file.viaFileInput === true ||
			[...file.channels].some((channel) => this.botChannels.has(channel) || channel.startsWith('D'))
		);
	}

	closeView(id: string): void {
		this.views.delete(id);
		this.changed();
	}

	channelName(id: string): string {
		return this.channelNames.get(id) ?? id.toLowerCase();
	}
}

/** The media types the stand-in knows by extension (as Slack sniffs them on upload). */
const MIME_TYPES: Record<string, string> = {
	png: 'image/png',
	jpg: 'image/jpeg',
	jpeg: 'image/jpeg',
	webp: 'image/webp',
	gif: 'image/gif',
	txt: 'text/plain',
	json: 'application/json',
	pdf: 'application/pdf',
	wav: 'audio/wav',
	mp3: 'audio/mpeg',
	m4a: 'audio/mp4',
	ogg: 'audio/ogg',
	flac: 'audio/flac',
	mp4: 'video/mp4',
	mov: 'video/quicktime',
	webm: 'video/webm',
};

export function mimeType(filename: string): string {
	return MIME_TYPES[fileType(filename)] ?? 'application/octet-stream';
}

/** Slack's `filetype`: the extension in lower case (`binary` without one). */
export function fileType(filename: string): string {
	const dot = filename.lastIndexOf('.');
	return dot > 0 ? filename.slice(dot + 1).toLowerCase() : 'binary';
}

/** A PCM WAV's length from its header (byte rate and data size); undefined for anything else. */
export function wavDurationMs(content: Buffer): number | undefined {
	if (content.length < 44 || content.toString('ascii', 0, 4) !== 'RIFF') return undefined;
	if (content.toString('ascii', 8, 12) !== 'WAVE') return undefined;
	let at = 12;
	let byteRate: number | undefined;
	while (at + 8 <= content.length) {
		const id = content.toString('ascii', at, at + 4);
		const size = content.readUInt32LE(at + 4);
		if (id === 'fmt ' && at + 16 <= content.length) byteRate = content.readUInt32LE(at + 16);
		if (id === 'data')
			return byteRate
				? Math.round((Math.min(size, content.length - at - 8) / byteRate) * 1000)
				: undefined;
		at += 8 + size + (size % 2);
	}
	return undefined;
}
