import { createHmac, randomBytes } from 'node:crypto';
import { subscriptionFor, type StandinAppConfig, type StepDefinition } from './app-config';
import type { EnvelopeType } from './socket-mode';
import {
	BOT,
	TEAM,
	Workspace,
	type StepExecution,
	type StoredFile,
	type StoredMessage,
} from './workspace';

/**
 * Sends what Slack sends to an app: slash commands, button clicks, modal submissions and message
 * events, signed with the app's signing secret (`v0=` HMAC-SHA256 of `v0:<ts>:<body>`) to its
 * Request URL, or in Socket Mode as envelopes over the app's WebSocket (same payloads, no signature).
 */

export function slackSignature(
	signingSecret: string,
	timestampSeconds: number,
	body: string,
): string {
	return `v0=${createHmac('sha256', signingSecret).update(`v0:${timestampSeconds}:${body}`).digest('hex')}`;
}

export interface AppReply {
	status: number;
	body: string;
	/** Set when Slack would not have sent it: the app does not subscribe to that event. */
	notSubscribed?: string;
}

export interface SlashCommandOptions {
	user: string;
	channel: string;
	text: string;
	command?: string;
	userName?: string;
}

export interface ButtonClick {
	user: string;
	channel: string;
	actionId: string;
	blockId?: string;
	value?: string;
	/** `button` unless said otherwise (`feedback_buttons`). */
	actionType?: string;
	/** The channel message carrying the button, or the ephemeral message's id. */
	message?: StoredMessage;
	ephemeralId?: string;
}

export interface ViewSubmission {
	user: string;
	viewId: string;
	/** `values[blockId][actionId]` as Slack sends them. */
	values: Record<string, Record<string, unknown>>;
	/** The files attached in the view's file inputs, by block id (their state carries the file objects). */
	files?: Record<string, string[]>;
}

/** "Maximum number of files … Minimum of 1, maximum of 10. Defaults to 10 if not specified." */
const FILE_INPUT_DEFAULT_MAX_FILES = 10;
/** "There is a 10MB file size limit" (https://docs.slack.dev/reference/block-kit/block-elements/file-input-element). */
export const FILE_INPUT_MAX_BYTES = 10 * 1024 * 1024;

/** A choice in a select of an open view whose input block dispatches actions (`dispatch_action`). */
export interface ViewSelection {
	user: string;
	viewId: string;
	blockId: string;
	actionId: string;
	/** The chosen option's value and text. */
	option: { value: string; text: string };
	/** What the view's inputs hold at that moment, as `view.state.values`. */
	values?: Record<string, Record<string, unknown>>;
}

export interface AppLinkOptions {
	signingSecret: string;
	/** The app as created from its manifest: which events Slack sends it. */
	config: StandinAppConfig;
	/** Where the app listens for Slack, e.g. `http://127.0.0.1:3000/slack/events`. */
	eventsUrl: () => string | undefined;
	/** Set when Socket Mode is on: everything goes over the app's WebSocket instead. */
	socketMode?: {
		deliver(type: EnvelopeType, payload: Record<string, unknown>): Promise<AppReply>;
	};
	/** A stored file as Slack's file object shows it to the app. */
	publicFile: (file: StoredFile) => Record<string, unknown>;
	/** Creates a response_url on the stand-in for this request. */
	responseUrl: (target: {
		channel: string;
		user: string;
		ephemeralId?: string;
		messageTs?: string;
	}) => string;
}

export class AppLink {
	constructor(
		private readonly workspace: Workspace,
		private readonly options: AppLinkOptions,
	) {}

