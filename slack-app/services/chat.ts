import { randomUUID } from 'node:crypto';
import type { Logger } from '@slack/bolt';
import type { WorkloadClient } from '../../shared/client';
import type { Clock } from '../../shared/clock';
import type { ChatMessage } from '../../shared/schemas';
import { WebhookDeduplicator } from '../../shared/webhooks';
import { answerMessage } from '../messages/chat';
import { deniedMessage, noticeMessage } from '../messages/errors';
import { parentMessage, type ParentView } from '../messages/parent';
import type { ThreadRef } from '../model';
import type { AccessPolicy } from './access';
import type { AnswerWriter } from './answer-stream';
import type { BackgroundTasks } from './background';
import { conversationFromThread, plainText } from './conversation';
import { errorSummary } from './errors';
import type { PrivateReply, RequestContext } from './outcome';
import { cannotPostMessage } from './slack-errors';
import { ANSWER_EVENT, REQUEST_EVENT, type SlackThreads } from './slack-thread';
import type { InflightRequest, StateStore } from './state-store';

export interface ChatServiceOptions {
  workload?: WorkloadClient;
  model?: string;
  writer: AnswerWriter;
  threads: SlackThreads;
  access: AccessPolicy;
  state: StateStore;
  background: BackgroundTasks;
  clock: Clock;
  logger: Logger;
  team: string;
  botUserId: () => string | undefined;
}

/** The question is kept in the parent's metadata, where follow-ups find it; long ones are cut. */
const PROMPT_METADATA_LIMIT = 4000;

export interface ThreadReply {
  channel: string;
  threadTs: string;
  ts: string;
  user: string;
  text: string;
}

/** `/gpu chat`: answers in a thread, streamed; replies in that thread continue the conversation. */
export class ChatService {
  /**
   * Thread replies already taken up (`channel/ts`). Slack redelivers an event it saw no 2xx for
   * within 3 s; the redelivery must not answer the same message again.
   */
  private readonly followedUp = new WebhookDeduplicator(10_000);

  constructor(private readonly options: ChatServiceOptions) {}

  private refuse(context: RequestContext, ref: string): PrivateReply {
    const { access, workload } = this.options;
    const denial = access.check(context.user, context.channel);
    if (denial) return deniedMessage(denial.reason, denial.hint, access.settings.contact);
    if (!workload) return noticeMessage('Chat is off: the app has no text-generation workload configured (GPU_CLOUD_CHAT_URL).');
    const full = access.acquire(context.user, ref);
    return full ? deniedMessage(full.reason, full.hint, access.settings.contact) : undefined;
  }

  async ask(context: RequestContext, question: string): Promise<PrivateReply> {
    const ref = randomUUID();
    const refused = this.refuse(context, ref);
    if (refused) return refused;
    const { threads, clock } = this.options;
    const view: ParentView = { user: context.user, subject: { kind: 'chat', message: question }, state: 'running' };
    let threadTs: string;
    try {
      threadTs = await threads.postParent(context.channel, parentMessage(view), {
        kind: 'chat',
        user: context.user,
        prompt: question.slice(0, PROMPT_METADATA_LIMIT),
      });
    } catch (error) {
      this.options.access.release(context.user, ref);
      const message = cannotPostMessage(error);
      if (message) return message;
      throw error;
    }
    const thread = { channel: context.channel, threadTs };
    const inflight: InflightRequest = { ref, kind: 'chat', channel: thread.channel, threadTs, messageTs: threadTs, user: context.user, startedAt: clock.now(), prompt: question };
    this.answerInBackground(inflight, [{ role: 'user', content: question }], view);
    return undefined;
  }

