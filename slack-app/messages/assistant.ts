import type { SlackMessage } from '../model';
import { section, truncate } from './format';

/** What the app shows as an agent: suggested prompts, thread titles and the container's greeting. */

export const SUGGESTED_PROMPTS_TITLE = 'Try one of these';

export const SUGGESTED_PROMPTS = [
	{
		title: 'Explain GPU jobs',
		message: 'How do GPU jobs, queues and interruptible nodes work here?',
	},
	{
		title: 'Pick an endpoint',
		message: 'Which inference endpoint should I use to summarise a long text?',
	},
	{
		title: 'Write a prompt',
		message: 'Help me write a good prompt for an image of a red fox in the snow.',
	},
] as const;

export function assistantGreeting(): SlackMessage {
	const text =
		'Hi! Ask me anything, or pick a suggestion below. I answer with the model this workspace runs on GPU Cloud; `/gpu help` shows what else I can do.';
	return { text, blocks: [section(text)] };
}

/** Slack shows the title in the thread list; the first question, cut short, names the thread. */
export function assistantThreadTitle(question: string): string {
	return truncate(question.replace(/\s+/g, ' ').trim(), 60) || 'New chat';
}

export const ASSISTANT_THINKING = 'is thinking…';
