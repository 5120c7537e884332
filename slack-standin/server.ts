import {
	createApp,
	type CreateAppOptions,
	type StandinAppConfig,
	type StepDefinition,
} from './app-config';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppLink, type AppReply } from './app-link';
import { responseUrlRefusal, viewRefusal } from './limits';
import { renderPage } from './page';
import type { Clock } from '../shared/clock';
import type { RateLimitOptions } from './rate-limits';
import { SocketModeServer, type SocketModeOptions } from './socket-mode';
import { WebApi, type Params } from './web-api';
import {
	BOT,
	DEFAULT_CHANNEL,
	DIRECT_MESSAGE,
	LOCAL_USER,
	SHORTCUTS,
	Workspace,
	TEAM,
	type StoredFile,
	type StoredMessage,
} from './workspace';

/** The conversations the page shows: the channel and the direct messages with the app. */
const CONVERSATIONS = [DEFAULT_CHANNEL, DIRECT_MESSAGE] as const;

function conversation(id: string | undefined): (typeof CONVERSATIONS)[number] {
	return CONVERSATIONS.find((candidate) => candidate.id === id) ?? DEFAULT_CHANNEL;
}

/**
 * A local Slack: the Web API the app calls, the response URLs it answers on, the upload URLs its
 * files go to, and a web page that shows the channel and lets a person use the app. Listens on
 * 127.0.0.1 only. The signing secret stays here; the page never sees it.
 */

export interface StandinOptions extends CreateAppOptions {
	port?: number;
	botToken: string;
	signingSecret: string;
	/** Where the app receives Slack's requests; can be set later with `setAppUrl`. */
	appEventsUrl?: string;
	nativeStreaming?: boolean;
	/**
	 * Socket Mode is on (the app-level token `xapp-…` it accepts): every event, command and
	 * interaction goes to the app over its WebSocket instead of `appEventsUrl`.
	 */
	appToken?: string;
	/** The clock of the rate limits (the system's by default). */
	clock?: Clock;
	/** Slack's rate limits (./rate-limits.ts) unless a test changes them, saying why. */
	rateLimits?: RateLimitOptions;
	/** Socket Mode timings (shorter in tests than Slack's). */
	socketMode?: Pick<
		SocketModeOptions,
		'ackTimeoutMs' | 'retryDelaysMs' | 'pingIntervalMs' | 'appTokenScopes'
	>;
}

interface ResponseTarget {
	channel: string;
	user: string;
	ephemeralId?: string;
	messageTs?: string;
	uses: number;
	createdAt: number;
}

/** Slack's rule for response URLs: five uses within thirty minutes. */
export const RESPONSE_URL_MAX_USES = 5;
const RESPONSE_URL_LIFETIME_MS = 30 * 60 * 1000;
const MAX_BODY_BYTES = 50 * 1024 * 1024;

export async function readBody(req: IncomingMessage): Promise<Buffer> {
	const chunks: Buffer[] = [];
	let size = 0;
	for await (const chunk of req) {
		const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
		size += buffer.length;
		if (size > MAX_BODY_BYTES) throw new Error('body too large');
		chunks.push(buffer);
	}
	return Buffer.concat(chunks);
}

function send(
	res: ServerResponse,
	status: number,
	body: unknown,
	headers: Record<string, string> = {},
): void {
	const text = typeof body === 'string' ? body : JSON.stringify(body);
	res.writeHead(status, {
		'content-type':
			typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8',
		...headers,
	});
	res.end(text);
}

function formParams(body: Buffer, contentType: string): Params {
	if (/application\/json/i.test(contentType)) {
		const parsed: unknown = JSON.parse(body.toString('utf8') || '{}');
		const params: Params = {};
		if (parsed && typeof parsed === 'object') {
			for (const [key, value] of Object.entries(parsed)) {
				if (value !== undefined && value !== null)
					params[key] = typeof value === 'string' ? value : JSON.stringify(value);
			}
		}
		return params;
	}
	return Object.fromEntries(new URLSearchParams(body.toString('utf8')));
}

function jsonObject(body: Buffer): Record<string, unknown> {
	const parsed: unknown = JSON.parse(body.toString('utf8') || '{}');
	if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
		throw new Error('expected a JSON object');
	return parsed as Record<string, unknown>;
}

