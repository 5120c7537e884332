/**
 * The limits Slack documents for what an app sends, in one table, and the checks that apply them.
 * Each rule names the page that documents it. A payload over a limit is refused the way Slack
 * refuses it: `{ ok: false, error }` with the JSON pointer of each problem in
 * `response_metadata.messages` (`[ERROR] must be less than 3001 characters [json-pointer:/blocks/0/text/text]`).
 */

const BLOCKS = 'https://docs.slack.dev/reference/block-kit/blocks';
const ELEMENTS = 'https://docs.slack.dev/reference/block-kit/block-elements';
const OBJECTS = 'https://docs.slack.dev/reference/block-kit/composition-objects';
const METHODS = 'https://docs.slack.dev/reference/methods';
const MODAL = 'https://docs.slack.dev/reference/views/modal-views';
const HOME = 'https://docs.slack.dev/reference/views/home-tab-views';

/** A length (characters) or a count (items) a field must stay within. */
export interface FieldRule {
	/** Dot path inside the object; `[]` applies the rule to each item of an array. */
	field: string;
	kind: 'characters' | 'items' | 'number';
	min?: number;
	max: number;
	doc: string;
}

const VIEW_DOCS = { modal: MODAL, home: HOME } as const;

/** Rules of every Block Kit object the app builds, by `type` (or by the role of an untyped object). */
export const BLOCK_KIT_RULES: Record<string, FieldRule[]> = {
	// Every block: https://docs.slack.dev/reference/block-kit/blocks (block_id on each block's page).
	section: [
		{ field: 'text.text', kind: 'characters', max: 3000, doc: `${BLOCKS}/section-block` },
		{ field: 'fields', kind: 'items', max: 10, doc: `${BLOCKS}/section-block` },
		{ field: 'fields[].text', kind: 'characters', max: 2000, doc: `${BLOCKS}/section-block` },
	],
	context: [{ field: 'elements', kind: 'items', min: 1, max: 10, doc: `${BLOCKS}/context-block` }],
	header: [{ field: 'text.text', kind: 'characters', max: 150, doc: `${BLOCKS}/header-block` }],
	actions: [{ field: 'elements', kind: 'items', min: 1, max: 25, doc: `${BLOCKS}/actions-block` }],
	markdown: [
		{ field: 'text', kind: 'characters', min: 1, max: 12_000, doc: `${BLOCKS}/markdown-block` },
	],
	input: [
		{ field: 'label.text', kind: 'characters', max: 2000, doc: `${BLOCKS}/input-block` },
		{ field: 'hint.text', kind: 'characters', max: 2000, doc: `${BLOCKS}/input-block` },
	],
	context_actions: [
		{ field: 'elements', kind: 'items', min: 1, max: 5, doc: `${BLOCKS}/context-actions-block` },
	],
	divider: [],
	button: [
		{ field: 'text.text', kind: 'characters', max: 75, doc: `${ELEMENTS}/button-element` },
		{ field: 'value', kind: 'characters', max: 2000, doc: `${ELEMENTS}/button-element` },
		{ field: 'url', kind: 'characters', max: 3000, doc: `${ELEMENTS}/button-element` },
		{
			field: 'accessibility_label',
			kind: 'characters',
			max: 75,
			doc: `${ELEMENTS}/button-element`,
		},
	],
	feedback_buttons: [],
	/** `positive_button` / `negative_button` of a feedback_buttons element. */
	feedback_button: [
		{
			field: 'text.text',
			kind: 'characters',
			max: 75,
			doc: `${ELEMENTS}/feedback-buttons-element`,
		},
		{ field: 'value', kind: 'characters', max: 2000, doc: `${ELEMENTS}/feedback-buttons-element` },
		{
			field: 'accessibility_label',
			kind: 'characters',
			max: 75,
			doc: `${ELEMENTS}/feedback-buttons-element`,
		},
	],
	plain_text_input: [
		{
			field: 'placeholder.text',
			kind: 'characters',
			max: 150,
			doc: `${ELEMENTS}/plain-text-input-element`,
		},
		{
			field: 'min_length',
			kind: 'number',
			min: 0,
			max: 3000,
			doc: `${ELEMENTS}/plain-text-input-element`,
		},
		{
			field: 'max_length',
			kind: 'number',
			min: 1,
			max: 3000,
			doc: `${ELEMENTS}/plain-text-input-element`,
		},
	],
	static_select: [
		{ field: 'options', kind: 'items', max: 100, doc: `${ELEMENTS}/select-menu-element` },
		{ field: 'option_groups', kind: 'items', max: 100, doc: `${ELEMENTS}/select-menu-element` },
		{
			field: 'placeholder.text',
			kind: 'characters',
			max: 150,
			doc: `${ELEMENTS}/select-menu-element`,
		},
	],
	checkboxes: [
		{ field: 'options', kind: 'items', min: 1, max: 10, doc: `${ELEMENTS}/checkboxes-element` },
	],
	number_input: [
		{
			field: 'placeholder.text',
			kind: 'characters',
			max: 150,
			doc: `${ELEMENTS}/number-input-element`,
		},
	],
	url_text_input: [
		{
			field: 'placeholder.text',
			kind: 'characters',
			max: 150,
			doc: `${ELEMENTS}/url-input-element`,
		},
	],
	file_input: [
		// "max_files: Minimum of 1, maximum of 10."
		{ field: 'max_files', kind: 'number', min: 1, max: 10, doc: `${ELEMENTS}/file-input-element` },
	],
	conversations_select: [
		{
			field: 'placeholder.text',
			kind: 'characters',
			max: 150,
			doc: `${ELEMENTS}/select-menu-element`,
		},
	],
	option: [
		{ field: 'text.text', kind: 'characters', max: 75, doc: `${OBJECTS}/option-object` },
		{ field: 'value', kind: 'characters', max: 150, doc: `${OBJECTS}/option-object` },
		{ field: 'description.text', kind: 'characters', max: 75, doc: `${OBJECTS}/option-object` },
	],
	confirm: [
		{
			field: 'title.text',
			kind: 'characters',
			max: 100,
			doc: `${OBJECTS}/confirmation-dialog-object`,
		},
		{
			field: 'text.text',
			kind: 'characters',
			max: 300,
			doc: `${OBJECTS}/confirmation-dialog-object`,
		},
		{
			field: 'confirm.text',
			kind: 'characters',
			max: 30,
			doc: `${OBJECTS}/confirmation-dialog-object`,
		},
		{
			field: 'deny.text',
			kind: 'characters',
			max: 30,
			doc: `${OBJECTS}/confirmation-dialog-object`,
		},
	],
	plain_text: [
		{ field: 'text', kind: 'characters', min: 1, max: 3000, doc: `${OBJECTS}/text-object` },
	],
	mrkdwn: [{ field: 'text', kind: 'characters', min: 1, max: 3000, doc: `${OBJECTS}/text-object` }],
};