	/** Posts a signed body; `timestampSeconds` and `signature` are overridable to forge requests in tests. */
	async send(
		body: string,
		contentType: string,
		overrides: { timestampSeconds?: number; signature?: string | null } = {},
	): Promise<AppReply> {
		const { socketMode } = this.options;
		if (socketMode) {
			if (overrides.timestampSeconds !== undefined || overrides.signature !== undefined)
				throw new Error('Socket Mode envelopes carry no timestamp or signature to forge.');
			return socketMode.deliver(...envelopeOf(body, contentType));
		}
		const url = this.options.eventsUrl();
		if (!url) throw new Error('The stand-in does not know where the app listens yet.');
		const timestamp = overrides.timestampSeconds ?? Math.floor(Date.now() / 1000);
		const headers: Record<string, string> = {
			'content-type': contentType,
			'x-slack-request-timestamp': String(timestamp),
		};
		const signature =
			overrides.signature === undefined
				? slackSignature(this.options.signingSecret, timestamp, body)
				: overrides.signature;
		if (signature !== null) headers['x-slack-signature'] = signature;
		const response = await fetch(url, { method: 'POST', headers, body });
		return { status: response.status, body: await response.text() };
	}

	slashCommandBody(options: SlashCommandOptions): string {
		return new URLSearchParams({
			token: 'standin-verification-token',
			team_id: TEAM.id,
			team_domain: TEAM.domain,
			channel_id: options.channel,
			channel_name: this.workspace.channelName(options.channel),
			user_id: options.user,
			user_name: options.userName ?? options.user.toLowerCase(),
			command: options.command ?? '/gpu',
			text: options.text,
			api_app_id: BOT.appId,
			is_enterprise_install: 'false',
			response_url: this.options.responseUrl({ channel: options.channel, user: options.user }),
			trigger_id: this.workspace.issueTrigger(options.user),
		}).toString();
	}

	slashCommand(options: SlashCommandOptions): Promise<AppReply> {
		return this.send(this.slashCommandBody(options), 'application/x-www-form-urlencoded');
	}

	/** Wraps an Events API event the way Slack delivers it (and redelivers it: the same body). */
	eventBody(event: Record<string, unknown>): string {
		return JSON.stringify({
			token: 'standin-verification-token',
			team_id: TEAM.id,
			api_app_id: BOT.appId,
			event,
			type: 'event_callback',
			event_id: this.workspace.newId('Ev'),
			event_time: Math.floor(Date.now() / 1000),
			authorizations: [
				{ team_id: TEAM.id, user_id: BOT.userId, is_bot: true, is_enterprise_install: false },
			],
		});
	}

	/**
	 * Delivers an Events API event, as Slack does only when the app subscribes to it
	 * (https://docs.slack.dev/apis/events-api: "you'll only receive events you subscribe to").
	 */
	deliverEvent(event: Record<string, unknown> & { type: string }): Promise<AppReply> {
		const needed = subscriptionFor(event);
		if (!this.options.config.botEvents.has(needed))
			return Promise.resolve({ status: 0, body: '', notSubscribed: needed });
		return this.send(this.eventBody(event), 'application/json');
	}

	/**
	 * A workflow reached one of the app's steps: Slack runs only steps the manifest defines, and
	 * sends `function_executed` with the step's inputs and a per-run token
	 * (https://docs.slack.dev/reference/events/function_executed). Resolves with the run, which the
	 * app completes or fails later through functions.completeSuccess / completeError.
	 */
	async functionExecuted(
		callbackId: string,
		inputs: Record<string, unknown>,
	): Promise<{ execution: StepExecution; reply: AppReply }> {
		const definition = this.options.config.functions.get(callbackId);
		if (!definition) throw new Error(`The app's manifest defines no step "${callbackId}".`);
		const execution: StepExecution = {
			id: this.workspace.newId('Fx'),
			callbackId,
			inputs,
			token: `xwfp-${randomBytes(16).toString('hex')}`,
			state: 'running',
		};
		this.workspace.executions.set(execution.id, execution);
		const parameters = (which: StepDefinition['input_parameters']) =>
			Object.entries(which.properties).map(([name, parameter]) => ({
				name,
				type: parameter.type,
				title: parameter.title ?? name,
				is_required: which.required?.includes(name) ?? false,
			}));
		const reply = await this.deliverEvent({
			type: 'function_executed',
			function: {
				id: `Fn${callbackId.length}${BOT.appId}`,
				callback_id: callbackId,
				title: definition.title,
				description: definition.description ?? '',
				type: 'app',
				input_parameters: parameters(definition.input_parameters),
				output_parameters: parameters(definition.output_parameters),
				app_id: BOT.appId,
				date_created: 1_780_000_000,
				date_updated: 1_780_000_000,
				date_deleted: 0,
			},
			inputs,
			function_execution_id: execution.id,
			workflow_execution_id: this.workspace.newId('Wx'),
			event_ts: String(Date.now() / 1000),
			bot_access_token: execution.token,
		});
		return { execution, reply };
	}