const text = (value: unknown): string | undefined =>
	typeof value === 'string' ? value : undefined;

export class Standin {
	readonly workspace = new Workspace();
	/** The app as created from its manifest (the repository's, unless a test gives another). */
	readonly config: StandinAppConfig;
	readonly api: WebApi;
	readonly app: AppLink;
	/** Set when Socket Mode is on. */
	readonly socketMode?: SocketModeServer;
	private readonly server: Server;
	private readonly responseTargets = new Map<string, ResponseTarget>();
	private readonly botToken: string;
	/** Every request for a file's private URL, and whether it carried the bot's token. */
	readonly fileDownloads: { fileId: string; authorized: boolean }[] = [];
	private appEventsUrl: string | undefined;
	private origin = '';

	constructor(options: StandinOptions) {
		this.appEventsUrl = options.appEventsUrl;
		this.botToken = options.botToken;
		this.config = createApp(options);
		this.api = new WebApi(this.workspace, {
			botToken: options.botToken,
			config: this.config,
			nativeStreaming: options.nativeStreaming ?? true,
			baseUrl: () => this.origin,
			clock: options.clock,
			rateLimits: options.rateLimits,
		});
		if (options.appToken)
			this.socketMode = new SocketModeServer({
				...options.socketMode,
				appToken: options.appToken,
				origin: () => this.origin,
			});
		this.app = new AppLink(this.workspace, {
			signingSecret: options.signingSecret,
			publicFile: (file) => this.api.publicFile(file),
			config: this.config,
			eventsUrl: () => this.appEventsUrl,
			socketMode: this.socketMode,
			responseUrl: (target) => this.createResponseUrl(target),
		});
		this.server = createServer((req, res) => {
			this.route(req, res).catch((error: unknown) => {
				if (!res.headersSent)
					send(res, 500, {
						ok: false,
						error: error instanceof Error ? error.message : 'internal_error',
					});
				else res.end();
			});
		});
		const { socketMode } = this;
		if (socketMode)
			this.server.on('upgrade', (req, socket, head: Buffer) =>
				socketMode.upgrade(req, socket, head),
			);
	}

	async listen(port = 0): Promise<void> {
		await new Promise<void>((resolve, reject) => {
			this.server.once('error', reject);
			this.server.listen(port, '127.0.0.1', () => resolve());
		});
		const address = this.server.address() as AddressInfo;
		this.origin = `http://127.0.0.1:${address.port}`;
	}

	/** The Web API root for `clientOptions.slackApiUrl`. */
	get apiUrl(): string {
		return `${this.origin}/api/`;
	}

	get pageUrl(): string {
		return `${this.origin}/`;
	}

	setAppUrl(eventsUrl: string): void {
		this.appEventsUrl = eventsUrl;
	}

	async close(): Promise<void> {
		this.socketMode?.close();
		this.server.closeAllConnections();
		await new Promise<void>((resolve) => this.server.close(() => resolve()));
	}

	/**
	 * Resolves when `predicate` holds for the workspace: checked now and after changes, once per turn
	 * of the event loop however many changes it made (a predicate reading thousands of threads, checked
	 * on each of a burst's changes, would take the stand-in's CPU from the requests it serves).
	 */
	waitFor<T>(
		predicate: () => T | undefined | false,
		timeoutMs = 10_000,
		what = 'the expected Slack state',
	): Promise<T> {
		return new Promise((resolve, reject) => {
			let done = false;
			let checkScheduled = false;
			const check = () => {
				checkScheduled = false;
				if (done) return;
				const value = predicate();
				if (value) {
					cleanup();
					resolve(value);
				}
			};
			const scheduleCheck = () => {
				if (checkScheduled) return;
				checkScheduled = true;
				setImmediate(check);
			};
			const timer = setTimeout(() => {
				cleanup();
				reject(new Error(`Timed out after ${timeoutMs} ms waiting for ${what}.`));
			}, timeoutMs);
			const cleanup = () => {
				done = true;
				clearTimeout(timer);
				this.workspace.off('change', scheduleCheck);
			};
			this.workspace.on('change', scheduleCheck);
			check();
		});
	}