/** The elements an input block holds (https://docs.slack.dev/reference/block-kit/blocks/input-block). */
const INPUT_ELEMENTS = new Set([
	'checkboxes',
	'datepicker',
	'datetimepicker',
	'email_text_input',
	'file_input',
	'multi_static_select',
	'multi_external_select',
	'multi_users_select',
	'multi_conversations_select',
	'multi_channels_select',
	'number_input',
	'plain_text_input',
	'radio_buttons',
	'rich_text_input',
	'static_select',
	'external_select',
	'users_select',
	'conversations_select',
	'channels_select',
	'timepicker',
	'url_text_input',
]);

/** A file extension as `filetypes` lists them. */
const FILE_EXTENSION = /^[a-z0-9]{1,16}$/i;

/** Rules every block and interactive element share. */
export const ID_RULES = {
	block_id: { field: 'block_id', kind: 'characters', max: 255, doc: BLOCKS },
	action_id: { field: 'action_id', kind: 'characters', max: 255, doc: ELEMENTS },
} as const satisfies Record<string, FieldRule>;

/** The blocks each surface takes (https://docs.slack.dev/reference/block-kit/blocks). */
export const BLOCKS_PER_MESSAGE = 50;
export const BLOCKS_PER_VIEW = 100;
/** "The cumulative limit for all markdown blocks in a single payload is 12,000 characters." */
export const MARKDOWN_PER_PAYLOAD = 12_000;
const MARKDOWN_DOC = `${BLOCKS}/markdown-block`;

