import type { Logger, webApi } from '@slack/bolt';
import type { Clock } from '../../shared/clock';
import {
	answerFooter,
	answerMessage,
	answerTaskMessage,
	ANSWER_MAX_LENGTH,
} from '../messages/chat';
import { escapeText } from '../messages/format';
import type { SlackMessage, ThreadRef } from '../model';
import { describeError, errorSummary, slackErrorCode } from '../slack/errors';
import { SlackAnswerLost } from '../slack/slack-client';
import { ANSWER_EVENT, type SlackThreads } from '../slack/slack-thread';

type WebClient = webApi.WebClient;
/** A chunk of Slack's stream methods, as the installed Web API client types them. */
type StreamChunk = NonNullable<webApi.ChatAppendStreamArguments['chunks']>[number];

/**
 * Work before or beside the answer's text (the model starting), shown as a task in Slack's native
 * stream (a `task_update` chunk: https://docs.slack.dev/reference/methods/chat.appendStream).
 */
export interface AnswerTask {
	id: string;
	title: string;
	status: 'in_progress' | 'complete';
}

/** What an answer is written from: pieces of its text, and its tasks as they change. */
export type AnswerPiece = string | AnswerTask;

function taskChunk(task: AnswerTask): StreamChunk {
	return { type: 'task_update', id: task.id, title: task.title, status: task.status };
}

/** Where an answer goes, and for whom (native streams outside DMs name their recipient). */
export interface AnswerTarget {
	thread: ThreadRef;
	user: string;
	team: string;
	/** Identifies the answer in its message metadata. */
	ref: string;
	/** Regenerate: the earlier answer to write over, in place, instead of a new reply. */
	replaces?: string;
	/** A later message of a long answer: read back together with the one before. */
	continues?: boolean;
}

/** What an answer's message carries in its metadata: its ref, and whether it continues the one before. */
function answerMark(target: AnswerTarget) {
	return {
		eventType: ANSWER_EVENT,
		payload: { ref: target.ref, ...(target.continues ? { continues: true } : {}) },
	};
}

export interface AnswerResult {
	ts?: string;
	text: string;
	/** `stopped`: the person stopped it (Slack's stop button), and it ends where it was. */
	state: 'done' | 'failed' | 'stopped';
	detail?: string;
}

/** Slack ended the stream itself (its stop button): the answer stops where it is. */
class StoppedInSlack extends Error {}

/** Shows an answer as it grows; `show` is called at most about once per interval. */
interface AnswerSink {
	show(text: string, delta: string): Promise<void>;
	/** A task changed. */
	task(task: AnswerTask): Promise<void>;
	finish(text: string, state: FinalState, detail?: string): Promise<string | undefined>;
}