	/** The person opened a new assistant thread (the stand-in has made its root message). */
	assistantThreadStarted(
		user: string,
		channel: string,
		threadTs: string,
		contextChannel: string,
	): Promise<AppReply> {
		const event = {
			type: 'assistant_thread_started',
			assistant_thread: {
				user_id: user,
				context: { channel_id: contextChannel, team_id: TEAM.id, enterprise_id: null },
				channel_id: channel,
				thread_ts: threadTs,
			},
			event_ts: String(Date.now() / 1000),
		};
		return this.deliverEvent(event);
	}

	/** The person opened the app's Home tab, or its Messages tab (where agent conversations live). */
	appHomeOpened(user: string, tab: 'home' | 'messages' = 'home'): Promise<AppReply> {
		const home = tab === 'home' ? this.workspace.homes.get(user) : undefined;
		const event = {
			type: 'app_home_opened',
			user,
			channel: this.workspace.directMessageOf(user),
			tab,
			event_ts: String(Date.now() / 1000),
			...(home ? { view: { ...home.view, id: home.id, hash: home.hash } } : {}),
		};
		return this.deliverEvent(event);
	}

	/**
	 * The person clicked Slack's stop button on a session in `processing`
	 * (https://docs.slack.dev/reference/events/agent_session_stopped): `streaming_message_ts` lists
	 * the streams Slack stopped itself.
	 */
	agentSessionStopped(
		user: string,
		channel: string,
		threadTs: string,
		streamingMessageTs: string[],
	): Promise<AppReply> {
		return this.deliverEvent({
			type: 'agent_session_stopped',
			user,
			channel,
			thread_ts: threadTs,
			streaming_message_ts: streamingMessageTs,
			event_ts: String(Date.now() / 1000),
		});
	}

	/** What every interactive payload carries (who, which team and app, a trigger id), sent form-encoded as `payload`. */
	private sendInteraction(
		type: string,
		user: string,
		fields: Record<string, unknown>,
	): Promise<AppReply> {
		const payload = {
			type,
			team: { id: TEAM.id, domain: TEAM.domain },
			user: { id: user, username: user.toLowerCase(), team_id: TEAM.id },
			api_app_id: BOT.appId,
			token: 'standin-verification-token',
			trigger_id: this.workspace.issueTrigger(user),
			...fields,
		};
		return this.send(
			new URLSearchParams({ payload: JSON.stringify(payload) }).toString(),
			'application/x-www-form-urlencoded',
		);
	}

	private static actionElement(click: {
		actionId: string;
		blockId?: string;
		value?: string;
		actionType?: string;
	}): Record<string, unknown> {
		return {
			type: click.actionType ?? 'button',
			action_id: click.actionId,
			block_id: click.blockId ?? 'block',
			...(click.value !== undefined ? { value: click.value } : {}),
			action_ts: String(Date.now() / 1000),
		};
	}

	/** A button on the person's Home tab: a block action from a view, with no channel or response_url. */
	clickInHome(click: {
		user: string;
		actionId: string;
		blockId?: string;
		value?: string;
	}): Promise<AppReply> {
		const home = this.workspace.homes.get(click.user);
		return this.sendInteraction('block_actions', click.user, {
			container: { type: 'view', view_id: home?.id ?? '' },
			view: { ...home?.view, id: home?.id, hash: home?.hash, team_id: TEAM.id, app_id: BOT.appId },
			actions: [AppLink.actionElement(click)],
		});
	}