	/**
	 * A person clicks the stop button of a session in `processing` (Slack shows it only then): Slack
	 * ends the thread's streams itself and tells the app which, with `agent_session_stopped`; the
	 * session stays `processing` until the app moves it (https://docs.slack.dev/ai/agent-sessions).
	 * False when the session shows no stop button.
	 */
	async stopSession(user: string, channel: string, threadTs: string): Promise<boolean> {
		if (this.workspace.session(channel, threadTs)?.status !== 'processing') return false;
		const streams = this.workspace
			.replies(channel, threadTs)
			.filter((message) => message.streaming)
			.map((message) => message.ts);
		for (const ts of streams) this.workspace.update(channel, ts, { streaming: false });
		this.reportFailure(
			'Stopping',
			await this.app.agentSessionStopped(user, channel, threadTs, streams),
			channel,
		);
		return true;
	}

	/** The file objects a message carries, as Slack shows them to the app. */
	filesOf(message: StoredMessage): Record<string, unknown>[] {
		return message.fileIds.flatMap((id) => {
			const file = this.workspace.files.get(id);
			return file ? [this.api.publicFile(file)] : [];
		});
	}

	/** A person posts in a channel or thread; the app hears it as a message event. */
	async postAsUser(
		user: string,
		channel: string,
		messageText: string,
		threadTs?: string,
	): Promise<{ message: StoredMessage; reply: AppReply }> {
		const message = this.workspace.post({ channel, user, text: messageText, threadTs });
		const reply = await this.app.messageEvent(message);
		return { message, reply };
	}

	/** A person shares a file in a channel or thread; the app hears the message (subtype `file_share`). */
	async shareFileAsUser(options: {
		user: string;
		channel: string;
		name: string;
		content: Buffer;
		text?: string;
		threadTs?: string;
	}): Promise<{ message: StoredMessage; file: StoredFile; reply: AppReply }> {
		const { message, file } = this.workspace.shareFile(options);
		const reply = await this.app.messageEvent(message, [this.api.publicFile(file)]);
		return { message, file, reply };
	}

	private createResponseUrl(target: {
		channel: string;
		user: string;
		ephemeralId?: string;
		messageTs?: string;
	}): string {
		const id = this.workspace.newId('R');
		this.responseTargets.set(id, { ...target, uses: 0, createdAt: Date.now() });
		return `${this.origin}/response/${id}`;
	}

	private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
		const url = new URL(req.url ?? '/', 'http://127.0.0.1');
		const path = url.pathname;
		const method = req.method ?? 'GET';
		let match: RegExpExecArray | null;

