import type { StandinAppConfig } from './app-config';
import type { Clock } from '../shared/clock';
import { systemClock } from '../shared/runtime';
import { LimitCheck, truncated, type Surface } from './limits';
import { RateWindows, type RateLimitOptions } from './rate-limits';
import {
	ChunkRefused,
	mergeTasks,
	parseChunks,
	TASK_DISPLAY_MODES,
	type ChunkContent,
	type TaskDisplayMode,
} from './stream-chunks';
import {
	SESSION_STATUSES,
	BOT,
	LOCAL_USER,
	TEAM,
	Workspace,
	mimeType,
	fileType,
	type MessageMetadata,
	type StoredFile,
	type StoredMessage,
} from './workspace';

/**
 * Slack's Web API as the stand-in speaks it: form-encoded (or JSON) `POST /api/<method>` with the
 * bot token as a bearer, answers `{ ok: true, ... }` or `{ ok: false, error }` with status 200, and
 * 429 with `Retry-After` over Slack's rate limits (./rate-limits.ts) or when a test asked for it.
 */

export type Params = Record<string, string>;

export interface ApiReply {
	status: number;
	headers?: Record<string, string>;
	body: Record<string, unknown>;
	/**
	 * The caller never hears back: the server closes the connection instead of answering, or (a
	 * number) answers only this many ms later, past the caller's timeout.
	 */
	lost?: true | { lateByMs: number };
}

export interface ApiCall {
	method: string;
	params: Params;
	status: number;
	error?: string;
	/** What Slack warned about (`message_truncated`) though it did the call. */
	warnings?: string[];
	/** Slack did it, and its answer was lost on the way. */
	lost?: boolean;
	/** When the stand-in received it, on its clock (ms). */
	at: number;
	/** The seconds a 429 asked the caller to wait. */
	retryAfter?: number;
}

/** Which calls of a method lose their answer: all of them, or those into one thread or with one kind of metadata. */
export interface LostAnswerMatch {
	threadTs?: string;
	/** The message's `metadata.event_type`. */
	eventType?: string;
	/** False: the request is lost before Slack does anything (the caller cannot tell the difference). */
	carriedOut?: boolean;
	/** The answer is not dropped but sent this many ms late (longer than the caller waits). */
	lateByMs?: number;
}

interface LostAnswerRule extends LostAnswerMatch {
	method: string;
	remaining: number;
}

interface RateLimitRule {
	remaining: number;
	retryAfterSeconds: number;
}

class ApiFailure extends Error {
	constructor(
		error: string,
		/** More of the answer: Slack's `errors` and `response_metadata.messages` for a refused payload. */
		readonly detail: Record<string, unknown> = {},
	) {
		super(error);
	}
}

function fail(error: string): never {
	throw new ApiFailure(error);
}

/** Where each method's blocks and views go, and the error Slack answers when they break a limit. */
const PAYLOADS: Record<string, { error: string; blocks?: Surface; view?: 'modal' | 'home' }> = {
	'chat.postMessage': { error: 'invalid_blocks', blocks: 'message' },
	'chat.postEphemeral': { error: 'invalid_blocks', blocks: 'message' },
	'chat.update': { error: 'invalid_blocks', blocks: 'message' },
	'chat.startStream': { error: 'invalid_blocks' },
	'chat.appendStream': { error: 'invalid_blocks' },
	'chat.stopStream': { error: 'invalid_blocks', blocks: 'stream' },
	'files.getUploadURLExternal': { error: 'invalid_arguments' },
	'views.open': { error: 'invalid_arguments', view: 'modal' },
	'views.update': { error: 'invalid_arguments', view: 'modal' },
	'views.push': { error: 'invalid_arguments', view: 'modal' },
	'views.publish': { error: 'invalid_arguments', view: 'home' },
};

/** Refuses a call whose payload breaks one of Slack's documented limits (see ./limits.ts). */
function checkLimits(method: string, params: Params): void {
	const payload = PAYLOADS[method];
	if (!payload) return;
	const check = new LimitCheck(payload.error);
	check.arguments(method, params);
	if (payload.blocks && params.blocks)
		check.blocks(json(params.blocks, undefined), '/blocks', payload.blocks);
	if (payload.view && params.view) check.view(json(params.view, undefined), '/view', payload.view);
	if (!check.ok) {
		const { error, ...detail } = check.reply();
		throw new ApiFailure(error, detail);
	}
}

