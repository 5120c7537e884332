import type { Logger, webApi } from '@slack/bolt';
import {
	ASSISTANT_THINKING,
	assistantGreeting,
	assistantThreadTitle,
	SUGGESTED_PROMPTS,
	SUGGESTED_PROMPTS_TITLE,
} from '../messages/assistant';
import { decodeValue, jobRefSchema, ACTIONS } from '../messages/actions';
import type { ThreadRef } from '../model';
import type { ChatService, ThreadReply } from './chat';
import { conversationFromThread, plainText } from './conversation';
import type { JobService } from './jobs';
import type { DeliveryRecord } from '../requests/delivery-record';
import { errorSummary } from '../slack/errors';
import type { AgentSessions } from '../slack/agent-sessions';
import type { PrivateReply } from '../requests/outcome';
import type { SharedState } from '../state/shared-state';
import { redisInTime } from '../state/timeout';
import {
	REQUEST_EVENT,
	writtenByApp,
	type SlackThreads,
	type ThreadMessage,
} from '../slack/slack-thread';

type WebClient = webApi.WebClient;

export interface AgentConversationsOptions {
	client: WebClient;
	threads: SlackThreads;
	chat: ChatService;
	jobs: JobService;
	sessions: AgentSessions;
	/** Whether a job's end is delivered: its session is closed then, and must stay so. */
	deliveries: Pick<DeliveryRecord, 'editUnlessDelivered'>;
	team: string;
	/** Which stop clicks this process or any replica has taken up. */
	claims: Pick<SharedState, 'claimOnce'>;
	botUserId: () => string | undefined;
	logger: Logger;
}

/** A stop click is remembered well past Slack's redeliveries and a second click on the same job. */
const STOP_MEMORY_MS = 3600_000;

/**
 * The app as an agent in Slack (https://docs.slack.dev/ai/migrating-to-agent-messaging): people talk
 * to it in its Messages tab, where each message they send starts a thread and the answer streams in
 * below it (Regenerate, feedback), the thread being an agent session titled after the question.
 * Apps created before agent messaging keep the assistant container: its threads start with
 * `assistant_thread_started` and a root message of the app's, titled and given a status by the
 * assistant.threads methods. Slack's stop button on any request thread lands in `stopped`.
 */
export class AgentConversations {
	constructor(private readonly options: AgentConversationsOptions) {}

	/** The person opened the Messages tab: the suggested prompts at its top (no thread there). */
	async messagesOpened(channel: string): Promise<void> {
		await this.options.client.assistant.threads.setSuggestedPrompts({
			channel_id: channel,
			title: SUGGESTED_PROMPTS_TITLE,
			prompts: SUGGESTED_PROMPTS.map((prompt) => ({ ...prompt })),
		});
	}

	/** The assistant container (apps created before agent messaging) opened a new thread. */
	async started(thread: ThreadRef): Promise<void> {
		const { client, threads } = this.options;
		await client.assistant.threads.setSuggestedPrompts({
			channel_id: thread.channel,
			thread_ts: thread.threadTs,
			title: SUGGESTED_PROMPTS_TITLE,
			prompts: SUGGESTED_PROMPTS.map((prompt) => ({ ...prompt })),
		});
		await threads.reply(thread, assistantGreeting());
	}

