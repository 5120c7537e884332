import type { WorkloadClient } from '../../shared/client';
import type { ChatMessage, ChatRequest } from '../../shared/schemas';
import { answerMessage } from '../messages/chat';
import { noticeMessage } from '../messages/errors';
import { parentMessage, type ParentView } from '../messages/parent';
import type { ThreadRef } from '../model';
import type { Clock } from '../../shared/clock';
import type { AnswerPiece, AnswerTask, AnswerWriter } from './answer-stream';
import { conversationFromThread, plainText } from './conversation';
import type { RequestLifecycle, RequestPlan } from '../requests/lifecycle';
import type { PrivateReply, RequestContext } from '../requests/outcome';
import type { SharedState } from '../state/shared-state';
import { cannotPostMessage } from '../slack/slack-errors';
import {
	ANSWER_EVENT,
	REQUEST_EVENT,
	writtenByApp,
	type SlackThreads,
} from '../slack/slack-thread';
import type { InflightRecords, InflightRequest } from '../state/state-file';
import { redisInTime } from '../state/timeout';

export interface ChatServiceOptions {
	workload?: WorkloadClient;
	model?: string;
	/** Paces the checks of a model that is starting. */
	clock: Clock;
	writer: AnswerWriter;
	lifecycle: RequestLifecycle;
	threads: SlackThreads;
	/** Where answers under way are recorded (the SharedState). */
	records: InflightRecords;
	team: string;
	botUserId: () => string | undefined;
	/** Which thread replies this process or any replica has taken up. */
	claims: Pick<SharedState, 'claimOnce'>;
}

/** The question is kept in the parent's metadata, where follow-ups find it; long ones are cut. */
const PROMPT_METADATA_LIMIT = 4000;
/** How often a starting model is asked whether it is ready, and how long it may take to be. */
const MODEL_START_POLL_MS = 1000;
const MODEL_START_LIMIT_MS = 15 * 60_000;

const STARTING_TASK: Omit<AnswerTask, 'status'> = {
	id: 'model-start',
	title: 'Starting the model',
};

/** Slack gives up redelivering an event within minutes; a thread reply is remembered well past that. */
const FOLLOWED_UP_MEMORY_MS = 3600_000;

const FOLLOW_UP_NOT_TAKEN = noticeMessage(
	'Your reply could not be taken up just now (the app is waiting for its shared store). Send it again in a moment.',
);

export interface ThreadReply {
	channel: string;
	threadTs: string;
	ts: string;
	user: string;
	text: string;
}

/** `/gpu chat`: answers in a thread, streamed; replies in that thread continue the conversation. */
export class ChatService {
	/** Answers this process is writing, by thread: Slack's stop button ends them. */
	private readonly writing = new Map<string, AbortController>();

	constructor(private readonly options: ChatServiceOptions) {}

	/**
	 * Stops the answer this process is writing in `thread` (Slack's stop button): the model's stream
	 * is closed and the answer ends where it is. False when none is written here (another replica's
	 * ends when Slack refuses its next piece).
	 */
	stop(thread: ThreadRef): boolean {
		const writing = this.writing.get(threadKey(thread));
		writing?.abort();
		return writing !== undefined;
	}

	private off(context: RequestContext): PrivateReply {
		return this.options.lifecycle.refuse(
			context,
			noticeMessage(
				'Chat is off: the app has no text-generation workload configured (GPU_CLOUD_CHAT_URL).',
			),
		);
	}

	async ask(context: RequestContext, question: string): Promise<PrivateReply> {
		const { workload } = this.options;
		if (!workload) return this.off(context);
		const parent: ParentView = {
			user: context.user,
			subject: { kind: 'chat', message: question },
			state: 'running',
		};
		return this.respond(workload, context, [{ role: 'user', content: question }], {
			place: { kind: 'new', parent, payload: { prompt: question.slice(0, PROMPT_METADATA_LIMIT) } },
			remember: { prompt: question },
		});
	}

	/**
	 * Workflow Builder's "Ask a model" step: the model's whole answer as text, for later steps; no
	 * thread (the workflow decides where it goes). The refusal a person would see, when refused.
	 */
	async answerForStep(
		context: RequestContext,
		question: string,
	): Promise<{ answer: string } | { refused: string }> {
		const { workload, model, lifecycle } = this.options;
		const refused = workload ? lifecycle.refusal(context) : this.off(context);
		if (refused || !workload) return { refused: plainText(refused?.text ?? '') };
		if (!(await modelReady(workload))) await this.untilModelReady(workload);
		const completion = await workload.chat.complete({
			messages: [{ role: 'user', content: question }],
			...(model ? { model } : {}),
		});
		return { answer: completion.choices[0].message.content ?? '' };
	}

