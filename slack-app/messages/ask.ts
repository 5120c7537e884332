import { z } from 'zod/v4';
import type { ModalView } from '../model';
import { VIEWS } from './actions';
import { context, escapeWithin, section } from './format';

/** The form of "Ask GPU Cloud about this message" and the prompt it becomes. */

export const ASK_FORM = { question: { block: 'question', action: 'value' } } as const;

/** The message is carried in `private_metadata` (3,000 characters at most), so it is cut to fit. */
export const ASKED_MESSAGE_MAX_LENGTH = 2500;

export const askContextSchema = z.strictObject({
	channel: z.string().min(1),
	message: z.string().max(ASKED_MESSAGE_MAX_LENGTH),
});
export type AskContext = z.infer<typeof askContextSchema>;

/** `denied`: the person may not use the app here; the form says so and offers no submit. */
export function askModal(
	asked: AskContext | { channel: string; message: string },
	denied?: string,
): ModalView {
	const carried: AskContext = {
		channel: asked.channel,
		message: asked.message.slice(0, ASKED_MESSAGE_MAX_LENGTH),
	};
	const base: ModalView = {
		type: 'modal',
		callback_id: VIEWS.askModal,
		title: { type: 'plain_text', text: 'Ask GPU Cloud' },
		close: { type: 'plain_text', text: 'Cancel' },
		private_metadata: JSON.stringify(carried),
		blocks: [
			context('About this message:'),
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
export function askAboutMessagePrompt(message: string, question: string): string {
	return `About this Slack message:\n"""\n${message}\n"""\n${question}`;
}