	/**
	 * A person's message in the app's direct messages: a new conversation (its own thread) or a turn
	 * of one; `/gpu chat` threads there are the chat service's.
	 */
	async message(reply: ThreadReply): Promise<PrivateReply> {
		const { threads, chat, botUserId } = this.options;
		const thread = { channel: reply.channel, threadTs: reply.threadTs };
		const messages = reply.threadTs === reply.ts ? [] : await threads.read(thread);
		const [root] = messages;
		if (root?.metadata?.eventType === REQUEST_EVENT) return undefined;
		if (!messages.some((message) => message.ts === reply.ts))
			messages.push({
				ts: reply.ts,
				user: reply.user,
				text: reply.text,
				fileNames: [],
				buttons: [],
			});
		const fromPerson = (message: ThreadMessage) =>
			message.botId === undefined && message.user !== botUserId() && message.text.trim() !== '';
		const first = messages.findIndex(fromPerson);
		if (first < 0) return undefined;
		// The first question stands where a /gpu chat keeps its question, so the conversation reads the same way.
		const question: ThreadMessage = {
			...messages[first],
			metadata: { eventType: REQUEST_EVENT, payload: { prompt: plainText(messages[first].text) } },
		};
		const conversation = conversationFromThread(
			[question, ...messages.slice(first + 1)],
			botUserId(),
		);
		const title = assistantThreadTitle(plainText(messages[first].text));
		// The assistant container's root is the app's own message; agent messaging's is the person's.
		if (root !== undefined && writtenByApp(root, botUserId()))
			await this.titleAssistantThread(thread, messages[first].ts === reply.ts ? title : undefined);
		return chat.answer(
			{ user: reply.user, channel: reply.channel },
			thread,
			conversation,
			reply.ts,
			title,
		);
	}

	/**
	 * Slack's stop button on a request's thread (`agent_session_stopped`; Slack has already ended
	 * the thread's streams). A running job is cancelled in GPU Cloud, once whichever replica hears it,
	 * and its thread says so when it has stopped; the session leaves `processing` at once, as Slack
	 * leaves that to the app. Resolves with what only the person who clicked sees.
	 */
	async stopped(stop: { channel: string; threadTs: string; user: string }): Promise<PrivateReply> {
		const { threads, jobs, sessions, claims, team, botUserId } = this.options;
		const thread = { channel: stop.channel, threadTs: stop.threadTs };
		const messages = await threads.read(thread);
		// A shared file's thread starts with the person's message: its request is the app's reply there.
		const root =
			messages.find(
				(message) =>
					message.ts !== stop.threadTs &&
					writtenByApp(message, botUserId()) &&
					message.metadata?.eventType === REQUEST_EVENT &&
					runningJob(message),
			) ?? messages[0];
		const request = root && writtenByApp(root, botUserId()) ? root.metadata : undefined;
		const cancel = root && request?.eventType === REQUEST_EVENT ? runningJob(root) : undefined;
		if (!cancel) {
			// A conversation: the answer ends where it is (Slack ended its stream; the model's stream is
			// closed here when this process writes it). A request that follows no running job (it
			// ended, or an image under way) has nothing to stop.
			if (request?.eventType !== REQUEST_EVENT || request.payload.kind === 'chat') {
				this.options.chat.stop(thread);
				await sessions.settle(thread, 'active');
			}
			return undefined;
		}
		const first = await redisInTime(
			claims.claimOnce(`session-stopped:${team}/${cancel.jobId}/${stop.user}`, STOP_MEMORY_MS),
		);
		if (!first) {
			this.options.logger.info(`Stop of job ${cancel.jobId} already taken up; ignored.`);
			return undefined;
		}
		const { accepted, reply } = await jobs.requestCancel(
			{ user: stop.user, channel: stop.channel },
			cancel.jobId,
			cancel.endpoint,
		);
		// Out of processing now, unless the job's end (which closes the session) got there first.
		if (accepted)
			await this.options.deliveries.editUnlessDelivered(cancel.jobId, () =>
				sessions.settle(thread, 'active'),
			);
		return reply;
	}

	private async titleAssistantThread(thread: ThreadRef, title: string | undefined): Promise<void> {
		const { client, logger } = this.options;
		const ids = { channel_id: thread.channel, thread_ts: thread.threadTs };
		try {
			if (title) await client.assistant.threads.setTitle({ ...ids, title });
			// Slack clears the status when the answer is posted.
			await client.assistant.threads.setStatus({ ...ids, status: ASSISTANT_THINKING });
		} catch (error) {
			logger.debug(`Could not set the assistant thread's title or status: ${errorSummary(error)}`);
		}
	}
}

/** The job a parent follows while it runs: its Cancel button carries the job's id and endpoint. */
function runningJob(parent: ThreadMessage) {
	const button = parent.buttons.find((candidate) => candidate.actionId === ACTIONS.cancel);
	return button ? decodeValue(jobRefSchema, button.value) : undefined;
}