	/** A global shortcut from the shortcuts menu: no channel, a trigger id for a modal. */
	globalShortcut(user: string, callbackId: string): Promise<AppReply> {
		return this.sendInteraction('shortcut', user, {
			action_ts: String(Date.now() / 1000),
			is_enterprise_install: false,
			callback_id: callbackId,
		});
	}

	/** A message shortcut from a message's "More actions" menu; the message carries its files, as in Slack. */
	messageShortcut(
		user: string,
		callbackId: string,
		message: StoredMessage,
		files: Record<string, unknown>[] = [],
	): Promise<AppReply> {
		return this.sendInteraction('message_action', user, {
			action_ts: String(Date.now() / 1000),
			channel: { id: message.channel, name: this.workspace.channelName(message.channel) },
			is_enterprise_install: false,
			callback_id: callbackId,
			message_ts: message.ts,
			message: {
				type: 'message',
				ts: message.ts,
				user: message.user,
				text: message.text,
				...(message.botId ? { bot_id: message.botId } : {}),
				...(message.threadTs ? { thread_ts: message.threadTs } : {}),
				...(files.length ? { files, upload: false } : {}),
			},
			response_url: this.options.responseUrl({ channel: message.channel, user }),
		});
	}

	click(click: ButtonClick): Promise<AppReply> {
		const ephemeral = click.ephemeralId
			? this.workspace.ephemerals.find((message) => message.id === click.ephemeralId)
			: undefined;
		const container = click.message
			? {
					type: 'message',
					message_ts: click.message.ts,
					channel_id: click.channel,
					is_ephemeral: false,
					...(click.message.threadTs ? { thread_ts: click.message.threadTs } : {}),
				}
			: {
					type: 'message',
					message_ts: ephemeral?.ts ?? '',
					channel_id: click.channel,
					is_ephemeral: true,
				};
		return this.sendInteraction('block_actions', click.user, {
			container,
			channel: { id: click.channel, name: this.workspace.channelName(click.channel) },
			...(click.message
				? {
						message: {
							type: 'message',
							ts: click.message.ts,
							user: click.message.user,
							bot_id: click.message.botId,
							text: click.message.text,
							blocks: click.message.blocks,
							...(click.message.threadTs ? { thread_ts: click.message.threadTs } : {}),
						},
					}
				: {}),
			response_url: this.options.responseUrl({
				channel: click.channel,
				user: click.user,
				ephemeralId: click.ephemeralId,
				messageTs: click.message?.ts,
			}),
			actions: [AppLink.actionElement(click)],
		});
	}

	submitView(submission: ViewSubmission): Promise<AppReply> {
		const open = this.workspace.views.get(submission.viewId);
		if (!open) throw new Error(`No open view ${submission.viewId}.`);
		const values = { ...submission.values };
		for (const [blockId, ids] of Object.entries(submission.files ?? {}))
			values[blockId] = this.fileInputState(open.view, blockId, ids);
		return this.sendInteraction('view_submission', submission.user, {
			view: {
				...open.view,
				id: open.id,
				hash: open.hash,
				team_id: TEAM.id,
				app_id: BOT.appId,
				state: { values },
			},
			response_urls: [],
		});
	}