function required(params: Params, name: string): string {
	const value = params[name];
	if (value === undefined || value === '') fail(`invalid_arguments`);
	return value;
}

function json<T>(text: string | undefined, fallback: T): T | unknown {
	if (text === undefined || text === '') return fallback;
	try {
		return JSON.parse(text);
	} catch {
		return fail('invalid_json');
	}
}

function blocksParam(params: Params): unknown[] | undefined {
	const blocks = json(params.blocks, undefined);
	if (blocks === undefined) return undefined;
	if (!Array.isArray(blocks)) fail('invalid_blocks');
	return blocks;
}

function metadataParam(params: Params): MessageMetadata | undefined {
	const metadata = json(params.metadata, undefined);
	if (metadata === undefined) return undefined;
	if (
		!metadata ||
		typeof metadata !== 'object' ||
		!('event_type' in metadata) ||
		typeof metadata.event_type !== 'string' ||
		!('event_payload' in metadata) ||
		!metadata.event_payload ||
		typeof metadata.event_payload !== 'object'
	) {
		fail('invalid_metadata_format');
	}
	return {
		event_type: metadata.event_type,
		event_payload: metadata.event_payload as Record<string, unknown>,
	};
}

/** A call's `metadata.event_type`, if it carries readable metadata. */
function eventTypeOf(params: Params): string | undefined {
	try {
		return metadataParam(params)?.event_type;
	} catch {
		return undefined;
	}
}

/**
 * What a stream call's `markdown_text` and `chunks` add to the message; "Either `markdown_text` or
 * `chunks` is required" on start and append (https://docs.slack.dev/reference/methods/chat.appendStream).
 */
function streamContent(method: string, params: Params): ChunkContent {
	const chunks = json(params.chunks, undefined);
	if (chunks === undefined) {
		if (method !== 'chat.stopStream' && !params.markdown_text) fail('invalid_arguments');
		return { text: params.markdown_text ?? '', tasks: [], blocks: [] };
	}
	try {
		const content = parseChunks(chunks);
		return { ...content, text: (params.markdown_text ?? '') + content.text };
	} catch (error) {
		if (!(error instanceof ChunkRefused)) throw error;
		throw new ApiFailure('invalid_arguments', { response_metadata: { messages: error.problems } });
	}
}

function taskDisplayMode(params: Params): TaskDisplayMode | undefined {
	const mode = params.task_display_mode;
	if (mode === undefined || mode === '') return undefined;
	const known = TASK_DISPLAY_MODES.find((candidate) => candidate === mode);
	if (!known)
		throw new ApiFailure('invalid_arguments', {
			response_metadata: {
				messages: [
					`[ERROR] task_display_mode must be one of ${TASK_DISPLAY_MODES.join(', ')} [json-pointer:/task_display_mode]`,
				],
			},
		});
	return known;
}

export interface WebApiOptions {
	botToken: string;
	/** The app as created from its manifest: agent methods only for an agent. */
	config: StandinAppConfig;
	/** Serves chat.startStream/appendStream/stopStream; off makes them `unknown_method` like older workspaces. */
	nativeStreaming: boolean;
	/** Absolute URL prefix for upload URLs and file links, e.g. `http://127.0.0.1:4321`. */
	baseUrl: () => string;
	/** The rate limits' clock: the system's unless a test gives its own. */
	clock?: Clock;
	/** Slack's rate limits by default; a test changes them only saying why. */
	rateLimits?: RateLimitOptions;
}

export class WebApi {
	readonly calls: ApiCall[] = [];
	private readonly rateLimits = new Map<string, RateLimitRule>();
	private readonly refusals = new Map<string, { error: string; remaining: number }>();
	private readonly lostAnswers: LostAnswerRule[] = [];
	private readonly clock: Clock;
	private readonly windows: RateWindows;

	constructor(
		private readonly workspace: Workspace,
		private readonly options: WebApiOptions,
	) {
		this.clock = options.clock ?? systemClock;
		this.windows = new RateWindows(this.clock, options.rateLimits);
	}