/** Surfaces of blocks: which blocks they take. */
const MESSAGE_BLOCKS = new Set([
	'section',
	'context',
	'header',
	'actions',
	'markdown',
	'divider',
	'context_actions',
	'image',
	'rich_text',
	'file',
	'video',
]);
const VIEW_BLOCKS = new Set([
	'section',
	'context',
	'header',
	'actions',
	'divider',
	'input',
	'image',
]);

/** Fields of views (https://docs.slack.dev/reference/views/modal-views, .../home-tab-views). */
export const VIEW_RULES: Record<'modal' | 'home', FieldRule[]> = {
	modal: [
		{ field: 'title.text', kind: 'characters', max: 24, doc: MODAL },
		{ field: 'close.text', kind: 'characters', max: 24, doc: MODAL },
		{ field: 'submit.text', kind: 'characters', max: 24, doc: MODAL },
		{ field: 'private_metadata', kind: 'characters', max: 3000, doc: MODAL },
		{ field: 'callback_id', kind: 'characters', max: 255, doc: MODAL },
		{ field: 'blocks', kind: 'items', max: BLOCKS_PER_VIEW, doc: MODAL },
	],
	home: [
		{ field: 'private_metadata', kind: 'characters', max: 3000, doc: HOME },
		{ field: 'callback_id', kind: 'characters', max: 255, doc: HOME },
		{ field: 'blocks', kind: 'items', max: BLOCKS_PER_VIEW, doc: HOME },
	],
};

/** views.open/update/push/publish: "view_too_large: the provided view is greater than 250kb". */
export const VIEW_MAX_BYTES = 250 * 1024;

/** Arguments of the Web API methods the app calls, each with the error Slack answers. */
export interface ArgumentRule {
	methods: string[];
	/** The argument (form field). */
	argument: string;
	max: number;
	error: string;
	doc: string;
	/** Over the limit Slack keeps the first `max` characters and posts anyway, with a warning. */
	truncates?: string;
}

export const ARGUMENT_RULES: ArgumentRule[] = [
	{
		methods: ['chat.postMessage'],
		argument: 'text',
		max: 40_000,
		error: 'msg_too_long',
		truncates: 'message_truncated',
		doc: `${METHODS}/chat.postMessage`,
	},
	{
		methods: ['chat.postEphemeral'],
		argument: 'text',
		max: 40_000,
		error: 'msg_too_long',
		doc: `${METHODS}/chat.postEphemeral`,
	},
	{
		// "msg_too_long: Message text is too long. The `text` field cannot exceed 4,000 characters."
		methods: ['chat.update'],
		argument: 'text',
		max: 4000,
		error: 'msg_too_long',
		doc: `${METHODS}/chat.update`,
	},
	...(['chat.startStream', 'chat.appendStream', 'chat.stopStream'] as const).map((method) => ({
		methods: [method],
		argument: 'markdown_text',
		max: 12_000,
		error: 'invalid_arguments',
		doc: `${METHODS}/${method}`,
	})),
	{
		// The SDK's `filesUploadV2` sends `alt_text`; the page documents `alt_txt`: both are held to it.
		methods: ['files.getUploadURLExternal'],
		argument: 'alt_txt',
		max: 1000,
		error: 'alt_txt_too_large',
		doc: `${METHODS}/files.getUploadURLExternal`,
	},
	{
		methods: ['files.getUploadURLExternal'],
		argument: 'alt_text',
		max: 1000,
		error: 'alt_txt_too_large',
		doc: `${METHODS}/files.getUploadURLExternal`,
	},
];

/** Where blocks travel, and what Slack answers when they break a rule. */
export type Surface =
	/** chat.postMessage, postEphemeral, update, response_url: `invalid_blocks`. */
	| 'message'
	/** chat.stopStream's blocks: too many is `msg_blocks_too_many`. */
	| 'stream'
	/** A view's blocks: views.* answer `invalid_arguments`. */
	| 'view';

