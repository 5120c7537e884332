import { createApp } from '../../slack-standin/app-config';
import {
	ARGUMENT_RULES,
	BLOCK_KIT_RULES,
	BLOCKS_PER_MESSAGE,
	BLOCKS_PER_VIEW,
	ID_RULES,
	MARKDOWN_PER_PAYLOAD,
	VIEW_MAX_BYTES,
	VIEW_RULES,
	type FieldRule,
} from '../../slack-standin/limits';
import { WebApi } from '../../slack-standin/web-api';
import { DEFAULT_CHANNEL, LOCAL_USER, Workspace } from '../../slack-standin/workspace';

/**
 * Every limit of the stand-in, one by one: a payload exactly at the limit is accepted, one
 * character (or item) over is refused with Slack's error code. The payloads are built from the
 * rule table itself, so a rule added to the table is tested here too.
 */

const TOKEN = 'xoxb-limits-test';
type Json = Record<string, unknown>;

const plain = (text = 'x'): Json => ({ type: 'plain_text', text });
const mrkdwn = (text = 'x'): Json => ({ type: 'mrkdwn', text });
const button = (): Json => ({ type: 'button', action_id: 'a', text: plain('Go'), value: 'v' });
const option = (): Json => ({ text: plain('One'), value: 'one' });
const feedbackButton = (): Json => ({ text: plain('Yes'), value: 'good' });
const feedbackButtons = (): Json => ({
	type: 'feedback_buttons',
	action_id: 'f',
	positive_button: feedbackButton(),
	negative_button: feedbackButton(),
});

/** A minimal valid object of each kind the rules name. */
const VALID: Record<string, () => Json> = {
	section: () => ({ type: 'section', text: mrkdwn() }),
	context: () => ({ type: 'context', elements: [mrkdwn()] }),
	header: () => ({ type: 'header', text: plain() }),
	actions: () => ({ type: 'actions', elements: [button()] }),
	markdown: () => ({ type: 'markdown', text: 'x' }),
	input: () => ({
		type: 'input',
		block_id: 'b',
		label: plain('Label'),
		element: { type: 'plain_text_input', action_id: 'v' },
	}),
	context_actions: () => ({ type: 'context_actions', elements: [feedbackButtons()] }),
	divider: () => ({ type: 'divider' }),
	button,
	feedback_buttons: feedbackButtons,
	feedback_button: feedbackButton,
	plain_text_input: () => ({ type: 'plain_text_input', action_id: 'v' }),
	static_select: () => ({ type: 'static_select', action_id: 's', options: [option()] }),
	checkboxes: () => ({ type: 'checkboxes', action_id: 'x', options: [option()] }),
	number_input: () => ({ type: 'number_input', action_id: 'n', is_decimal_allowed: false }),
	url_text_input: () => ({ type: 'url_text_input', action_id: 'u' }),
	file_input: () => ({ type: 'file_input', action_id: 'f', max_files: 1 }),
	conversations_select: () => ({ type: 'conversations_select', action_id: 'c' }),
	option,
	confirm: () => ({
		title: plain('Sure?'),
		text: plain('Really'),
		confirm: plain('Yes'),
		deny: plain('No'),
	}),
	plain_text: () => plain(),
	mrkdwn: () => mrkdwn(),
};

/** Items that fill an array field. */
const ITEM: Record<string, () => unknown> = {
	fields: mrkdwn,
	elements: mrkdwn,
	options: option,
	option_groups: () => ({ label: plain('Group'), options: [option()] }),
	blocks: () => ({ type: 'divider' }),
};
const ITEM_OF: Record<string, () => unknown> = {
	'actions.elements': button,
	'context_actions.elements': feedbackButtons,
};