	/** The next `times` calls of `method` get 429 with `Retry-After: retryAfterSeconds`. */
	rateLimit(method: string, times: number, retryAfterSeconds = 1): void {
		this.rateLimits.set(method, { remaining: times, retryAfterSeconds });
	}

	/** The next `times` calls of `method` answer `{ ok: false, error }` (`not_in_channel`, `is_archived`...). */
	refuse(method: string, error: string, times = 1): void {
		this.refusals.set(method, { error, remaining: times });
	}

	/**
	 * The next `times` successful calls of `method` that match are carried out (the message is
	 * stored) and then their answer is lost: the connection closes without a response, as when a
	 * proxy or the network drops it after Slack did the work (or, with `lateByMs`, it comes after
	 * the caller stopped waiting). The caller cannot tell whether it did; with `carriedOut: false`,
	 * it did not.
	 */
	loseAnswers(method: string, times = 1, match: LostAnswerMatch = {}): void {
		this.lostAnswers.push({ method, remaining: times, ...match });
	}

	setNativeStreaming(enabled: boolean): void {
		this.options.nativeStreaming = enabled;
	}

	callsOf(method: string): ApiCall[] {
		return this.calls.filter((call) => call.method === method);
	}

	handle(method: string, authorization: string | undefined, params: Params): ApiReply {
		const at = this.clock.now();
		const limit = this.rateLimits.get(method);
		if (limit && limit.remaining > 0) {
			limit.remaining--;
			return this.ratelimited(method, params, at, limit.retryAfterSeconds);
		}
		const lostOnTheWay = this.takeLostAnswer(method, params, false);
		if (lostOnTheWay) {
			this.calls.push({ method, params, status: 0, lost: true, at });
			return { status: 0, body: { ok: false, error: 'request_lost' }, lost: lostOnTheWay };
		}
		const token = authorization?.replace(/^Bearer\s+/i, '') ?? params.token;
		// Slack counts a workspace's calls by its token; the stand-in's one token is its one workspace.
		if (token === this.options.botToken) {
			const decision = this.windows.take(TEAM.id, method, params.channel);
			if (!decision.allowed)
				return this.ratelimited(method, params, at, decision.retryAfterSeconds);
		}
		let reply: ApiReply;
		try {
			if (token !== this.options.botToken && !this.runningStepToken(token))
				fail(token ? 'invalid_auth' : 'not_authed');
			const refusal = this.refusals.get(method);
			if (refusal && refusal.remaining > 0) {
				refusal.remaining--;
				fail(refusal.error);
			}
			checkLimits(method, params);
			// Slack posts a message whose text is too long, cut, and says so.
			const cut = truncated(method, params);
			const carried = cut ? { ...params, [cut.argument]: cut.kept } : params;
			reply = { status: 200, body: { ok: true, ...this.dispatch(method, carried) } };
			if (cut) {
				reply.body.warning = cut.warning;
				reply.body.response_metadata = { messages: [cut.message], warnings: [cut.warning] };
			}
		} catch (error) {
			if (!(error instanceof ApiFailure)) throw error;
			reply = { status: 200, body: { ok: false, error: error.message, ...error.detail } };
		}
		const lost = reply.body.ok === true ? this.takeLostAnswer(method, params, true) : undefined;
		this.calls.push({
			method,
			params,
			status: reply.status,
			error: reply.body.ok ? undefined : String(reply.body.error),
			...(typeof reply.body.warning === 'string' ? { warnings: [reply.body.warning] } : {}),
			...(lost ? { lost: true } : {}),
			at,
		});
		return lost ? { ...reply, lost } : reply;
	}

	/** Slack's answer over a limit: nothing done, 429, and when to try again. */
	private ratelimited(method: string, params: Params, at: number, seconds: number): ApiReply {
		this.calls.push({ method, params, status: 429, error: 'ratelimited', at, retryAfter: seconds });
		return {
			status: 429,
			headers: { 'retry-after': String(seconds) },
			body: { ok: false, error: 'ratelimited' },
		};
	}

