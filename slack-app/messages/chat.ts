import type { KnownBlock, SlackMessage } from '../model';
import { ACTIONS } from './actions';
import { context, escapeText, escapeWithin, SLACK_LIMITS, truncate } from './format';

/**
 * One message of an answer, escaped: Slack's `markdown` block and each chat.*Stream call hold up to
 * 12,000 characters. A longer answer continues in the next message.
 */
export const ANSWER_MAX_LENGTH = 11_000;

/** `continued`: the answer goes on in the next message. */
export type AnswerState = 'streaming' | 'done' | 'failed' | 'interrupted' | 'continued' | 'stopped';

function regenerateButton(): KnownBlock {
	return {
		type: 'actions',
		block_id: 'gpu.answer_actions',
		elements: [
			{
				type: 'button',
				action_id: ACTIONS.regenerateChat,
				text: { type: 'plain_text', text: 'Regenerate' },
				value: 'answer',
			},
		],
	};
}

/** Slack's own feedback buttons (a `context_actions` block), under every finished answer. */
function feedbackButtons(): KnownBlock {
	return {
		type: 'context_actions',
		elements: [
			{
				type: 'feedback_buttons',
				action_id: ACTIONS.feedback,
				positive_button: {
					text: { type: 'plain_text', text: '👍' },
					accessibility_label: 'Good answer',
					value: FEEDBACK.good,
				},
				negative_button: {
					text: { type: 'plain_text', text: '👎' },
					accessibility_label: 'Bad answer',
					value: FEEDBACK.bad,
				},
			},
		],
	};
}

/** What the feedback buttons carry back, and the thanks for each. */
export const FEEDBACK = { good: 'good', bad: 'bad' } as const;

export function feedbackThanks(value: keyof typeof FEEDBACK): SlackMessage {
	const text =
		value === 'good'
			? 'Thanks, glad it helped.'
			: 'Thanks for telling us. Press Regenerate for another answer, or reply in the thread to say what was wrong.';
	return { text, blocks: [context(text)] };
}

/** The blocks under an answer: a status line while it streams or when it stopped early, and Regenerate. */
export function answerFooter(state: AnswerState, detail?: string): KnownBlock[] {
	switch (state) {
		case 'streaming':
			return [context('_Generating…_')];
		case 'continued':
			return [context('_Continued in the next message ↓_')];
		case 'done':
			return [regenerateButton(), feedbackButtons()];
		case 'failed':
			return [
				context(`:x: The answer stopped: ${escapeText(detail ?? 'unknown error')}`),
				regenerateButton(),
			];
		case 'stopped':
			return [context(':black_square_for_stop: Stopped.'), regenerateButton()];
		case 'interrupted':
			return [
				context(':warning: The app restarted while answering. Press Regenerate to try again.'),
				regenerateButton(),
			];
	}
}

/** An answer not begun while work before it runs (the model starting), when edits stand in for a native stream. */
export function answerTaskMessage(title: string): SlackMessage {
	return { text: `${title}…`, blocks: [context(`_${escapeText(title)}…_`)] };
}

/** A chat answer as one message (used when native streaming is not available). */
export function answerMessage(text: string, state: AnswerState, detail?: string): SlackMessage {
	const body = escapeWithin(text, ANSWER_MAX_LENGTH);
	const blocks: KnownBlock[] = body.trim() ? [{ type: 'markdown', text: body }] : [];
	// The whole answer is in the markdown block, which follow-ups read back as conversation context;
	// `text` is the notification, which chat.update takes up to 4,000 characters of.
	return {
		text: truncate(body, SLACK_LIMITS.fallbackText) || 'Thinking…',
		blocks: [...blocks, ...answerFooter(state, detail)],
	};
}