	/**
	 * A file input's state on submit: `files`, the file objects attached (Bolt's `ViewStateValue`).
	 * Only what Slack's client lets a person attach: in a file input block of the view, at most its
	 * `max_files`, each within the element's 10 MB and of one of its `filetypes` (by extension).
	 */
	private fileInputState(
		view: Record<string, unknown>,
		blockId: string,
		ids: string[],
	): Record<string, unknown> {
		const blocks = Array.isArray(view.blocks) ? (view.blocks as Record<string, unknown>[]) : [];
		const element = blocks.find((block) => block.block_id === blockId)?.element as
			| { type?: unknown; action_id?: unknown; max_files?: unknown; filetypes?: unknown }
			| undefined;
		if (element?.type !== 'file_input')
			throw new Error(`Block ${blockId} of the view holds no file input.`);
		const maxFiles =
			typeof element.max_files === 'number' ? element.max_files : FILE_INPUT_DEFAULT_MAX_FILES;
		if (ids.length > maxFiles)
			throw new Error(`The file input of ${blockId} takes at most ${maxFiles} file(s).`);
		const files = ids.map((id) => {
			const file = this.workspace.files.get(id);
			if (!file) throw new Error(`No file ${id}.`);
			if (file.size > FILE_INPUT_MAX_BYTES)
				throw new Error(`${file.name} is over the file input's 10 MB.`);
			// "An array of valid file extensions that will be accepted for this element."
			if (Array.isArray(element.filetypes) && !element.filetypes.includes(file.filetype))
				throw new Error(`The file input of ${blockId} does not accept .${file.filetype} files.`);
			return this.options.publicFile(file);
		});
		return { [String(element.action_id)]: { type: 'file_input', files } };
	}

	/**
	 * A choice in a modal's select that dispatches actions: a block action from the view, with no
	 * channel or response_url (https://docs.slack.dev/reference/interaction-payloads/block_actions-payload).
	 */
	selectInView(selection: ViewSelection): Promise<AppReply> {
		const open = this.workspace.views.get(selection.viewId);
		if (!open) throw new Error(`No open view ${selection.viewId}.`);
		const selected = {
			value: selection.option.value,
			text: { type: 'plain_text', text: selection.option.text },
		};
		return this.sendInteraction('block_actions', selection.user, {
			container: { type: 'view', view_id: open.id },
			view: {
				...open.view,
				id: open.id,
				hash: open.hash,
				team_id: TEAM.id,
				app_id: BOT.appId,
				state: { values: selection.values ?? {} },
			},
			actions: [
				{
					type: 'static_select',
					action_id: selection.actionId,
					block_id: selection.blockId,
					selected_option: selected,
					action_ts: String(Date.now() / 1000),
				},
			],
		});
	}

	/** A person's message in a channel or thread, as the Events API delivers it (with its files). */
	messageEvent(message: StoredMessage, files: Record<string, unknown>[] = []): Promise<AppReply> {
		return this.deliverEvent(messageEventOf(message, files));
	}

	/** The body of that delivery (one event_id; Slack's retries of it send the same body). */
	messageEventBody(message: StoredMessage): string {
		return this.eventBody(messageEventOf(message));
	}
}

function messageEventOf(
	message: StoredMessage,
	files: Record<string, unknown>[] = [],
): Record<string, unknown> & { type: string } {
	return {
		type: 'message',
		// A message sharing files (https://docs.slack.dev/reference/events/message/file_share).
		...(files.length ? { subtype: 'file_share', files, upload: true } : {}),
		channel: message.channel,
		user: message.user,
		text: message.text,
		ts: message.ts,
		...(message.threadTs ? { thread_ts: message.threadTs } : {}),
		// Slack's ids say the kind: D… is a direct message, G… a private channel.
		channel_type: message.channel.startsWith('D')
			? 'im'
			: message.channel.startsWith('G')
				? 'group'
				: 'channel',
		event_ts: message.ts,
		team: TEAM.id,
	};
}

/**
 * The Socket Mode envelope for what would be POSTed to a Request URL: an Events API body as
 * `events_api`, a slash command's form fields as `slash_commands`, an interactive `payload` as
 * `interactive` (https://docs.slack.dev/apis/events-api/using-socket-mode).
 */
function envelopeOf(
	body: string,
	contentType: string,
): [type: EnvelopeType, payload: Record<string, unknown>] {
	if (contentType === 'application/json') return ['events_api', jsonObject(body)];
	const form = new URLSearchParams(body);
	const interactive = form.get('payload');
	if (interactive !== null) return ['interactive', jsonObject(interactive)];
	return ['slash_commands', Object.fromEntries(form)];
}

function jsonObject(text: string): Record<string, unknown> {
	const parsed: unknown = JSON.parse(text);
	if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
		throw new Error('A Slack payload must be a JSON object.');
	return { ...parsed };
}