	/** How the answer to this call is lost, if a rule says so. */
	private takeLostAnswer(
		method: string,
		params: Params,
		carriedOut: boolean,
	): ApiReply['lost'] | undefined {
		const rule = this.lostAnswers.find(
			(candidate) =>
				candidate.method === method &&
				candidate.remaining > 0 &&
				(candidate.carriedOut ?? true) === carriedOut &&
				(candidate.threadTs === undefined || candidate.threadTs === params.thread_ts) &&
				(candidate.eventType === undefined || candidate.eventType === eventTypeOf(params)),
		);
		if (!rule) return undefined;
		rule.remaining--;
		return rule.lateByMs === undefined ? true : { lateByMs: rule.lateByMs };
	}

	private dispatch(method: string, params: Params): Record<string, unknown> {
		switch (method) {
			case 'auth.test':
				return {
					url: `https://${TEAM.domain}.slack.com/`,
					team: TEAM.name,
					user: BOT.name,
					team_id: TEAM.id,
					user_id: BOT.userId,
					bot_id: BOT.botId,
					is_enterprise_install: false,
				};
			case 'chat.postMessage':
				return this.postMessage(params);
			case 'chat.update':
				return this.updateMessage(params);
			case 'chat.postEphemeral': {
				const message = this.workspace.postEphemeral({
					channel: required(params, 'channel'),
					user: required(params, 'user'),
					text: params.text ?? '',
					blocks: blocksParam(params),
					threadTs: params.thread_ts,
				});
				return { message_ts: message.ts };
			}
			case 'chat.startStream':
			case 'chat.appendStream':
			case 'chat.stopStream':
				if (!this.options.nativeStreaming) fail('unknown_method');
				return this.stream(method, params);
			case 'conversations.replies':
				return this.replies(params);
			case 'conversations.history':
				return this.history(params);
			case 'files.getUploadURLExternal': {
				const filename = required(params, 'filename');
				const length = Number(required(params, 'length'));
				if (!Number.isInteger(length) || length < 0) fail('invalid_arguments');
				const id = this.workspace.newId('F');
				this.workspace.files.set(id, {
					id,
					name: filename,
					title: filename,
					mimetype: mimeType(filename),
					filetype: fileType(filename),
					size: length,
					user: BOT.userId,
					altText: params.alt_txt ?? params.alt_text,
					shared: false,
					channels: new Set(),
				});
				return { upload_url: `${this.options.baseUrl()}/upload/${id}`, file_id: id };
			}
			case 'files.completeUploadExternal':
				return this.completeUpload(params);
			case 'files.info':
				return this.fileInfo(params);
			case 'views.open':
				return this.openView(params);
			case 'views.update': {
				const id = required(params, 'view_id');
				const open = this.workspace.views.get(id);
				if (!open) fail('not_found');
				if (params.hash && params.hash !== open.hash) fail('hash_conflict');
				const view = this.viewParam(params);
				const updated = this.workspace.updateView(id, view);
				return { view: { ...updated?.view, id, hash: updated?.hash } };
			}
			case 'assistant.threads.setSuggestedPrompts':
			case 'assistant.threads.setTitle':
			case 'assistant.threads.setStatus':
				return this.assistantThreads(method, params);
			case 'agents.sessions.setStatus':
			case 'agents.sessions.rename':
				return this.agentSessions(method, params);
			case 'functions.completeSuccess':
			case 'functions.completeError':
				return this.completeStep(method, params);
			case 'views.publish': {
				const user = required(params, 'user_id');
				const view = json(required(params, 'view'), undefined);
				if (!view || typeof view !== 'object' || Array.isArray(view)) fail('invalid_arguments');
				const record = view as Record<string, unknown>;
				if (record.type !== 'home' || !Array.isArray(record.blocks)) fail('invalid_arguments');
				const home = this.workspace.publishHome(user, record);
				return {
					view: { ...home.view, id: home.id, hash: home.hash, team_id: TEAM.id, app_id: BOT.appId },
				};
			}
			case 'users.info': {
				const user = required(params, 'user');
				return {
					user: {
						id: user,
						team_id: TEAM.id,
						name: user.toLowerCase(),
						is_bot: user === BOT.userId,
						is_admin: user === LOCAL_USER.id,
						is_owner: false,
					},
				};
			}
			case 'chat.getPermalink': {
				const channel = required(params, 'channel');
				const ts = required(params, 'message_ts');
				if (!this.workspace.find(channel, ts)) fail('message_not_found');
				return {
					channel,
					permalink: `${this.options.baseUrl()}/?thread=${encodeURIComponent(ts)}`,
				};
			}
			default:
				return fail('unknown_method');
		}
	}

