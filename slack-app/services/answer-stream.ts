import type { Logger, webApi } from '@slack/bolt';
import type { Clock } from '../../shared/clock';
import { answerFooter, answerMessage, ANSWER_MAX_LENGTH } from '../messages/chat';
import { escapeText, truncate } from '../messages/format';
import type { ThreadRef } from '../model';
import { describeError, errorSummary } from './errors';
import { SlackAnswerLost } from './slack-client';
import { ANSWER_EVENT, type SlackThreads } from './slack-thread';

type WebClient = webApi.WebClient;

/** Where an answer goes, and for whom (native streams outside DMs name their recipient). */
export interface AnswerTarget {
	thread: ThreadRef;
	user: string;
	team: string;
	/** Identifies the answer in its message metadata. */
	ref: string;
	/** Regenerate: the earlier answer to write over, in place, instead of a new reply. */
	replaces?: string;
}

export interface AnswerResult {
	ts?: string;
	text: string;
	state: 'done' | 'failed';
	detail?: string;
}

/** Shows an answer as it grows; `show` is called at most about once per interval. */
interface AnswerSink {
	show(text: string, delta: string): Promise<void>;
	finish(text: string, state: 'done' | 'failed', detail?: string): Promise<string | undefined>;
}

/**
 * Slack's own streaming (chat.startStream / appendStream / stopStream), each piece sent as it comes.
 * None is sent twice: a piece whose answer was lost may or may not be in the message, so the answer
 * stops there (shown as stopped, with Regenerate) rather than show text twice or with a gap; a lost
 * stop is looked for (its metadata) before it is sent again.
 */
class NativeSink implements AnswerSink {
	private ts?: string;

	constructor(
		private readonly client: WebClient,
		private readonly threads: SlackThreads,
		private readonly target: AnswerTarget,
	) {}

	get hasStarted(): boolean {
		return this.ts !== undefined;
	}

	async show(_text: string, delta: string): Promise<void> {
		if (!delta) return;
		const { thread, team, user } = this.target;
		// Escaping is per character, so escaped deltas add up to the escaped answer.
		const markdown_text = escapeText(delta);
		if (this.ts) {
			await this.client.chat.appendStream({ channel: thread.channel, ts: this.ts, markdown_text });
			return;
		}
		const started = await this.client.chat.startStream({
			channel: thread.channel,
			thread_ts: thread.threadTs,
			recipient_team_id: team,
			recipient_user_id: user,
			markdown_text,
		});
		if (!started.ts) throw new Error('Slack did not return the stream timestamp.');
		this.ts = started.ts;
	}

	async finish(
		_text: string,
		state: 'done' | 'failed',
		detail?: string,
	): Promise<string | undefined> {
		const { ts, target } = this;
		if (!ts) return undefined;
		const mark = { eventType: ANSWER_EVENT, payload: { ref: target.ref } };
		return this.threads.writeMarked(target.thread, mark, async () => {
			await this.client.chat.stopStream({
				channel: target.thread.channel,
				ts,
				blocks: answerFooter(state, detail),
				metadata: { event_type: mark.eventType, event_payload: mark.payload },
			});
			return ts;
		});
	}
}

/** The fallback: one message, edited as the answer grows. */
class EditSink implements AnswerSink {
	private ts?: string;

	constructor(
		private readonly threads: SlackThreads,
		private readonly target: AnswerTarget,
	) {
		this.ts = target.replaces;
	}

	async show(text: string): Promise<void> {
		const message = answerMessage(text, 'streaming');
		if (this.ts) await this.threads.update(this.target.thread.channel, this.ts, message);
		else
			this.ts = await this.threads.reply(this.target.thread, message, {
				eventType: ANSWER_EVENT,
				payload: { ref: this.target.ref },
			});
	}

	async finish(
		text: string,
		state: 'done' | 'failed',
		detail?: string,
	): Promise<string | undefined> {
		const message = answerMessage(text, state, detail);
		if (this.ts) await this.threads.update(this.target.thread.channel, this.ts, message);
		else
			this.ts = await this.threads.reply(this.target.thread, message, {
				eventType: ANSWER_EVENT,
				payload: { ref: this.target.ref },
			});
		return this.ts;
	}
}

export interface AnswerWriterOptions {
	client: WebClient;
	threads: SlackThreads;
	clock: Clock;
	logger: Logger;
	/** Try Slack's native streaming first; off goes straight to edits. */
	nativeStreaming: boolean;
	/** At most one Slack call per interval while the answer grows. */
	intervalMs?: number;
}

/** Writes a streamed model answer into a thread, natively where the workspace allows it, else by edits. */
export class AnswerWriter {
	/** Learned on first use: a workspace that refuses chat.startStream keeps refusing it. */
	private nativeWorks: boolean;

	constructor(private readonly options: AnswerWriterOptions) {
		this.nativeWorks = options.nativeStreaming;
	}

	async write(target: AnswerTarget, deltas: AsyncIterable<string>): Promise<AnswerResult> {
		const { clock, logger } = this.options;
		const interval = this.options.intervalMs ?? 1000;
		// A native stream always starts a new message; an answer regenerated in place is edited.
		let sink: AnswerSink =
			this.nativeWorks && !target.replaces
				? new NativeSink(this.options.client, this.options.threads, target)
				: new EditSink(this.options.threads, target);
		let text = '';
		let unsent = '';
		let lastShown = Number.NEGATIVE_INFINITY;

		const show = async () => {
			if (!unsent) return;
			const delta = unsent;
			unsent = '';
			lastShown = clock.now();
			try {
				await sink.show(truncate(text, ANSWER_MAX_LENGTH), delta);
			} catch (error) {
				if (!(sink instanceof NativeSink) || sink.hasStarted) throw error;
				// A start whose answer was lost says nothing about the workspace: only this answer goes by edits.
				if (!(error instanceof SlackAnswerLost)) {
					logger.info(
						`Native streaming is not available here (${errorSummary(error)}); answering by message edits.`,
					);
					this.nativeWorks = false;
				}
				sink = new EditSink(this.options.threads, target);
				await sink.show(truncate(text, ANSWER_MAX_LENGTH), text);
			}
		};

		// A stream that never started (no text yet) ends as an ordinary message.
		const finisher = () =>
			sink instanceof NativeSink && !sink.hasStarted
				? new EditSink(this.options.threads, target)
				: sink;

		try {
			for await (const delta of deltas) {
				text += delta;
				unsent += delta;
				if (clock.now() - lastShown >= interval) await show();
			}
			await show();
			return { ts: await finisher().finish(text, 'done'), text, state: 'done' };
		} catch (error) {
			const detail = describeError(error);
			logger.warn(`A chat answer stopped: ${errorSummary(error)}`);
			let ts: string | undefined;
			try {
				ts = await finisher().finish(text, 'failed', detail);
			} catch (finishError) {
				logger.warn(`Could not mark the answer as failed: ${errorSummary(finishError)}`);
			}
			return { ts, text, state: 'failed', detail };
		}
	}
}