type FinalState = 'done' | 'failed' | 'continued' | 'stopped';

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
		// Escaping is per character, so escaped deltas add up to the escaped answer; a message holds at
		// most ANSWER_MAX_LENGTH escaped characters, under the 12,000 Slack takes per call.
		await this.send({ markdown_text: escapeText(delta) });
	}

	async task(task: AnswerTask): Promise<void> {
		await this.send({ chunks: [taskChunk(task)] });
	}

	/** Starts the stream with its first content, or appends to it. */
	private async send(
		content: { markdown_text: string } | { chunks: StreamChunk[] },
	): Promise<void> {
		const { thread, team, user } = this.target;
		if (this.ts) {
			try {
				await this.client.chat.appendStream({ channel: thread.channel, ts: this.ts, ...content });
			} catch (error) {
				if (slackErrorCode(error) === 'message_not_in_streaming_state') throw new StoppedInSlack();
				throw error;
			}
			return;
		}
		const started = await this.client.chat.startStream({
			channel: thread.channel,
			thread_ts: thread.threadTs,
			recipient_team_id: team,
			recipient_user_id: user,
			...('chunks' in content ? { task_display_mode: 'timeline' } : {}),
			...content,
		});
		if (!started.ts) throw new Error('Slack did not return the stream timestamp.');
		this.ts = started.ts;
	}

	async finish(text: string, state: FinalState, detail?: string): Promise<string | undefined> {
		const { ts, target } = this;
		if (!ts) return undefined;
		const mark = answerMark(target);
		return this.threads.writeMarked(target.thread, mark, async () => {
			try {
				await this.client.chat.stopStream({
					channel: target.thread.channel,
					ts,
					blocks: answerFooter(state, detail),
					metadata: { event_type: mark.eventType, event_payload: mark.payload },
				});
			} catch (error) {
				// Slack stopped the stream itself: the message is an ordinary one now, edited to its end.
				if (slackErrorCode(error) !== 'message_not_in_streaming_state') throw error;
				await this.threads.update(target.thread.channel, ts, answerMessage(text, state, detail));
			}
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
		await this.write(answerMessage(text, 'streaming'));
	}

	/** A task in progress is the message until the answer's text replaces it. */
	async task(task: AnswerTask): Promise<void> {
		if (task.status === 'in_progress') await this.write(answerTaskMessage(task.title));
	}

	async finish(text: string, state: FinalState, detail?: string): Promise<string | undefined> {
		await this.write(answerMessage(text, state, detail));
		return this.ts;
	}

	private async write(message: SlackMessage): Promise<void> {
		if (this.ts) await this.threads.update(this.target.thread.channel, this.ts, message);
		else this.ts = await this.threads.reply(this.target.thread, message, answerMark(this.target));
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

	/**
	 * Writes the answer as its pieces come (text, and tasks shown at once, after the text before
	 * them); `stop` ends it where it is (the person stopped it).
	 */
	async write(
		target: AnswerTarget,
		pieces: AsyncIterable<AnswerPiece>,
		stop?: AbortSignal,
	): Promise<AnswerResult> {
		const { clock, logger } = this.options;
		const interval = this.options.intervalMs ?? 1000;
		// A native stream always starts a new message; an answer regenerated in place is edited.
		const sinkFor = (partTarget: AnswerTarget): AnswerSink =>
			this.nativeWorks && !partTarget.replaces
				? new NativeSink(this.options.client, this.options.threads, partTarget)
				: new EditSink(this.options.threads, partTarget);
		let partTarget = target;
		let sink = sinkFor(target);
		let parts = 1;
		let text = '';
		/** Where the current message's part of the answer starts, and how much of it Slack has. */
		let partStart = 0;
		let partSent = 0;
		let lastShown = Number.NEGATIVE_INFINITY;

		/** A native stream that could not start: this answer goes by edits (and later ones too, unless the answer was lost). */
		const fallBack = (error: unknown) => {
			if (!(sink instanceof NativeSink) || sink.hasStarted) throw error;
			// A start whose answer was lost says nothing about the workspace: only this answer goes by edits.
			if (!(error instanceof SlackAnswerLost)) {
				logger.info(
					`Native streaming is not available here (${errorSummary(error)}); answering by message edits.`,
				);
				this.nativeWorks = false;
			}
			sink = new EditSink(this.options.threads, partTarget);
		};

		const send = async (part: string, delta: string) => {
			try {
				await sink.show(part, delta);
			} catch (error) {
				fallBack(error);
				await sink.show(part, part);
			}
		};

		const sendTask = async (task: AnswerTask) => {
			try {
				await sink.task(task);
			} catch (error) {
				fallBack(error);
				await sink.task(task);
			}
		};

		const show = async () => {
			for (;;) {
				const part = text.slice(partStart);
				if (part.length === partSent) return;
				lastShown = clock.now();
				const end = partEnd(part, partSent);
				if (end > partSent) await send(part.slice(0, end), part.slice(partSent, end));
				partSent = end;
				if (end === part.length) return;
				// The message is full: it says so, and the answer goes on in a new one.
				await sink.finish(part.slice(0, end), 'continued');
				parts += 1;
				partStart += end;
				partSent = 0;
				partTarget = {
					...target,
					ref: `${target.ref}:${parts}`,
					replaces: undefined,
					continues: true,
				};
				sink = sinkFor(partTarget);
			}
		};

		// A stream that never started (no text yet) ends as an ordinary message.
		const finisher = () =>
			sink instanceof NativeSink && !sink.hasStarted
				? new EditSink(this.options.threads, partTarget)
				: sink;

		try {
			for await (const piece of untilAborted(pieces, stop)) {
				if (typeof piece !== 'string') {
					await show();
					await sendTask(piece);
					continue;
				}
				text += piece;
				if (clock.now() - lastShown >= interval) await show();
			}
			if (stop?.aborted) throw new StoppedInSlack();
			await show();
			return {
				ts: await finisher().finish(text.slice(partStart), 'done'),
				text,
				state: 'done',
			};
		} catch (error) {
			if (error instanceof StoppedInSlack) {
				const shown = text.slice(partStart, partStart + partSent);
				return { ts: await finisher().finish(shown, 'stopped'), text, state: 'stopped' };
			}
			const detail = describeError(error);
			logger.warn(`A chat answer stopped: ${errorSummary(error)}`);
			let ts: string | undefined;
			try {
				ts = await finisher().finish(text.slice(partStart, partStart + partSent), 'failed', detail);
			} catch (finishError) {
				logger.warn(`Could not mark the answer as failed: ${errorSummary(finishError)}`);
			}
			return { ts, text, state: 'failed', detail };
		}
	}
}

/**
 * How much of a message's part (raw text) one message holds: at most ANSWER_MAX_LENGTH characters
 * once escaped, cut after a line break or space near the end when there is one, and never before
 * `sent` (what Slack already shows).
 */
function partEnd(part: string, sent: number): number {
	let escaped = 0;
	let end = 0;
	while (end < part.length) {
		const next = escapeText(part[end]).length;
		if (escaped + next > ANSWER_MAX_LENGTH) break;
		escaped += next;
		end++;
	}
	if (end === part.length) return end;
	const window = part.slice(Math.max(sent, end - 500), end);
	const breakAt = Math.max(window.lastIndexOf('\n'), window.lastIndexOf(' '));
	if (breakAt > 0) return Math.max(sent, end - 500) + breakAt + 1;
	// Not between the two halves of an emoji.
	return /[\uDC00-\uDFFF]/.test(part[end]) && end - 1 > sent ? end - 1 : end;
}

/**
 * The pieces until `stop` is aborted: a model stream that has gone quiet is left at once, not when
 * its next piece comes, and closed (the workload stops generating).
 */
async function* untilAborted<T>(
	pieces: AsyncIterable<T>,
	stop: AbortSignal | undefined,
): AsyncGenerator<T> {
	const iterator = pieces[Symbol.asyncIterator]();
	const stopped = new Promise<'stopped'>((resolve) => {
		if (stop?.aborted) resolve('stopped');
		stop?.addEventListener('abort', () => resolve('stopped'), { once: true });
	});
	try {
		for (;;) {
			const next = await Promise.race([iterator.next(), stopped]);
			if (next === 'stopped' || next.done) return;
			yield next.value;
		}
	} finally {
		void iterator.return?.();
	}
}