	private postMessage(params: Params): Record<string, unknown> {
		const channel = required(params, 'channel');
		const blocks = blocksParam(params);
		if (!params.text && !blocks) fail('no_text');
		const threadTs = params.thread_ts || undefined;
		if (threadTs && !this.workspace.find(channel, threadTs)) fail('thread_not_found');
		const message = this.workspace.post({
			channel,
			user: BOT.userId,
			botId: BOT.botId,
			text: params.text ?? '',
			blocks,
			threadTs,
			metadata: metadataParam(params),
		});
		return {
			channel,
			ts: message.ts,
			message: publicMessage(message, true, this.files(message), this.options.baseUrl()),
		};
	}

	private updateMessage(params: Params): Record<string, unknown> {
		const channel = required(params, 'channel');
		const ts = required(params, 'ts');
		const existing = this.workspace.find(channel, ts);
		if (!existing) fail('message_not_found');
		if (existing.user !== BOT.userId) fail('cant_update_message');
		const change: Partial<StoredMessage> = {};
		if (params.text !== undefined) change.text = params.text;
		const blocks = blocksParam(params);
		if (blocks !== undefined) change.blocks = blocks;
		const metadata = metadataParam(params);
		if (metadata) change.metadata = metadata;
		const updated = this.workspace.update(channel, ts, change);
		return { channel, ts, text: updated?.text };
	}

	private stream(method: string, params: Params): Record<string, unknown> {
		const channel = required(params, 'channel');
		if (method === 'chat.startStream') {
			const threadTs = required(params, 'thread_ts');
			const mode = taskDisplayMode(params);
			const content = streamContent(method, params);
			if (!this.workspace.find(channel, threadTs)) fail('thread_not_found');
			const message = this.workspace.post({
				channel,
				user: BOT.userId,
				botId: BOT.botId,
				text: content.text,
				...(content.blocks.length > 0 ? { blocks: content.blocks } : {}),
				threadTs,
				streaming: true,
				...(content.tasks.length > 0 ? { tasks: mergeTasks([], content.tasks) } : {}),
				...(content.planTitle !== undefined ? { planTitle: content.planTitle } : {}),
				...(mode ? { taskDisplayMode: mode } : {}),
			});
			return { channel, ts: message.ts };
		}
		const ts = required(params, 'ts');
		const content = streamContent(method, params);
		const message = this.workspace.find(channel, ts);
		if (!message) fail('message_not_found');
		if (!message.streaming) fail('message_not_in_streaming_state');
		const change: Partial<StoredMessage> = { text: message.text + content.text };
		if (content.tasks.length > 0) change.tasks = mergeTasks(message.tasks ?? [], content.tasks);
		if (content.planTitle !== undefined) change.planTitle = content.planTitle;
		if (content.blocks.length > 0) change.blocks = [...(message.blocks ?? []), ...content.blocks];
		if (method === 'chat.stopStream') {
			change.streaming = false;
			const blocks = blocksParam(params);
			if (blocks) change.blocks = [...(change.blocks ?? message.blocks ?? []), ...blocks];
			const metadata = metadataParam(params);
			if (metadata) change.metadata = metadata;
		}
		this.workspace.update(channel, ts, change);
		return { channel, ts };
	}