  /**
   * A message in a thread. Answers only in threads that `/gpu chat` started; in the app's other
   * threads it returns the parent's request kind (the caller says what such a thread accepts);
   * everything else the app hears in channels is ignored.
   */
  async followUp(reply: ThreadReply): Promise<{ otherRequest: unknown } | undefined> {
    const { threads, botUserId, clock } = this.options;
    const thread = { channel: reply.channel, threadTs: reply.threadTs };
    const messages = await threads.read(thread);
    const parent = messages[0];
    if (parent?.metadata?.eventType !== REQUEST_EVENT) return undefined;
    if (parent.metadata.payload.kind !== 'chat') return { otherRequest: parent.metadata.payload.kind };
    // Marked only once the thread is read, so a redelivery still answers when the first attempt failed
    // before this point; from here on the check and the start are synchronous, so concurrent
    // deliveries cannot both pass.
    if (!this.followedUp.firstDelivery(`${reply.channel}/${reply.ts}`)) return undefined;
    const ref = randomUUID();
    const refused = this.refuse({ user: reply.user, channel: reply.channel }, ref);
    if (refused) {
      await threads.ephemeral(reply.channel, reply.user, refused, reply.threadTs);
      return undefined;
    }
    const conversation = conversationFromThread(messages, botUserId());
    // The reply that triggered this may not be readable yet; make sure the model sees it.
    if (!messages.some((message) => message.ts === reply.ts)) conversation.push({ role: 'user', content: plainText(reply.text) });
    const inflight: InflightRequest = { ref, kind: 'chat', channel: reply.channel, threadTs: reply.threadTs, messageTs: reply.ts, user: reply.user, startedAt: clock.now() };
    this.answerInBackground(inflight, conversation);
    return undefined;
  }

  /**
   * The Regenerate button under an answer: the conversation up to that answer, answered again in
   * that answer's place, so an older turn stays where it was asked.
   */
  async regenerate(context: RequestContext, thread: ThreadRef, answerTs: string): Promise<PrivateReply> {
    const ref = randomUUID();
    const refused = this.refuse(context, ref);
    if (refused) return refused;
    const { threads, botUserId, clock } = this.options;
    let conversation: ChatMessage[];
    try {
      conversation = conversationFromThread(await threads.read(thread), botUserId(), answerTs);
    } catch (error) {
      this.options.access.release(context.user, ref);
      throw error;
    }
    if (conversation.length === 0) {
      this.options.access.release(context.user, ref);
      return noticeMessage('This thread has no question to answer again.');
    }
    const inflight: InflightRequest = { ref, kind: 'chat', channel: thread.channel, threadTs: thread.threadTs, messageTs: answerTs, user: context.user, startedAt: clock.now() };
    this.answerInBackground(inflight, conversation, undefined, answerTs);
    return undefined;
  }

  /** Answers a conversation gathered elsewhere (an assistant thread), below in its thread. */
  answer(context: RequestContext, thread: ThreadRef, conversation: ChatMessage[], messageTs: string): PrivateReply {
    const ref = randomUUID();
    const refused = this.refuse(context, ref);
    if (refused) return refused;
    const inflight: InflightRequest = { ref, kind: 'chat', channel: thread.channel, threadTs: thread.threadTs, messageTs, user: context.user, startedAt: this.options.clock.now() };
    this.answerInBackground(inflight, conversation);
    return undefined;
  }

  /** After a restart: an answer cannot be resumed mid-stream, so say so and offer Regenerate. */
  async interrupted(inflight: InflightRequest): Promise<void> {
    const { threads, state } = this.options;
    const thread = { channel: inflight.channel, threadTs: inflight.threadTs };
    await threads.reply(thread, answerMessage('', 'interrupted'), { eventType: ANSWER_EVENT, payload: { ref: inflight.ref } });
    if (inflight.prompt !== undefined) {
      await threads.update(inflight.channel, inflight.threadTs, parentMessage({ user: inflight.user, subject: { kind: 'chat', message: inflight.prompt }, state: 'interrupted' }));
    }
    await state.endInflight(inflight.ref);
  }

  private answerInBackground(inflight: InflightRequest, conversation: ChatMessage[], parent?: ParentView, replaces?: string): void {
    const { background, state, access, writer, workload, model, team, threads, clock, logger } = this.options;
    if (!workload) return;
    background.run(`Chat answer ${inflight.ref}`, async () => {
      await state.startInflight(inflight);
      const thread = { channel: inflight.channel, threadTs: inflight.threadTs };
      try {
        const deltas = (async function* () {
          for await (const delta of workload.chat.stream({ messages: conversation, ...(model ? { model } : {}) })) yield delta.content;
        })();
        const result = await writer.write({ thread, user: inflight.user, team, ref: inflight.ref, ...(replaces ? { replaces } : {}) }, deltas);
        if (parent) {
          const elapsedMs = clock.now() - inflight.startedAt;
          await threads.update(thread.channel, thread.threadTs, parentMessage({ ...parent, state: result.state === 'done' ? 'succeeded' : 'failed', elapsedMs, note: result.detail }));
        }
      } catch (error) {
        logger.warn(`Chat answer ${inflight.ref} could not be completed: ${errorSummary(error)}`);
      } finally {
        access.release(inflight.user, inflight.ref);
        await state.endInflight(inflight.ref);
      }
    });
  }
}