/** A call that carries an object of this kind where Slack checks it. */
function carry(kind: string, object: Json): { method: string; params: Record<string, string> } {
	const message = (blocks: Json[]) => ({
		method: 'chat.postMessage',
		params: { channel: DEFAULT_CHANNEL.id, text: 'fallback', blocks: JSON.stringify(blocks) },
	});
	const modal = (blocks: Json[]) => ({
		method: 'views.open',
		params: {
			view: JSON.stringify({ type: 'modal', title: plain('T'), submit: plain('Go'), blocks }),
		},
	});
	switch (kind) {
		case 'input':
			return modal([object]);
		case 'plain_text_input':
		case 'checkboxes':
		case 'number_input':
		case 'url_text_input':
		case 'file_input':
			return modal([{ ...VALID.input(), element: object }]);
		case 'button':
		case 'static_select':
		case 'conversations_select':
			return message([{ type: 'actions', elements: [object] }]);
		case 'option':
			return message([
				{ type: 'actions', elements: [{ ...VALID.static_select(), options: [object] }] },
			]);
		case 'confirm':
			return message([{ type: 'actions', elements: [{ ...button(), confirm: object }] }]);
		case 'feedback_buttons':
			return message([{ type: 'context_actions', elements: [object] }]);
		case 'feedback_button':
			return message([
				{ type: 'context_actions', elements: [{ ...feedbackButtons(), positive_button: object }] },
			]);
		case 'plain_text':
			return message([{ type: 'section', text: object }]);
		case 'mrkdwn':
			return message([{ type: 'context', elements: [object] }]);
		default:
			return message([object]);
	}
}

/** The object with `rule.field` set to a value of size `size`. */
function sized(kind: string, rule: FieldRule, size: number): Json {
	const object = VALID[kind]();
	const path = rule.field.replace('[]', '').split('.');
	let holder: Json = object;
	for (const key of path.slice(0, -1)) {
		if (rule.field.startsWith(`${key}[]`)) holder[key] ??= [ITEM[key]()];
		const next = holder[key];
		if (Array.isArray(next)) {
			holder = next[0] as Json;
		} else {
			holder[key] ??=
				key.endsWith('placeholder') || key === 'description' || key === 'hint' ? plain() : {};
			holder = holder[key] as Json;
		}
	}
	const last = path[path.length - 1];
	if (rule.kind === 'characters') holder[last] = 'x'.repeat(size);
	else if (rule.kind === 'number') holder[last] = size;
	else {
		const make = ITEM_OF[`${kind}.${last}`] ?? ITEM[last];
		holder[last] = Array.from({ length: size }, make);
	}
	return object;
}

function api(): { api: WebApi; workspace: Workspace } {
	const workspace = new Workspace();
	return {
		workspace,
		api: new WebApi(workspace, {
			botToken: TOKEN,
			config: createApp(),
			nativeStreaming: true,
			baseUrl: () => 'http://127.0.0.1:9',
		}),
	};
}

function call(method: string, params: Record<string, string>): Json {
	const { api: webApi, workspace } = api();
	const withTrigger = method.startsWith('views.open')
		? { ...params, trigger_id: workspace.issueTrigger(LOCAL_USER.id) }
		: params;
	return webApi.handle(method, `Bearer ${TOKEN}`, withTrigger).body;
}

const blockKitCases = Object.entries(BLOCK_KIT_RULES).flatMap(([kind, rules]) =>
	rules.map((rule) => [kind, rule.field, rule] as const),
);

