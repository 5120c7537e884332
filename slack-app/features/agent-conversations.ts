import type { Logger, webApi } from '@slack/bolt';
import {
	ASSISTANT_THINKING,
	assistantGreeting,
	assistantThreadTitle,
	SUGGESTED_PROMPTS,
} from '../messages/assistant';
import type { ThreadRef } from '../model';
import type { ChatService, ThreadReply } from './chat';
import { conversationFromThread, plainText } from './conversation';
import { errorSummary } from '../slack/errors';
import type { PrivateReply } from '../requests/outcome';
import { REQUEST_EVENT, type SlackThreads, type ThreadMessage } from '../slack/slack-thread';

type WebClient = webApi.WebClient;

export interface AssistantOptions {
	client: WebClient;
	threads: SlackThreads;
	chat: ChatService;
	botUserId: () => string | undefined;
	logger: Logger;
}

/**
 * Slack's assistant surface (Agents & AI Apps): a thread the person opens beside any channel, in
 * the app's direct messages. Started: a greeting and suggested prompts. Each message: the thread
 * is named after the first question, a status shows while the model works, and the answer streams
 * in below with Regenerate and feedback buttons, as every chat answer of the app does.
 */
export class AssistantThreads {
	constructor(private readonly options: AssistantOptions) {}

	async started(thread: ThreadRef): Promise<void> {
		const { client, threads } = this.options;
		await client.assistant.threads.setSuggestedPrompts({
			channel_id: thread.channel,
			thread_ts: thread.threadTs,
			title: 'Try one of these',
			prompts: SUGGESTED_PROMPTS.map((prompt) => ({ ...prompt })),
		});
		await threads.reply(thread, assistantGreeting());
	}

	/** A person's message in an assistant thread; `/gpu chat` threads in the same DM are the chat service's. */
	async message(reply: ThreadReply): Promise<PrivateReply> {
		const { threads, chat, client, botUserId, logger } = this.options;
		const thread = { channel: reply.channel, threadTs: reply.threadTs };
		const [root, ...replies] = await threads.read(thread);
		if (root?.metadata?.eventType === REQUEST_EVENT) return undefined;
		if (!replies.some((message) => message.ts === reply.ts))
			replies.push({ ts: reply.ts, user: reply.user, text: reply.text, fileNames: [] });
		const fromPerson = (message: ThreadMessage) =>
			message.botId === undefined && message.user !== botUserId() && message.text.trim() !== '';
		const first = replies.findIndex(fromPerson);
		if (first < 0) return undefined;
		// The first question stands where a /gpu chat keeps its question, so the conversation reads the same way.
		const question: ThreadMessage = {
			...replies[first],
			metadata: { eventType: REQUEST_EVENT, payload: { prompt: plainText(replies[first].text) } },
		};
		const conversation = conversationFromThread(
			[question, ...replies.slice(first + 1)],
			botUserId(),
		);
		const ids = { channel_id: thread.channel, thread_ts: thread.threadTs };
		try {
			if (replies[first].ts === reply.ts)
				await client.assistant.threads.setTitle({
					...ids,
					title: assistantThreadTitle(plainText(reply.text)),
				});
			// Slack clears the status when the answer is posted.
			await client.assistant.threads.setStatus({ ...ids, status: ASSISTANT_THINKING });
		} catch (error) {
			logger.debug(`Could not set the assistant thread's title or status: ${errorSummary(error)}`);
		}
		return chat.answer(
			{ user: reply.user, channel: reply.channel },
			thread,
			conversation,
			reply.ts,
		);
	}
}
