import type { ChatMessage } from '../../shared/schemas';
import { unescapeText } from '../messages/format';
import {
	ANSWER_EVENT,
	REQUEST_EVENT,
	writtenByApp,
	type ThreadMessage,
} from '../slack/slack-thread';

/** Keeps the prompt within what a small model accepts: the first question plus the latest turns. */
export const CONTEXT_MAX_MESSAGES = 30;
export const CONTEXT_MAX_CHARACTERS = 16_000;

/** Slack's markup for mentions and links, as plain words for the model. */
export function plainText(text: string): string {
	return unescapeText(
		text
			.replace(/<@([A-Z0-9]+)>/g, '@$1')
			.replace(/<(https?:[^|>]+)\|([^>]+)>/g, '$2 ($1)')
			.replace(/<(https?:[^>]+)>/g, '$1'),
	);
}

/**
 * A chat thread as model messages: the question in the parent, the app's answers as `assistant`,
 * people's replies as `user`. Status and error messages of the app are left out. `beforeTs` cuts
 * the thread at a message (to regenerate that answer).
 */
export function conversationFromThread(
	thread: ThreadMessage[],
	botUserId: string | undefined,
	beforeTs?: string,
): ChatMessage[] {
	const [parent, ...replies] = thread;
	const question =
		parent?.metadata?.eventType === REQUEST_EVENT ? parent.metadata.payload.prompt : undefined;
	if (typeof question !== 'string') return [];
	const messages: ChatMessage[] = [{ role: 'user', content: question }];
	for (const message of replies) {
		if (beforeTs && Number(message.ts) >= Number(beforeTs)) break;
		if (writtenByApp(message, botUserId)) {
			const answer = message.markdown ?? message.text;
			if (message.metadata?.eventType !== ANSWER_EVENT || !answer.trim()) continue;
			const previous = messages[messages.length - 1];
			// A long answer continues over several messages: one turn again.
			if (previous.role === 'assistant' && message.metadata.payload.continues === true)
				previous.content += unescapeText(answer);
			else messages.push({ role: 'assistant', content: unescapeText(answer) });
		} else if (message.text.trim()) {
			messages.push({ role: 'user', content: plainText(message.text) });
		}
	}
	return trimConversation(messages);
}

export function trimConversation(messages: ChatMessage[]): ChatMessage[] {
	if (messages.length === 0) return messages;
	const [first, ...rest] = messages;
	const kept: ChatMessage[] = [];
	let size = first.content.length;
	for (let i = rest.length - 1; i >= 0 && kept.length < CONTEXT_MAX_MESSAGES - 1; i--) {
		size += rest[i].content.length;
		if (size > CONTEXT_MAX_CHARACTERS && kept.length > 0) break;
		kept.unshift(rest[i]);
	}
	return [first, ...kept];
}