	/**
	 * The assistant container's methods. For an agent app Slack bridges them onto sessions
	 * (https://docs.slack.dev/ai/migrating-to-agent-messaging): a status sets `processing`, an empty
	 * one `active`, a title names the session; suggested prompts go to the top of the Messages tab,
	 * and with a `thread_ts` they "silently fail" (https://docs.slack.dev/reference/methods/assistant.threads.setSuggestedPrompts).
	 */
	private assistantThreads(method: string, params: Params): Record<string, unknown> {
		const channel = required(params, 'channel_id');
		const agent = this.options.config.experience === 'agent';
		if (this.options.config.experience === 'none') fail('not_allowed');
		if (method === 'assistant.threads.setSuggestedPrompts') {
			const prompts = suggestedPrompts(params);
			if (agent) {
				if (!params.thread_ts) {
					this.workspace.messagesTabPrompts.set(channel, { title: params.title, prompts });
					this.workspace.changed();
				}
				return {};
			}
			const threadTs = required(params, 'thread_ts');
			if (!this.workspace.find(channel, threadTs)) fail('thread_not_found');
			this.workspace.assistantThread(channel, threadTs).prompts = prompts;
			this.workspace.changed();
			return {};
		}
		const threadTs = required(params, 'thread_ts');
		if (!this.workspace.find(channel, threadTs)) fail('thread_not_found');
		if (agent) {
			if (method === 'assistant.threads.setTitle') {
				const session = this.workspace.session(channel, threadTs);
				if (session) session.title = required(params, 'title');
				else this.workspace.setSession(channel, threadTs, 'active', required(params, 'title'));
			} else this.workspace.setSession(channel, threadTs, params.status ? 'processing' : 'active');
			this.workspace.changed();
			return {};
		}
		const thread = this.workspace.assistantThread(channel, threadTs);
		if (method === 'assistant.threads.setTitle') thread.title = required(params, 'title');
		else thread.status = params.status || undefined;
		this.workspace.changed();
		return {};
	}

	/** A step's per-run token works while its step runs (the event's `bot_access_token`). */
	private runningStepToken(token: string | undefined): boolean {
		if (!token) return false;
		return [...this.workspace.executions.values()].some(
			(execution) => execution.token === token && execution.state === 'running',
		);
	}

	/**
	 * Ends a workflow step (https://docs.slack.dev/reference/methods/functions.completeSuccess): once
	 * only (`execution_not_in_running_state` after), with outputs that hold every required output
	 * parameter of the step's definition (`parameter_validation_failed` otherwise).
	 */
	private completeStep(method: string, params: Params): Record<string, unknown> {
		const execution = this.workspace.executions.get(required(params, 'function_execution_id'));
		if (!execution) fail('function_execution_not_found');
		if (execution.state !== 'running') fail('execution_not_in_running_state');
		if (method === 'functions.completeError') {
			execution.error = required(params, 'error');
			execution.state = 'failed';
		} else {
			const outputs = json(required(params, 'outputs'), undefined);
			if (!outputs || typeof outputs !== 'object' || Array.isArray(outputs))
				fail('parameter_validation_failed');
			const definition = this.options.config.functions.get(execution.callbackId);
			const missing = (definition?.output_parameters.required ?? []).filter(
				(name) => !(name in outputs),
			);
			if (missing.length > 0) fail('parameter_validation_failed');
			// Each output must be of its declared type (https://docs.slack.dev/reference/methods/functions.completeSuccess:
			// parameter_validation_failed); a file output names a file of the workspace.
			for (const [name, value] of Object.entries(outputs)) {
				const type = definition?.output_parameters.properties[name]?.type;
				if (type && !this.outputFits(type, value)) fail('parameter_validation_failed');
			}
			execution.outputs = { ...outputs };
			execution.state = 'completed';
		}
		this.workspace.changed();
		return {};
	}

	/** Whether a step's output value is of the type the manifest declares for it. */
	private outputFits(type: string, value: unknown): boolean {
		switch (type) {
			case 'string':
				return typeof value === 'string';
			case 'integer':
				return Number.isInteger(value);
			case 'number':
				return typeof value === 'number' && Number.isFinite(value);
			case 'boolean':
				return typeof value === 'boolean';
			case 'slack#/types/file_id':
				return typeof value === 'string' && this.workspace.files.has(value);
			default:
				return true;
		}
	}