export interface Problem {
	/** Slack's error code for the whole call. */
	error: string;
	/** `must be less than 3001 characters [json-pointer:/blocks/0/text/text]` */
	message: string;
	doc: string;
}

export class LimitCheck {
	readonly problems: Problem[] = [];
	private markdownTotal = 0;

	constructor(private readonly error: string) {}

	get ok(): boolean {
		return this.problems.length === 0;
	}

	add(message: string, pointer: string, doc: string, error = this.error): void {
		this.problems.push({ error, message: `${message} [json-pointer:${pointer}]`, doc });
	}

	/** Applies one rule to the value at `field` inside `object` (at `pointer`). */
	apply(object: Record<string, unknown>, rule: FieldRule, pointer: string): void {
		const [head, ...rest] = rule.field.split('.');
		if (head.endsWith('[]')) {
			const list = object[head.slice(0, -2)];
			if (!Array.isArray(list)) return;
			list.forEach((item, index) => {
				if (item && typeof item === 'object')
					this.apply(
						item as Record<string, unknown>,
						{ ...rule, field: rest.join('.') },
						`${pointer}/${head.slice(0, -2)}/${index}`,
					);
			});
			return;
		}
		const value = object[head];
		if (rest.length > 0) {
			if (value && typeof value === 'object' && !Array.isArray(value))
				this.apply(
					value as Record<string, unknown>,
					{ ...rule, field: rest.join('.') },
					`${pointer}/${head}`,
				);
			return;
		}
		const at = `${pointer}/${head}`;
		if (value === undefined || value === null) return;
		if (rule.kind === 'characters') {
			if (typeof value !== 'string') return this.add('must be a string', at, rule.doc);
			if (value.length > rule.max)
				this.add(`must be less than ${rule.max + 1} characters`, at, rule.doc);
			if (rule.min !== undefined && value.length < rule.min)
				this.add(`must be more than ${rule.min - 1} characters`, at, rule.doc);
		} else if (rule.kind === 'items') {
			if (!Array.isArray(value)) return this.add('must be an array', at, rule.doc);
			if (value.length > rule.max) this.add(`no more than ${rule.max} items allowed`, at, rule.doc);
			if (rule.min !== undefined && value.length < rule.min)
				this.add(`must provide at least ${rule.min} items`, at, rule.doc);
		} else {
			if (typeof value !== 'number' || value > rule.max || value < (rule.min ?? -Infinity))
				this.add(`must be a number from ${rule.min ?? 0} to ${rule.max}`, at, rule.doc);
		}
	}

	/** A list of blocks as a surface takes them. */
	blocks(blocks: unknown, pointer: string, surface: Surface): void {
		if (!Array.isArray(blocks)) return this.add('must be an array', pointer, BLOCKS);
		const perSurface = surface === 'view' ? BLOCKS_PER_VIEW : BLOCKS_PER_MESSAGE;
		if (blocks.length > perSurface)
			this.add(
				`no more than ${perSurface} items allowed`,
				pointer,
				BLOCKS,
				surface === 'stream' ? 'msg_blocks_too_many' : this.error,
			);
		const allowed = surface === 'view' ? VIEW_BLOCKS : MESSAGE_BLOCKS;
		blocks.forEach((block, index) => {
			const at = `${pointer}/${index}`;
			const record = asRecord(block);
			if (!record || typeof record.type !== 'string' || !allowed.has(record.type))
				return this.add('failed to match all allowed schemas', at, BLOCKS);
			this.apply(record, ID_RULES.block_id, at);
			if (record.type === 'markdown' && typeof record.text === 'string')
				this.markdownTotal += record.text.length;
			this.object(record, record.type, at);
		});
		if (this.markdownTotal > MARKDOWN_PER_PAYLOAD)
			this.add(
				`markdown blocks must total less than ${MARKDOWN_PER_PAYLOAD + 1} characters`,
				pointer,
				MARKDOWN_DOC,
				'msg_blocks_too_long',
			);
	}