	/**
	 * A message in a thread. Answers only in threads that `/gpu chat` started; in the app's other
	 * threads it returns the parent's request kind (the caller says what such a thread accepts);
	 * everything else the app hears in channels is ignored.
	 */
	async followUp(reply: ThreadReply): Promise<{ otherRequest: unknown } | undefined> {
		const { threads, botUserId, workload } = this.options;
		const thread = { channel: reply.channel, threadTs: reply.threadTs };
		const messages = await threads.read(thread);
		const parent = messages[0];
		if (
			!parent ||
			!writtenByApp(parent, botUserId()) ||
			parent.metadata?.eventType !== REQUEST_EVENT
		)
			return undefined;
		if (parent.metadata.payload.kind !== 'chat')
			return { otherRequest: parent.metadata.payload.kind };
		// Marked only once the thread is read, so a redelivery still answers when the first attempt failed
		// before this point; the check and the mark are one step (one synchronous call, or one Redis
		// SET NX), so concurrent deliveries cannot both pass.
		const context = { user: reply.user, channel: reply.channel };
		let first: boolean;
		try {
			first = await this.firstFollowUp(`${this.options.team}/${reply.channel}/${reply.ts}`);
		} catch {
			// Bolt acknowledged the event before any listener ran, so Slack will not send it again, and
			// whether another replica took it up cannot be known now: the person sends it again rather
			// than the reply being answered twice or silently dropped.
			await threads.ephemeral(reply.channel, reply.user, FOLLOW_UP_NOT_TAKEN, reply.threadTs);
			return undefined;
		}
		if (!first) return undefined;
		const conversation = conversationFromThread(messages, botUserId());
		// The reply that triggered this may not be readable yet; make sure the model sees it.
		if (!messages.some((message) => message.ts === reply.ts))
			conversation.push({ role: 'user', content: plainText(reply.text) });
		const refused = workload
			? await this.respond(workload, context, conversation, {
					place: { kind: 'thread', thread, messageTs: reply.ts },
					remember: {},
				})
			: this.off(context);
		if (refused) await threads.ephemeral(reply.channel, reply.user, refused, reply.threadTs);
		return undefined;
	}

	/**
	 * True the first time this process or any replica takes up this thread reply (`team/channel/ts`):
	 * Slack redelivers an event it saw no 2xx for within 3 s, to any replica, and the redelivery must
	 * not answer the same message again. Rejects when Redis does not answer in time.
	 */
	private firstFollowUp(key: string): Promise<boolean> {
		return redisInTime(this.options.claims.claimOnce(`followed-up:${key}`, FOLLOWED_UP_MEMORY_MS));
	}

	/**
	 * The Regenerate button under an answer: the conversation up to that answer, answered again in
	 * that answer's place, so an older turn stays where it was asked.
	 */
	async regenerate(
		context: RequestContext,
		thread: ThreadRef,
		answerTs: string,
	): Promise<PrivateReply> {
		const { threads, botUserId, workload } = this.options;
		if (!workload) return this.off(context);
		let conversation: ChatMessage[] = [];
		return this.respond(
			workload,
			context,
			() => conversation,
			{
				checks: async () => {
					conversation = conversationFromThread(await threads.read(thread), botUserId(), answerTs);
					return conversation.length === 0
						? noticeMessage('This thread has no question to answer again.')
						: undefined;
				},
				place: { kind: 'thread', thread, messageTs: answerTs },
				remember: {},
			},
			answerTs,
		);
	}

	/** Answers a conversation gathered elsewhere (an agent thread), below in its thread. */
	answer(
		context: RequestContext,
		thread: ThreadRef,
		conversation: ChatMessage[],
		messageTs: string,
		title: string,
	): Promise<PrivateReply> {
		const { workload } = this.options;
		if (!workload) return Promise.resolve(this.off(context));
		return this.respond(workload, context, conversation, {
			place: { kind: 'thread', thread, messageTs },
			remember: {},
			title,
		});
	}