	/**
	 * Agent sessions (https://docs.slack.dev/reference/methods/agents.sessions.setStatus): only apps
	 * declared as agents create them ("Only apps declared as agents in the app settings can create
	 * sessions"; Slack's docs name no error code for the refusal, `not_allowed` here). The first
	 * setStatus creates the session with its title (at most 200 characters); without the
	 * `agent_session_stopped` subscription Slack warns `missing_agent_session_stopped_event_subscription`
	 * and shows no working stop button.
	 */
	private agentSessions(method: string, params: Params): Record<string, unknown> {
		const { config } = this.options;
		if (config.experience !== 'agent') fail('not_allowed');
		const channel = required(params, 'channel_id');
		const threadTs = required(params, 'thread_ts');
		if (!this.workspace.find(channel, threadTs)) fail('thread_not_found');
		const title = params.title;
		if (title !== undefined && (title.length === 0 || title.length > 200)) fail('invalid_title');
		if (method === 'agents.sessions.rename') {
			const session = this.workspace.session(channel, threadTs);
			if (!session) fail('session_not_found');
			session.title = required(params, 'title');
			this.workspace.changed();
			return {};
		}
		const status = SESSION_STATUSES.find((known) => known === params.status);
		if (!status) fail('invalid_status');
		// The title counts only when the call creates the session.
		const session = this.workspace.setSession(channel, threadTs, status, title);
		const warning = config.botEvents.has('agent_session_stopped')
			? {}
			: { warning: 'missing_agent_session_stopped_event_subscription' };
		return { status: session.status, title: session.title ?? '', ...warning };
	}

	private replies(params: Params): Record<string, unknown> {
		const channel = required(params, 'channel');
		const ts = required(params, 'ts');
		const parent = this.workspace.find(channel, ts);
		if (!parent) fail('thread_not_found');
		const root = parent.threadTs && parent.threadTs !== parent.ts ? parent.threadTs : parent.ts;
		return this.page(params, this.workspace.thread(channel, root), 1000);
	}

	/** A channel's top-level messages, newest first, between `oldest` and `latest` (exclusive) when given. */
	private history(params: Params): Record<string, unknown> {
		const channel = required(params, 'channel');
		const oldest = Number(params.oldest || 0);
		const latest = params.latest ? Number(params.latest) : Number.POSITIVE_INFINITY;
		const messages = this.workspace
			.channelMessages(channel)
			.filter((message) => Number(message.ts) > oldest && Number(message.ts) < latest)
			.reverse();
		return this.page(params, messages, 100);
	}

	/** One page of messages as Slack pages them: `limit` and an opaque `cursor`, metadata on request. */
	private page(
		params: Params,
		all: StoredMessage[],
		defaultLimit: number,
	): Record<string, unknown> {
		const withMetadata =
			params.include_all_metadata === 'true' || params.include_all_metadata === '1';
		const limit = Math.min(Number(params.limit) || defaultLimit, 1000);
		const start = Number(params.cursor || 0);
		const page = all.slice(start, start + limit);
		const more = start + limit < all.length;
		return {
			messages: page.map((message) =>
				publicMessage(message, withMetadata, this.files(message), this.options.baseUrl()),
			),
			has_more: more,
			response_metadata: { next_cursor: more ? String(start + limit) : '' },
		};
	}

	private files(message: StoredMessage): StoredFile[] {
		return message.fileIds.flatMap((id) => this.workspace.files.get(id) ?? []);
	}

	private completeUpload(params: Params): Record<string, unknown> {
		const list = json(required(params, 'files'), []);
		if (!Array.isArray(list) || list.length === 0) fail('invalid_arguments');
		const files: StoredFile[] = list.map((entry: unknown) => {
			const id =
				entry && typeof entry === 'object' && 'id' in entry && typeof entry.id === 'string'
					? entry.id
					: fail('invalid_arguments');
			const file = this.workspace.files.get(id);
			if (!file || !file.content) fail('file_not_found');
			if (entry && typeof entry === 'object' && 'title' in entry && typeof entry.title === 'string')
				file.title = entry.title;
			return file;
		});
		const channel = params.channel_id || params.channels;
		if (channel) {
			const threadTs = params.thread_ts || undefined;
			if (threadTs && !this.workspace.find(channel, threadTs)) fail('thread_not_found');
			for (const file of files) {
				file.shared = true;
				file.channels.add(channel);
			}
			this.workspace.post({
				channel,
				user: BOT.userId,
				botId: BOT.botId,
				text: params.initial_comment ?? '',
				threadTs,
				fileIds: files.map((file) => file.id),
			});
		}
		return { files: files.map((file) => this.publicFile(file)) };
	}

