import { z } from 'zod/v4';
import type { ModalView } from '../model';
import { VIEWS } from './actions';
import { context, escapeWithin, section, SLACK_LIMITS } from './format';

/** The form of "Ask GPU Cloud about this message" and the prompt it becomes. */

export const ASK_FORM = { question: { block: 'question', action: 'value' } } as const;

/**
 * The message travels in `private_metadata`, which Slack caps at 3,000 characters of JSON: a long
 * message is cut to fit once encoded (quotes and line breaks take two characters there), and
 * `length` keeps its full length so the form and the prompt say that only a part was sent.
 */
export const PRIVATE_METADATA_MAX_LENGTH = SLACK_LIMITS.privateMetadata;

export const askContextSchema = z.strictObject({
	channel: z.string().min(1),
	message: z.string().max(PRIVATE_METADATA_MAX_LENGTH),
	/** The message's full length, when only its start is carried. */
	length: z.number().int().positive().optional(),
});
export type AskContext = z.infer<typeof askContextSchema>;

/** As much of the message as fits in `private_metadata` with the channel. */
export function askContext(channel: string, message: string): AskContext {
	let kept = message;
	for (;;) {
		const carried: AskContext =
			kept.length < message.length
				? { channel, message: kept, length: message.length }
				: { channel, message: kept };
		const over = JSON.stringify(carried).length - PRIVATE_METADATA_MAX_LENGTH;
		if (over <= 0) return carried;
		// Each character cut shortens the JSON by one or more, so this ends in a few rounds.
		kept = withoutBrokenPair(kept.slice(0, Math.max(0, kept.length - over)));
	}
}

/** A cut must not leave half of a surrogate pair (an emoji) at the end. */
function withoutBrokenPair(text: string): string {
	return /[\uD800-\uDBFF]$/.test(text) ? text.slice(0, -1) : text;
}

/** "the first 2,841 of 3,800 characters", for a message that was cut. */
function partNote(asked: AskContext): string | undefined {
	return asked.length === undefined
		? undefined
		: `the first ${asked.message.length.toLocaleString('en-US')} of ${asked.length.toLocaleString('en-US')} characters`;
}

/** `denied`: the person may not use the app here; the form says so and offers no submit. */
export function askModal(asked: { channel: string; message: string }, denied?: string): ModalView {
	const carried = askContext(asked.channel, asked.message);
	const part = partNote(carried);
	const base: ModalView = {
		type: 'modal',
		callback_id: VIEWS.askModal,
		title: { type: 'plain_text', text: 'Ask GPU Cloud' },
		close: { type: 'plain_text', text: 'Cancel' },
		private_metadata: JSON.stringify(carried),
		blocks: [
			context(part ? `About this message (it is long: ${part} are sent):` : 'About this message:'),
			section(`>${escapeWithin(carried.message || '(no text)', 2000).replace(/\n/g, '\n>')}`),
		],
	};
	if (denied) return { ...base, blocks: [...base.blocks, section(`:no_entry: ${denied}`)] };
	return {
		...base,
		submit: { type: 'plain_text', text: 'Ask' },
		blocks: [
			...base.blocks,
			{
				type: 'input',
				block_id: ASK_FORM.question.block,
				label: { type: 'plain_text', text: 'Your question' },
				hint: {
					type: 'plain_text',
					text: 'The answer starts a thread in this channel; reply there to continue.',
				},
				element: {
					type: 'plain_text_input',
					action_id: ASK_FORM.question.action,
					multiline: true,
					initial_value: 'Explain this message.',
				},
			},
		],
	};
}

/** The chat's first turn: the quoted message, then the question (kept as the thread's context). */
export function askAboutMessagePrompt(asked: AskContext, question: string): string {
	const part = partNote(asked);
	return `About this Slack message${part ? ` (${part} of it)` : ''}:\n"""\n${asked.message}\n"""\n${question}`;
}