	/** What Slack requires of an object beyond lengths: required fields, initial choices among the options. */
	private required(record: Record<string, unknown>, kind: string, pointer: string): void {
		if (kind === 'input') {
			const element = asRecord(record.element);
			if (!asRecord(record.label))
				this.add('must provide an object', `${pointer}/label`, `${BLOCKS}/input-block`);
			if (!element || typeof element.type !== 'string' || !INPUT_ELEMENTS.has(element.type))
				this.add(
					'failed to match all allowed schemas',
					`${pointer}/element`,
					`${BLOCKS}/input-block`,
				);
		}
		// "filetypes: An array of valid file extensions": `wav`, not `audio/wav`, `audio/*` or `.wav`.
		if (kind === 'file_input' && record.filetypes !== undefined) {
			const doc = `${ELEMENTS}/file-input-element`;
			if (!Array.isArray(record.filetypes))
				this.add('must be an array', `${pointer}/filetypes`, doc);
			else
				record.filetypes.forEach((filetype, index) => {
					if (typeof filetype !== 'string' || !FILE_EXTENSION.test(filetype))
						this.add('must be a file extension', `${pointer}/filetypes/${index}`, doc);
				});
		}
		// "The file input element must be used inside the input block."
		if (kind === 'actions' && Array.isArray(record.elements))
			record.elements.forEach((element, index) => {
				if (asRecord(element)?.type === 'file_input')
					this.add(
						'failed to match all allowed schemas',
						`${pointer}/elements/${index}`,
						`${ELEMENTS}/file-input-element`,
					);
			});
		// "is_decimal_allowed: Decimal numbers are allowed if is_decimal_allowed= true" (required).
		if (kind === 'number_input' && typeof record.is_decimal_allowed !== 'boolean')
			this.add(
				'must provide a boolean',
				`${pointer}/is_decimal_allowed`,
				`${ELEMENTS}/number-input-element`,
			);
		// "initial_option: A single option that exactly matches one of the options" (and likewise
		// initial_options of checkboxes).
		const values = Array.isArray(record.options)
			? record.options.map((option) => JSON.stringify(option))
			: [];
		const initial =
			kind === 'static_select' && record.initial_option !== undefined
				? [record.initial_option]
				: kind === 'checkboxes' && Array.isArray(record.initial_options)
					? record.initial_options
					: [];
		const doc =
			kind === 'static_select'
				? `${ELEMENTS}/select-menu-element`
				: `${ELEMENTS}/checkboxes-element`;
		initial.forEach((option, index) => {
			if (!values.includes(JSON.stringify(option)))
				this.add(
					'must match one of the options',
					kind === 'static_select'
						? `${pointer}/initial_option`
						: `${pointer}/initial_options/${index}`,
					doc,
				);
		});
	}

	/** An object of a known kind, then every object nested in it. */
	private object(record: Record<string, unknown>, kind: string, pointer: string): void {
		for (const rule of BLOCK_KIT_RULES[kind] ?? []) this.apply(record, rule, pointer);
		this.required(record, kind, pointer);
		if (kind !== 'option' && 'action_id' in record) this.apply(record, ID_RULES.action_id, pointer);
		for (const [key, value] of Object.entries(record)) {
			const at = `${pointer}/${key}`;
			if (Array.isArray(value)) {
				value.forEach((item, index) => this.nested(key, item, `${at}/${index}`));
			} else {
				this.nested(key, value, at);
			}
		}
	}

	/** A nested object's kind: its `type`, else what its key makes it (an option, a confirm dialog...). */
	private nested(key: string, value: unknown, pointer: string): void {
		const record = asRecord(value);
		if (!record) return;
		const byKey: Record<string, string> = {
			options: 'option',
			initial_option: 'option',
			initial_options: 'option',
			confirm: 'confirm',
			positive_button: 'feedback_button',
			negative_button: 'feedback_button',
		};
		const kind = byKey[key] ?? (typeof record.type === 'string' ? record.type : undefined);
		if (kind) this.object(record, kind, pointer);
	}