	/**
	 * After a restart, or on another replica when the one answering died: an answer cannot be resumed
	 * mid-stream, so say so once and offer Regenerate. The notice carries the request's ref, so one
	 * already in the thread (posted by a run that died before forgetting the request) is not posted again.
	 */
	async interrupted(inflight: InflightRequest): Promise<void> {
		try {
			await this.flagInterrupted(inflight);
		} catch (error) {
			// Slack will never take it (the channel is gone, or closed to the app): forgotten, not tried for ever.
			if (cannotPostMessage(error)) await this.options.records.endInflight(inflight.ref);
			throw error;
		}
		await this.options.records.endInflight(inflight.ref);
	}

	private async flagInterrupted(inflight: InflightRequest): Promise<void> {
		const { threads } = this.options;
		const thread = { channel: inflight.channel, threadTs: inflight.threadTs };
		const notice = { eventType: ANSWER_EVENT, payload: { ref: inflight.ref, interrupted: true } };
		if ((await threads.findMarked(thread, notice)) === undefined)
			await threads.reply(thread, answerMessage('', 'interrupted'), notice);
		if (inflight.prompt !== undefined) {
			await threads.update(
				inflight.channel,
				inflight.threadTs,
				parentMessage({
					user: inflight.user,
					subject: { kind: 'chat', message: inflight.prompt },
					state: 'interrupted',
				}),
			);
		}
	}

	/**
	 * Streams the model's answer to `conversation` into the thread, as one request of the lifecycle;
	 * in place of the answer `replaces` when one is regenerated.
	 */
	private respond(
		workload: WorkloadClient,
		context: RequestContext,
		conversation: ChatMessage[] | (() => ChatMessage[]),
		how: Pick<RequestPlan, 'checks' | 'place' | 'remember' | 'title'>,
		replaces?: string,
	): Promise<PrivateReply> {
		const { lifecycle, writer, model, team } = this.options;
		return lifecycle.start({
			context,
			kind: 'chat',
			usesSlot: true,
			...how,
			work: async ({ ref, user, thread }) => {
				const messages = typeof conversation === 'function' ? conversation() : conversation;
				const stop = new AbortController();
				const key = threadKey(thread);
				this.writing.set(key, stop);
				try {
					const pieces = this.answerPieces(
						workload,
						{ messages, ...(model ? { model } : {}) },
						stop.signal,
					);
					const result = await writer.write(
						{ thread, user, team, ref, ...(replaces ? { replaces } : {}) },
						pieces,
						stop.signal,
					);
					// A stopped answer says why itself; one the person stopped stands as far as it went.
					return { state: result.state === 'failed' ? 'failed' : 'succeeded' };
				} finally {
					if (this.writing.get(key) === stop) this.writing.delete(key);
				}
			},
		});
	}

	/**
	 * The answer's pieces: when the text workload has no replica ready (it scales up from zero), a
	 * task "Starting the model" shows until one is, then the model's text as it is generated.
	 */
	private async *answerPieces(
		workload: WorkloadClient,
		request: ChatRequest,
		signal: AbortSignal,
	): AsyncGenerator<AnswerPiece> {
		if (!(await modelReady(workload, signal))) {
			yield { ...STARTING_TASK, status: 'in_progress' };
			await this.untilModelReady(workload, signal);
			yield { ...STARTING_TASK, status: 'complete' };
		}
		for await (const delta of workload.chat.stream(request, { signal })) yield delta.content;
	}

	/** Waits for a replica of the text workload that is starting, asking every MODEL_START_POLL_MS. */
	private async untilModelReady(workload: WorkloadClient, signal?: AbortSignal): Promise<void> {
		const { clock } = this.options;
		const deadline = clock.now() + MODEL_START_LIMIT_MS;
		do {
			if (clock.now() >= deadline)
				throw new Error(
					`The model did not start within ${MODEL_START_LIMIT_MS / 60_000} minutes; try again later.`,
				);
			await clock.sleep(MODEL_START_POLL_MS, signal);
		} while (!(await modelReady(workload, signal)));
	}
}

/**
 * Whether the text workload has a replica ready. A server without a health check (not every
 * OpenAI-style server has one) is taken as up: the answer's own request then says what is wrong.
 */
function modelReady(workload: WorkloadClient, signal?: AbortSignal): Promise<boolean> {
	return workload.chat.ready({ signal }).catch(() => signal?.aborted !== true);
}

function threadKey(thread: ThreadRef): string {
	return `${thread.channel}/${thread.threadTs}`;
}