		if (method === 'POST' && (match = /^\/api\/([A-Za-z.]+)$/.exec(path))) {
			const body = await readBody(req);
			const params = formParams(body, req.headers['content-type'] ?? '');
			// Socket Mode's own method: the app-level token, which no other method takes.
			if (match[1] === 'apps.connections.open') {
				const opened = this.socketMode?.connectionsOpen(req.headers.authorization, params) ?? {
					status: 200,
					body: { ok: false, error: 'invalid_auth' },
				};
				return send(res, opened.status, opened.body);
			}
			const reply = this.api.handle(match[1], req.headers.authorization, params);
			// The answer never arrives: the caller sees the connection drop, or gives up waiting.
			const { lost } = reply;
			if (lost === true) return void req.socket.destroy();
			if (lost) await new Promise((resolve) => setTimeout(resolve, lost.lateByMs));
			if (!req.socket.destroyed) send(res, reply.status, reply.body, reply.headers);
			return;
		}
		if (method === 'POST' && (match = /^\/upload\/([A-Z0-9]+)$/.exec(path))) {
			return this.upload(match[1], req, res);
		}
		if (method === 'POST' && (match = /^\/response\/([A-Z0-9]+)$/.exec(path))) {
			return this.respond(match[1], await readBody(req), res);
		}
		if (
			method === 'GET' &&
			(match = /^\/files-pri\/([A-Z0-9]+)-([A-Z0-9]+)\/(?:download\/)?[^/]+$/.exec(path))
		)
			return this.privateFile(match[1], match[2], req.headers.authorization, res);
		// The page is the signed-in person, who sees the files of the conversations it shows.
		if (method === 'GET' && (match = /^\/ui\/files\/([A-Z0-9]+)$/.exec(path))) {
			const file = this.workspace.files.get(match[1]);
			if (!file?.content) return send(res, 404, 'file not found');
			res.writeHead(200, {
				'content-type': file.mimetype,
				'content-length': String(file.content.length),
				'cache-control': 'no-store',
			});
			res.end(file.content);
			return;
		}
		if (method === 'GET' && path === '/') {
			res.writeHead(200, {
				'content-type': 'text/html; charset=utf-8',
				'cache-control': 'no-store',
			});
			res.end(renderPage());
			return;
		}
		if (method === 'GET' && path === '/ui/state')
			return send(res, 200, this.snapshot(url.searchParams.get('channel') ?? undefined));
		if (method === 'GET' && path === '/ui/events') return this.events(req, res);
		if (method === 'POST' && path.startsWith('/ui/'))
			return this.uiAction(path.slice(4), jsonObject(await readBody(req)), res);
		send(res, 404, 'not found');
	}

	/**
	 * A file's `url_private`: Slack serves it only with a token in the Authorization header that may
	 * see the file (https://docs.slack.dev/messaging/working-with-files: "you must send an
	 * Authorization header with a bearer token"); a request without one gets no file.
	 */
	private privateFile(
		team: string,
		fileId: string,
		authorization: string | undefined,
		res: ServerResponse,
	): void {
		const token = authorization?.replace(/^Bearer\s+/i, '');
		this.fileDownloads.push({ fileId, authorized: token === this.botToken });
		if (token !== this.botToken) return send(res, 403, 'not_authed');
		const file = this.workspace.files.get(fileId);
		if (team !== TEAM.id || !file?.content || !this.workspace.botSees(file))
			return send(res, 404, 'file_not_found');
		res.writeHead(200, {
			'content-type': file.mimetype,
			'content-length': String(file.content.length),
			'cache-control': 'no-store',
		});
		res.end(file.content);
	}

	private async upload(fileId: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
		const file = this.workspace.files.get(fileId);
		if (!file) return send(res, 404, 'unknown upload');
		const raw = await readBody(req);
		const contentType = req.headers['content-type'] ?? '';
		let content = raw;
		if (/multipart\/form-data/i.test(contentType)) {
			// The WebClient sends the bytes as the multipart field `body`.
			const form = await new Request('http://standin/upload', {
				method: 'POST',
				headers: { 'content-type': contentType },
				body: raw,
			}).formData();
			const part = form.get('body') ?? form.get('file');
			if (!part || typeof part === 'string') return send(res, 400, 'missing file part "body"');
			content = Buffer.from(await part.arrayBuffer());
		}
		file.content = content;
		file.size = content.length;
		this.workspace.changed();
		send(res, 200, `OK - ${content.length}`);
	}

	private respond(id: string, raw: Buffer, res: ServerResponse): void {
		const target = this.responseTargets.get(id);
		if (!target) return send(res, 404, 'no_such_url');
		if (target.uses >= RESPONSE_URL_MAX_USES) return send(res, 404, 'used_url');
		if (Date.now() - target.createdAt > RESPONSE_URL_LIFETIME_MS)
			return send(res, 404, 'expired_url');
		target.uses++;
		const body = jsonObject(raw);
		const refusal = responseUrlRefusal(body);
		if (refusal) {
			this.api.calls.push({
				method: 'response_url',
				params: {},
				status: 400,
				error: refusal,
				at: Date.now(),
			});
			return send(res, 400, refusal);
		}
		// Slack cuts a message's text at 40,000 characters (https://api.slack.com/changelog/2018-04-truncating-really-long-messages).
		const messageText = (text(body.text) ?? '').slice(0, 40_000);
		const blocks = Array.isArray(body.blocks) ? body.blocks : undefined;
		if (body.delete_original === true) {
			if (target.ephemeralId) this.workspace.deleteEphemeral(target.ephemeralId);
			return send(res, 200, { ok: true });
		}
		if (body.replace_original === true) {
			if (target.ephemeralId)
				this.workspace.replaceEphemeral(target.ephemeralId, { text: messageText, blocks });
			else if (target.messageTs)
				this.workspace.update(target.channel, target.messageTs, { text: messageText, blocks });
			return send(res, 200, { ok: true });
		}
		if (body.response_type === 'in_channel') {
			this.workspace.post({
				channel: target.channel,
				user: BOT.userId,
				botId: BOT.botId,
				text: messageText,
				blocks,
				threadTs: text(body.thread_ts),
			});
		} else {
			// An answer to a click in a thread shows in that thread, as in Slack.
			const clickedThread = target.messageTs
				? this.workspace.find(target.channel, target.messageTs)?.threadTs
				: undefined;
			const ephemeral = this.workspace.postEphemeral({
				channel: target.channel,
				user: target.user,
				text: messageText,
				blocks,
				threadTs: text(body.thread_ts) ?? clickedThread,
			});
			// Later answers to the same request may replace this message.
			target.ephemeralId ??= ephemeral.id;
		}
		send(res, 200, { ok: true });
	}

	/** What the page shows: a conversation (the channel by default) as the local user sees it. */
	snapshot(channelId?: string): Record<string, unknown> {
		const shown = conversation(channelId);
		const ws = this.workspace;
		const render = (message: StoredMessage) => ({
			ts: message.ts,
			user: message.user,
			bot: message.botId !== undefined,
			text: message.text,
			blocks: message.blocks ?? null,
			edited: message.edited,
			streaming: message.streaming,
			assistant: ws.assistantThreads.get(`${message.channel}/${message.ts}`) ?? null,
			session: ws.session(message.channel, message.ts) ?? null,
			markdown: message.streamed,
			tasks: message.tasks ?? [],
			planTitle: message.planTitle ?? null,
			taskDisplayMode: message.taskDisplayMode ?? null,
			files: message.fileIds.flatMap((fileId) => {
				const file = ws.files.get(fileId);
				return file
					? [
							{
								id: file.id,
								name: file.name,
								title: file.title,
								mimetype: file.mimetype,
								url: `/ui/files/${file.id}`,
							},
						]
					: [];
			}),
		});
		const view = [...ws.views.values()].reverse().find((open) => open.user === LOCAL_USER.id);
		return {
			revision: ws.revision,
			channel: shown,
			conversations: CONVERSATIONS,
			me: LOCAL_USER,
			bot: { id: BOT.userId, name: BOT.displayName },
			messages: ws.channelMessages(shown.id).map((message) => ({
				...render(message),
				replies: ws.replies(shown.id, message.ts).map(render),
			})),
			ephemerals: ws.ephemeralsFor(LOCAL_USER.id).filter((message) => message.channel === shown.id),
			view: view ? { id: view.id, hash: view.hash, view: view.view, errors: view.errors } : null,
			home: ws.homes.get(LOCAL_USER.id)?.view ?? null,
			shortcuts: SHORTCUTS,
			experience: this.config.experience,
			messagesTabPrompts: ws.messagesTabPrompts.get(shown.id) ?? null,
			...this.workflowSteps(),
		};
	}

	/**
	 * What the page's Workflow steps tab shows: the app's steps as its manifest defines them (their
	 * inputs, typed), the files a file input can take (those shared in a conversation), and the runs,
	 * newest first, with their outputs or error.
	 */
	private workflowSteps(): Record<string, unknown> {
		const ws = this.workspace;
		const fields = (parameters: StepDefinition['input_parameters']) =>
			Object.entries(parameters.properties).map(([name, parameter]) => ({
				name,
				type: parameter.type,
				title: parameter.title ?? name,
				description: typeof parameter.description === 'string' ? parameter.description : '',
				required: parameters.required?.includes(name) ?? false,
			}));
		return {
			steps: [...this.config.functions].map(([callbackId, definition]) => ({
				callbackId,
				title: definition.title,
				description: definition.description ?? '',
				inputs: fields(definition.input_parameters),
				outputs: fields(definition.output_parameters),
			})),
			stepFiles: [...ws.files.values()]
				.filter((file) => file.shared && file.channels.size > 0)
				.map((file) => ({ id: file.id, name: file.name })),
			stepRuns: [...ws.executions.values()].reverse().map((execution) => ({
				id: execution.id,
				callbackId: execution.callbackId,
				title: this.config.functions.get(execution.callbackId)?.title ?? execution.callbackId,
				state: execution.state,
				outputs: execution.outputs ?? null,
				error: execution.error ?? null,
			})),
		};
	}

	/**
	 * Runs one of the app's steps as Workflow Builder does once a workflow reaches it: Builder lets a
	 * workflow be published only with every required input filled, each of its type, so a run
	 * without them is refused here, naming the input, before the app hears of it.
	 */
	private async runStep(
		body: Record<string, unknown>,
	): Promise<{ status: number; body: Record<string, unknown> }> {
		const callbackId = text(body.callbackId) ?? '';
		const definition = this.config.functions.get(callbackId);
		if (!definition) return { status: 404, body: { ok: false, error: `No step "${callbackId}".` } };
		const given =
			body.inputs && typeof body.inputs === 'object'
				? (body.inputs as Record<string, unknown>)
				: {};
		const inputs: Record<string, unknown> = {};
		// Like Slack's own answers: 200, `ok: false` and why (the page shows it under the form).
		const refuse = (error: string) => ({ status: 200, body: { ok: false, error } });
		for (const [name, parameter] of Object.entries(definition.input_parameters.properties)) {
			const value = text(given[name])?.trim() ?? '';
			const title = parameter.title ?? name;
			if (value === '') {
				if (definition.input_parameters.required?.includes(name))
					return refuse(`${title} is required.`);
				continue;
			}
			switch (parameter.type) {
				case 'integer':
					if (!/^-?\d+$/.test(value)) return refuse(`${title} must be a whole number.`);
					inputs[name] = Number(value);
					break;
				case 'slack#/types/file_id':
					if (!this.workspace.files.get(value)?.shared)
						return refuse(`${title} must be a file shared in Slack.`);
					inputs[name] = value;
					break;
				case 'slack#/types/channel_id':
					if (!CONVERSATIONS.some((one) => one.id === value))
						return refuse(`${title} must be a conversation of this workspace.`);
					inputs[name] = value;
					break;
				default:
					inputs[name] = value;
			}
		}
		const run = this.app.functionExecuted(callbackId, inputs);
		// The run shows as running at once; the app completes or fails it later.
		this.workspace.changed();
		const { execution, reply } = await run;
		this.reportFailure(definition.title, reply, text(inputs.channel_id));
		return { status: 200, body: { ok: true, executionId: execution.id } };
	}

	private events(req: IncomingMessage, res: ServerResponse): void {
		res.writeHead(200, {
			'content-type': 'text/event-stream',
			'cache-control': 'no-store',
			connection: 'keep-alive',
		});
		const push = (revision: number) => res.write(`data: ${revision}\n\n`);
		push(this.workspace.revision);
		this.workspace.on('change', push);
		const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
		req.on('close', () => {
			clearInterval(keepAlive);
			this.workspace.off('change', push);
		});
	}

	/** Shows what Slack shows when an app fails to answer a command in time. */
	private reportFailure(
		label: string,
		reply: AppReply,
		channel: string = DEFAULT_CHANNEL.id,
	): void {
		// Slack did not send it (the app does not subscribe): nothing to fail.
		if (reply.notSubscribed) return;
		if (reply.status === 200) {
			if (reply.body.trim().startsWith('{')) {
				const body = JSON.parse(reply.body) as Record<string, unknown>;
				if (body.text || body.blocks) {
					this.workspace.postEphemeral({
						channel,
						user: LOCAL_USER.id,
						text: text(body.text) ?? '',
						blocks: Array.isArray(body.blocks) ? body.blocks : undefined,
					});
				}
			}
			return;
		}
		this.workspace.postEphemeral({
			channel,
			user: LOCAL_USER.id,
			text: `${label} failed with the error "${reply.status === 404 ? 'operation_timeout' : `http_${reply.status}`}"`,
		});
	}

	private async uiAction(
		action: string,
		body: Record<string, unknown>,
		res: ServerResponse,
	): Promise<void> {
		const user = LOCAL_USER.id;
		const channel = conversation(text(body.channel)).id;
		switch (action) {
			case 'command': {
				const input = (text(body.text) ?? '').trim();
				const command = /^(\/\S+)\s*([\s\S]*)$/.exec(input);
				if (!command) {
					await this.postAsUser(user, channel, input);
					return send(res, 200, { ok: true });
				}
				if (command[1] !== '/gpu') {
					this.workspace.postEphemeral({
						channel,
						user,
						text: `${command[1]} is not a valid command. This workspace has /gpu.`,
					});
					return send(res, 200, { ok: true });
				}
				const reply = await this.app.slashCommand({
					user,
					channel,
					text: command[2],
					userName: LOCAL_USER.name,
				});
				this.reportFailure('/gpu', reply, channel);
				return send(res, 200, { ok: true });
			}
			case 'share-file': {
				// The composer's attachment: the page sends the file's bytes as base64.
				const name = text(body.name)?.trim();
				const content = text(body.contentBase64);
				if (!name || content === undefined) return send(res, 400, { ok: false });
				await this.shareFileAsUser({
					user,
					channel,
					name,
					content: Buffer.from(content, 'base64'),
					text: text(body.text)?.trim(),
					threadTs: text(body.threadTs),
				});
				return send(res, 200, { ok: true });
			}
			case 'view-file': {
				// A file chosen in a modal's file input, uploaded at once as Slack's client does.
				const name = text(body.name)?.trim();
				const content = text(body.contentBase64);
				if (!name || content === undefined) return send(res, 400, { ok: false });
				const file = this.workspace.uploadToView({
					user,
					name,
					content: Buffer.from(content, 'base64'),
				});
				return send(res, 200, { ok: true, id: file.id });
			}
			case 'reply': {
				const threadTs = text(body.threadTs);
				const messageText = text(body.text)?.trim();
				if (!threadTs || !messageText) return send(res, 400, { ok: false });
				await this.postAsUser(user, channel, messageText, threadTs);
				return send(res, 200, { ok: true });
			}
			case 'action': {
				const messageTs = text(body.messageTs);
				const message = messageTs ? this.workspace.find(channel, messageTs) : undefined;
				const reply = await this.app.click({
					user,
					channel,
					actionId: text(body.actionId) ?? '',
					blockId: text(body.blockId),
					value: text(body.value),
					actionType: body.actionType === 'feedback_buttons' ? 'feedback_buttons' : undefined,
					message,
					ephemeralId: text(body.ephemeralId),
				});
				this.reportFailure('The button', reply, channel);
				return send(res, 200, { ok: true });
			}
			case 'view-select': {
				const viewId = text(body.viewId) ?? '';
				if (!this.workspace.views.has(viewId)) return send(res, 404, { ok: false });
				const reply = await this.app.selectInView({
					user,
					viewId,
					blockId: text(body.blockId) ?? '',
					actionId: text(body.actionId) ?? '',
					option: { value: text(body.value) ?? '', text: text(body.label) ?? '' },
					values:
						body.values && typeof body.values === 'object'
							? (body.values as Record<string, Record<string, unknown>>)
							: {},
				});
				this.reportFailure('The form', reply, channel);
				return send(res, 200, { ok: true });
			}
			case 'view-submit': {
				const viewId = text(body.viewId) ?? '';
				const values =
					body.values && typeof body.values === 'object'
						? (body.values as Record<string, Record<string, unknown>>)
						: {};
				if (!this.workspace.views.has(viewId)) return send(res, 404, { ok: false });
				const files = fileIdsByBlock(body.files);
				let reply;
				try {
					reply = await this.app.submitView({ user, viewId, values, files });
				} catch (error) {
					// What Slack's client would not let through (a file type the input does not take).
					return send(res, 400, { ok: false, error: String(error) });
				}
				this.applyViewResponse(viewId, reply);
				return send(res, 200, { ok: true });
			}
			case 'shortcut': {
				const shortcut = SHORTCUTS.find(
					(candidate) => candidate.callbackId === text(body.callbackId),
				);
				if (!shortcut) return send(res, 404, { ok: false });
				const message =
					shortcut.type === 'message'
						? this.workspace.find(channel, text(body.messageTs) ?? '')
						: undefined;
				if (shortcut.type === 'message' && !message) return send(res, 404, { ok: false });
				const reply = message
					? await this.app.messageShortcut(
							user,
							shortcut.callbackId,
							message,
							this.filesOf(message),
						)
					: await this.app.globalShortcut(user, shortcut.callbackId);
				this.reportFailure(shortcut.name, reply, channel);
				return send(res, 200, { ok: true });
			}
			case 'assistant-new': {
				// Only an app created with the assistant container has it.
				if (this.config.experience !== 'assistant') return send(res, 404, { ok: false });
				// Slack opens the thread in the app's direct messages; its root names the thread until the app titles it.
				const root = this.workspace.post({
					channel: DIRECT_MESSAGE.id,
					user: BOT.userId,
					botId: BOT.botId,
					text: 'New assistant thread',
				});
				this.workspace.assistantThread(DIRECT_MESSAGE.id, root.ts);
				this.reportFailure(
					'The assistant',
					await this.app.assistantThreadStarted(
						user,
						DIRECT_MESSAGE.id,
						root.ts,
						DEFAULT_CHANNEL.id,
					),
					DIRECT_MESSAGE.id,
				);
				return send(res, 200, { ok: true, threadTs: root.ts });
			}
			case 'messages-opened': {
				this.reportFailure(
					'Opening Messages',
					await this.app.appHomeOpened(user, 'messages'),
					DIRECT_MESSAGE.id,
				);
				return send(res, 200, { ok: true });
			}
			case 'session-stop': {
				const threadTs = text(body.threadTs);
				if (!threadTs) return send(res, 400, { ok: false });
				const stopped = await this.stopSession(user, channel, threadTs);
				return send(res, stopped ? 200 : 409, { ok: stopped });
			}
			case 'run-step': {
				const ran = await this.runStep(body);
				return send(res, ran.status, ran.body);
			}
			case 'home-opened': {
				this.reportFailure('Opening Home', await this.app.appHomeOpened(user), channel);
				return send(res, 200, { ok: true });
			}
			case 'home-action': {
				const reply = await this.app.clickInHome({
					user,
					actionId: text(body.actionId) ?? '',
					blockId: text(body.blockId),
					value: text(body.value),
				});
				this.reportFailure('The button', reply, channel);
				return send(res, 200, { ok: true });
			}
			case 'view-close': {
				this.workspace.closeView(text(body.viewId) ?? '');
				return send(res, 200, { ok: true });
			}
			case 'dismiss': {
				this.workspace.deleteEphemeral(text(body.ephemeralId) ?? '');
				return send(res, 200, { ok: true });
			}
			default:
				send(res, 404, { ok: false });
		}
	}

	/** Applies the app's answer to a view submission the way Slack does. */
	applyViewResponse(viewId: string, reply: AppReply): void {
		const open = this.workspace.views.get(viewId);
		if (!open) return;
		if (reply.status !== 200) {
			open.errors = { '': `The app did not accept the form (HTTP ${reply.status}).` };
			this.workspace.changed();
			return;
		}
		const body = reply.body.trim() ? (JSON.parse(reply.body) as Record<string, unknown>) : {};
		if (body.response_action === 'errors' && body.errors && typeof body.errors === 'object') {
			open.errors = Object.fromEntries(
				Object.entries(body.errors).map(([key, value]) => [key, String(value)]),
			);
			this.workspace.changed();
		} else if (body.response_action === 'update' && body.view && typeof body.view === 'object') {
			const refusal = viewRefusal(body.view);
			if (refusal) {
				open.errors = { '': `Slack refused the app's view: ${refusal}` };
				this.workspace.changed();
				return;
			}
			this.workspace.updateView(viewId, body.view as Record<string, unknown>);
		} else {
			this.workspace.closeView(viewId);
		}
	}
}

export async function startStandin(options: StandinOptions & { port?: number }): Promise<Standin> {
	const standin = new Standin(options);
	await standin.listen(options.port ?? 0);
	return standin;
}

/** `{ blockId: [fileId] }` from the page's submission; anything else is left out. */
function fileIdsByBlock(value: unknown): Record<string, string[]> {
	if (!value || typeof value !== 'object' || Array.isArray(value)) return {};
	const files: Record<string, string[]> = {};
	for (const [block, ids] of Object.entries(value))
		if (Array.isArray(ids)) files[block] = ids.filter((id): id is string => typeof id === 'string');
	return files;
}