	/** A modal or Home view as views.open/update/push/publish take it. */
	view(view: unknown, pointer: string, type: 'modal' | 'home'): void {
		const record = asRecord(view);
		if (!record || record.type !== type)
			return this.add('failed to match all allowed schemas', pointer, VIEW_DOCS[type]);
		for (const rule of VIEW_RULES[type]) this.apply(record, rule, pointer);
		if (type === 'modal' && !asRecord(record.title))
			this.add('must provide an object', `${pointer}/title`, MODAL);
		this.blocks(record.blocks, `${pointer}/blocks`, 'view');
		// "The file input element must be used inside the input block" and gives its files "when the
		// parent modal is submitted": a Home tab has no submission, so the stand-in refuses it there.
		if (type === 'home')
			(Array.isArray(record.blocks) ? record.blocks : []).forEach((block, index) => {
				if (asRecord(asRecord(block)?.element)?.type === 'file_input')
					this.add(
						'file_input is only available in modals',
						`${pointer}/blocks/${index}/element`,
						`${ELEMENTS}/file-input-element`,
					);
			});
		// "submit is required when an input block is within the blocks array."
		const blocks = Array.isArray(record.blocks) ? record.blocks : [];
		if (
			type === 'modal' &&
			!record.submit &&
			blocks.some((block) => asRecord(block)?.type === 'input')
		)
			this.add('must provide a submit button with input blocks', `${pointer}/submit`, MODAL);
		if (Buffer.byteLength(JSON.stringify(view)) > VIEW_MAX_BYTES)
			this.add(
				`must be less than ${VIEW_MAX_BYTES + 1} bytes`,
				pointer,
				`${METHODS}/views.open`,
				'view_too_large',
			);
	}

	/** The argument rules of a method (the ones that refuse; truncation is `truncated`). */
	arguments(method: string, params: Record<string, string>): void {
		for (const rule of ARGUMENT_RULES) {
			if (!rule.methods.includes(method) || rule.truncates) continue;
			const value = params[rule.argument];
			if (value !== undefined && value.length > rule.max)
				this.add(
					`must be less than ${rule.max + 1} characters`,
					`/${rule.argument}`,
					rule.doc,
					rule.error,
				);
		}
	}

	/** The first problem's error, and every problem as Slack lists them. */
	reply(): { error: string; errors: string[]; response_metadata: { messages: string[] } } {
		return {
			error: this.problems[0]?.error ?? this.error,
			errors: this.problems.map((problem) => problem.message),
			response_metadata: { messages: this.problems.map((problem) => `[ERROR] ${problem.message}`) },
		};
	}
}

/** An argument over a limit that Slack cuts rather than refuses: the kept text and the warning. */
export function truncated(
	method: string,
	params: Record<string, string>,
): { argument: string; kept: string; warning: string; message: string } | undefined {
	for (const rule of ARGUMENT_RULES) {
		if (!rule.methods.includes(method) || !rule.truncates) continue;
		const value = params[rule.argument];
		if (value !== undefined && value.length > rule.max)
			return {
				argument: rule.argument,
				kept: value.slice(0, rule.max),
				warning: rule.truncates,
				message: `[WARN] Your message was truncated but still posted. The \`${rule.argument}\` field accepts up to ${rule.max.toLocaleString('en-US')} characters.`,
			};
	}
	return undefined;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
	return value && typeof value === 'object' && !Array.isArray(value)
		? (value as Record<string, unknown>)
		: undefined;
}

/**
 * What Slack answers a response_url (or incoming webhook) post whose blocks break a limit: HTTP 400
 * with the error as the body (https://docs.slack.dev/interactivity/handling-user-interaction).
 */
export function responseUrlRefusal(body: Record<string, unknown>): string | undefined {
	if (body.blocks === undefined) return undefined;
	const check = new LimitCheck('invalid_blocks');
	check.blocks(body.blocks, '/blocks', 'message');
	return check.ok ? undefined : check.reply().error;
}

/** Why Slack would not show a view the app answered a submission with (`response_action: update`). */
export function viewRefusal(view: unknown): string | undefined {
	const check = new LimitCheck('invalid_arguments');
	check.view(view, '/view', 'modal');
	return check.ok ? undefined : check.reply().errors.join('; ');
}