describe('the stand-in holds every Block Kit object to the limits Slack documents', () => {
	it.each(blockKitCases)('%s %s: accepted at the limit, refused one over', (kind, _field, rule) => {
		const atLimit = carry(kind, sized(kind, rule, rule.max));
		const over = carry(kind, sized(kind, rule, rule.max + 1));
		const expected = atLimit.method === 'views.open' ? 'invalid_arguments' : 'invalid_blocks';
		expect(call(atLimit.method, atLimit.params)).toMatchObject({ ok: true });
		const refused = call(over.method, over.params);
		expect(refused).toMatchObject({ ok: false, error: expected });
		expect(JSON.stringify(refused)).toContain('[json-pointer:/');
		expect(rule.doc).toMatch(/^https:\/\/docs\.slack\.dev\//);
	});

	it.each(blockKitCases.filter(([, , rule]) => rule.min !== undefined))(
		'%s %s: refused under its minimum',
		(kind, _field, rule) => {
			const under = carry(kind, sized(kind, rule, (rule.min ?? 0) - 1));
			expect(call(under.method, under.params)).toMatchObject({ ok: false });
		},
	);

	it.each(Object.values(ID_RULES))('$field: 255 characters at most', (rule) => {
		const block = (id: string) =>
			rule.field === 'block_id'
				? { ...VALID.section(), block_id: id }
				: { type: 'actions', elements: [{ ...button(), action_id: id }] };
		const post = (id: string) =>
			call('chat.postMessage', {
				channel: DEFAULT_CHANNEL.id,
				blocks: JSON.stringify([block(id)]),
			});
		expect(post('i'.repeat(rule.max))).toMatchObject({ ok: true });
		expect(post('i'.repeat(rule.max + 1))).toMatchObject({ ok: false, error: 'invalid_blocks' });
	});

	it(`a message takes ${BLOCKS_PER_MESSAGE} blocks, a stream's end ${BLOCKS_PER_MESSAGE}`, () => {
		const blocks = (n: number) => JSON.stringify(Array.from({ length: n }, VALID.divider));
		const post = (n: number) =>
			call('chat.postMessage', { channel: DEFAULT_CHANNEL.id, blocks: blocks(n) });
		expect(post(BLOCKS_PER_MESSAGE)).toMatchObject({ ok: true });
		expect(post(BLOCKS_PER_MESSAGE + 1)).toMatchObject({
			ok: false,
			error: 'invalid_blocks',
			errors: ['no more than 50 items allowed [json-pointer:/blocks]'],
		});

		const { api: webApi, workspace } = api();
		const parent = workspace.post({ channel: DEFAULT_CHANNEL.id, user: LOCAL_USER.id, text: 'q' });
		const stop = (n: number) => {
			const started = webApi.handle('chat.startStream', `Bearer ${TOKEN}`, {
				channel: DEFAULT_CHANNEL.id,
				thread_ts: parent.ts,
				markdown_text: 'a',
			});
			return webApi.handle('chat.stopStream', `Bearer ${TOKEN}`, {
				channel: DEFAULT_CHANNEL.id,
				ts: String(started.body.ts),
				blocks: blocks(n),
			}).body;
		};
		expect(stop(BLOCKS_PER_MESSAGE)).toMatchObject({ ok: true });
		expect(stop(BLOCKS_PER_MESSAGE + 1)).toMatchObject({
			ok: false,
			error: 'msg_blocks_too_many',
		});
	});

	it(`markdown blocks total ${MARKDOWN_PER_PAYLOAD} characters in one message`, () => {
		const post = (second: number) =>
			call('chat.postMessage', {
				channel: DEFAULT_CHANNEL.id,
				blocks: JSON.stringify([
					{ type: 'markdown', text: 'm'.repeat(MARKDOWN_PER_PAYLOAD - 100) },
					{ type: 'markdown', text: 'm'.repeat(second) },
				]),
			});
		expect(post(100)).toMatchObject({ ok: true });
		expect(post(101)).toMatchObject({ ok: false, error: 'msg_blocks_too_long' });
	});

	it('refuses a block type the surface does not take', () => {
		expect(
			call('chat.postMessage', {
				channel: DEFAULT_CHANNEL.id,
				blocks: JSON.stringify([VALID.input()]),
			}),
		).toMatchObject({ ok: false, error: 'invalid_blocks' });
	});
});

describe('the stand-in holds views to the limits Slack documents', () => {
	const viewCases = (['modal', 'home'] as const).flatMap((type) =>
		VIEW_RULES[type].map((rule) => [type, rule.field, rule] as const),
	);

	function view(type: 'modal' | 'home', rule: FieldRule, size: number): Json {
		const base: Json =
			type === 'modal'
				? { type, title: plain('T'), close: plain('C'), submit: plain('S'), blocks: [] }
				: { type, blocks: [] };
		const [head, tail] = rule.field.split('.');
		if (rule.kind === 'items') base[head] = Array.from({ length: size }, VALID.divider);
		else if (tail) base[head] = plain('x'.repeat(size));
		else base[head] = 'x'.repeat(size);
		return base;
	}

	function open(type: 'modal' | 'home', body: Json): Json {
		return type === 'modal'
			? call('views.open', { view: JSON.stringify(body) })
			: call('views.publish', { user_id: LOCAL_USER.id, view: JSON.stringify(body) });
	}

	it.each(viewCases)('%s %s: accepted at the limit, refused one over', (type, _field, rule) => {
		expect(open(type, view(type, rule, rule.max))).toMatchObject({ ok: true });
		const refused = open(type, view(type, rule, rule.max + 1));
		expect(refused).toMatchObject({ ok: false, error: 'invalid_arguments' });
		expect(JSON.stringify(refused)).toContain(`[json-pointer:/view/${rule.field.split('.')[0]}`);
	});

	it(`a view takes ${BLOCKS_PER_VIEW} blocks and ${VIEW_MAX_BYTES} bytes`, () => {
		const big = (bytes: number) => ({
			type: 'modal',
			title: plain('T'),
			blocks: [{ type: 'divider' }],
			private_metadata: '',
			filler: 'f'.repeat(bytes),
		});
		const size = Buffer.byteLength(JSON.stringify(big(0)));
		expect(open('modal', big(VIEW_MAX_BYTES - size))).toMatchObject({ ok: true });
		expect(open('modal', big(VIEW_MAX_BYTES - size + 1))).toMatchObject({
			ok: false,
			error: 'view_too_large',
		});
	});

	/** A modal holding one input block with this element. */
	const withElement = (element: Json): Json => ({
		type: 'modal',
		title: plain('T'),
		submit: plain('Go'),
		blocks: [{ ...VALID.input(), element }],
	});

	it('an input block holds an input element and a label', () => {
		expect(open('modal', withElement(VALID.number_input()))).toMatchObject({ ok: true });
		expect(open('modal', withElement(button()))).toMatchObject({
			ok: false,
			error: 'invalid_arguments',
		});
		const { label: _label, ...unlabelled } = VALID.input();
		expect(
			open('modal', {
				type: 'modal',
				title: plain('T'),
				submit: plain('Go'),
				blocks: [unlabelled],
			}),
		).toMatchObject({ ok: false, error: 'invalid_arguments' });
	});

	it('a number input says whether decimals are allowed', () => {
		const { is_decimal_allowed: _decimals, ...undecided } = VALID.number_input();
		const refused = open('modal', withElement(undecided));
		expect(refused).toMatchObject({ ok: false, error: 'invalid_arguments' });
		expect(JSON.stringify(refused)).toContain('is_decimal_allowed');
	});

	it("a select's initial option, and checkboxes' initial options, are among its options", () => {
		const two = [option(), { text: plain('Two'), value: 'two' }];
		const select = { ...VALID.static_select(), options: two };
		expect(open('modal', withElement({ ...select, initial_option: two[1] }))).toMatchObject({
			ok: true,
		});
		expect(
			open(
				'modal',
				withElement({ ...select, initial_option: { text: plain('Three'), value: 'three' } }),
			),
		).toMatchObject({ ok: false, error: 'invalid_arguments' });
		const boxes = { ...VALID.checkboxes(), options: two };
		expect(open('modal', withElement({ ...boxes, initial_options: [two[0]] }))).toMatchObject({
			ok: true,
		});
		expect(
			open(
				'modal',
				withElement({ ...boxes, initial_options: [{ text: plain('No'), value: 'no' }] }),
			),
		).toMatchObject({ ok: false, error: 'invalid_arguments' });
	});

	it('a file input lists file extensions, in an input block of a modal only', () => {
		const files = (filetypes: unknown) => withElement({ ...VALID.file_input(), filetypes });
		expect(open('modal', files(['wav', 'mp3', 'MP4']))).toMatchObject({ ok: true });
		for (const wrong of [['audio/*'], ['.wav'], ['audio/wav'], 'wav', [3]]) {
			const refused = open('modal', files(wrong));
			expect([wrong, refused]).toMatchObject([wrong, { ok: false, error: 'invalid_arguments' }]);
			expect(JSON.stringify(refused)).toContain('/filetypes');
		}
		const home = { type: 'home', blocks: [{ ...VALID.input(), element: VALID.file_input() }] };
		expect(open('home', home)).toMatchObject({ ok: false, error: 'invalid_arguments' });
		expect(
			open('modal', {
				type: 'modal',
				title: plain('T'),
				blocks: [{ type: 'actions', elements: [VALID.file_input()] }],
			}),
		).toMatchObject({ ok: false, error: 'invalid_arguments' });
	});

	it('a modal with an input block needs a submit button', () => {
		const modal = { type: 'modal', title: plain('T'), blocks: [VALID.input()] };
		expect(open('modal', modal)).toMatchObject({ ok: false, error: 'invalid_arguments' });
		expect(open('modal', { ...modal, submit: plain('Go') })).toMatchObject({ ok: true });
	});
});

describe('the stand-in holds method arguments to the limits Slack documents', () => {
	const argumentCases = ARGUMENT_RULES.flatMap((rule) =>
		rule.methods.map((method) => [method, rule.argument, rule] as const),
	);

	function argumentCall(method: string, argument: string, value: string): Json {
		const { api: webApi, workspace } = api();
		const parent = workspace.post({ channel: DEFAULT_CHANNEL.id, user: LOCAL_USER.id, text: 'q' });
		const bot = webApi.handle('chat.postMessage', `Bearer ${TOKEN}`, {
			channel: DEFAULT_CHANNEL.id,
			text: 'mine',
		}).body;
		const stream = () =>
			String(
				webApi.handle('chat.startStream', `Bearer ${TOKEN}`, {
					channel: DEFAULT_CHANNEL.id,
					thread_ts: parent.ts,
					markdown_text: 'a',
				}).body.ts,
			);
		const base: Record<string, Record<string, string>> = {
			'chat.postMessage': { channel: DEFAULT_CHANNEL.id },
			'chat.postEphemeral': { channel: DEFAULT_CHANNEL.id, user: LOCAL_USER.id },
			'chat.update': { channel: DEFAULT_CHANNEL.id, ts: String(bot.ts) },
			'chat.startStream': { channel: DEFAULT_CHANNEL.id, thread_ts: parent.ts },
			'files.getUploadURLExternal': { filename: 'a.png', length: '10' },
		};
		const params =
			method === 'chat.appendStream' || method === 'chat.stopStream'
				? { channel: DEFAULT_CHANNEL.id, ts: stream() }
				: base[method];
		return webApi.handle(method, `Bearer ${TOKEN}`, { ...params, [argument]: value }).body;
	}

	it.each(argumentCases)(
		'%s %s: accepted at the limit, refused one over',
		(method, argument, rule) => {
			expect(argumentCall(method, argument, 'x'.repeat(rule.max))).toMatchObject({ ok: true });
			const over = argumentCall(method, argument, 'x'.repeat(rule.max + 1));
			if (rule.truncates) {
				// Slack posts it, cut, and warns.
				expect(over).toMatchObject({ ok: true, warning: rule.truncates });
			} else {
				expect(over).toMatchObject({ ok: false, error: rule.error });
			}
			expect(rule.doc).toBe(`https://docs.slack.dev/reference/methods/${method}`);
		},
	);

	it('chat.postMessage keeps the first 40,000 characters of a longer text', () => {
		const { api: webApi, workspace } = api();
		webApi.handle('chat.postMessage', `Bearer ${TOKEN}`, {
			channel: DEFAULT_CHANNEL.id,
			text: 'y'.repeat(40_001),
		});
		expect(workspace.channelMessages(DEFAULT_CHANNEL.id)[0].text).toHaveLength(40_000);
		expect(webApi.calls[0].warnings).toEqual(['message_truncated']);
	});
});