	/**
	 * files.info (https://docs.slack.dev/reference/methods/files.info): needs `files:read`
	 * (`missing_scope` without it); a file the bot cannot see is `file_not_found`, as one that does
	 * not exist.
	 */
	private fileInfo(params: Params): Record<string, unknown> {
		if (!this.options.config.botScopes.has('files:read')) fail('missing_scope');
		const file = this.workspace.files.get(required(params, 'file'));
		if (!file || !this.workspace.botSees(file)) fail('file_not_found');
		return { file: this.publicFile(file) };
	}

	private viewParam(params: Params): Record<string, unknown> {
		const view = json(required(params, 'view'), undefined);
		if (!view || typeof view !== 'object' || Array.isArray(view)) fail('invalid_arguments');
		const record = view as Record<string, unknown>;
		if (record.type !== 'modal' || !Array.isArray(record.blocks)) fail('invalid_arguments');
		return record;
	}

	private openView(params: Params): Record<string, unknown> {
		const trigger = this.workspace.redeemTrigger(required(params, 'trigger_id'));
		if (trigger === 'invalid') fail('invalid_trigger_id');
		if (trigger === 'expired') fail('expired_trigger_id');
		const open = this.workspace.openView(trigger.user, this.viewParam(params));
		return {
			view: { ...open.view, id: open.id, hash: open.hash, team_id: TEAM.id, app_id: BOT.appId },
		};
	}

	publicFile(file: StoredFile): Record<string, unknown> {
		return publicFile(file, this.options.baseUrl());
	}
}

/**
 * A file object as Slack shows it (https://docs.slack.dev/reference/objects/file-object): its
 * `url_private` and `url_private_download` serve the bytes only with a token that may see the file
 * in the Authorization header ("you must send an Authorization header with a bearer token").
 */
export function publicFile(file: StoredFile, baseUrl: string): Record<string, unknown> {
	const path = `${baseUrl}/files-pri/${TEAM.id}-${file.id}`;
	const name = encodeURIComponent(file.name);
	return {
		id: file.id,
		created: 1_780_000_000,
		name: file.name,
		title: file.title,
		mimetype: file.mimetype,
		filetype: file.filetype,
		size: file.size,
		user: file.user,
		...(file.durationMs !== undefined ? { duration_ms: file.durationMs } : {}),
		url_private: `${path}/${name}`,
		url_private_download: `${path}/download/${name}`,
		...(file.altText ? { alt_txt: file.altText } : {}),
	};
}

function publicMessage(
	message: StoredMessage,
	withMetadata: boolean,
	files: StoredFile[],
	baseUrl: string,
): Record<string, unknown> {
	return {
		type: 'message',
		ts: message.ts,
		user: message.user,
		...(message.botId ? { bot_id: message.botId, app_id: BOT.appId } : {}),
		text: message.text,
		...(message.blocks ? { blocks: message.blocks } : {}),
		...(message.threadTs ? { thread_ts: message.threadTs } : {}),
		...(withMetadata && message.metadata ? { metadata: message.metadata } : {}),
		...(files.length ? { files: files.map((file) => publicFile(file, baseUrl)) } : {}),
		...(message.edited ? { edited: { user: message.user, ts: message.ts } } : {}),
	};
}

/** Slack's suggested prompts: one to four, each a title and a message. */
function suggestedPrompts(params: Params): { title: string; message: string }[] {
	const prompts = json(required(params, 'prompts'), undefined);
	if (!Array.isArray(prompts) || prompts.length === 0 || prompts.length > 4)
		fail('invalid_arguments');
	return prompts.map((prompt: unknown) => {
		const record = prompt && typeof prompt === 'object' ? { ...prompt } : {};
		const title: unknown = 'title' in record ? record.title : undefined;
		const message: unknown = 'message' in record ? record.message : undefined;
		if (typeof title !== 'string' || typeof message !== 'string') fail('invalid_arguments');
		return { title, message };
	});
}
