import type { Subcommand } from './help';
import type { SlackMessage } from '../model';
import { context, escapeText, mention, section } from './format';
import { usageLine } from './help';

/** A mistake in what the user typed: the problem, then how to write it. Sent ephemerally. */
export function usageErrorMessage(
	command: string,
	problem: string,
	subcommand?: Subcommand,
): SlackMessage {
	const usage = subcommand
		? usageLine(command, subcommand)
		: `See \`${command} help\` for every subcommand.`;
	return {
		text: `${escapeText(problem)} Usage: ${subcommand ? usageLine(command, subcommand) : `${command} help`}`,
		blocks: [section(`:warning: ${escapeText(problem)}`), section(usage)],
	};
}

/** The service refused or failed: show its own words (problem detail, else title, else status). */
export function serviceErrorMessage(action: string, detail: string): SlackMessage {
	return {
		text: `${escapeText(action)} failed: ${escapeText(detail)}`,
		blocks: [section(`:x: *${escapeText(action)} failed.*\n${escapeText(detail)}`)],
	};
}

/** `contact` comes from the app's configuration and may be a mention (`<@U123>`), so it is not escaped. */
export function deniedMessage(reason: string, hint: string, contact: string): SlackMessage {
	return {
		text: `${escapeText(reason)} ${escapeText(hint)} ${contact}.`,
		blocks: [
			section(`:no_entry: ${escapeText(reason)}`),
			context(`${escapeText(hint)} ${contact}.`),
		],
	};
}

/** Only the person who started a job may cancel it; the owner comes from the job's sealed metadata. */
export function notOwnerMessage(owner: string, jobId: string): SlackMessage {
	const text = `Only ${mention(owner)}, who started job ${escapeText(jobId)}, can cancel it.`;
	return { text, blocks: [section(text)] };
}

export function noticeMessage(text: string): SlackMessage {
	return { text: escapeText(text), blocks: [section(escapeText(text))] };
}

export type NonChatRequestKind = 'job' | 'transcribe' | 'image' | 'queue';

const NOT_READ: Record<NonChatRequestKind, string> = {
	job: 'This thread shows a job and its result; the app does not read replies here. The buttons above cancel the job or show its input.',
	transcribe:
		'This thread shows a transcription and its result; the app does not read replies here. The buttons above cancel it or show its input.',
	image:
		'This thread shows generated images; the app does not read replies here. Press Regenerate above for another take.',
	queue: 'This thread shows a queue being created; the app does not read replies here.',
};

/** A reply in the thread of a request other than a chat: what the thread is for, and where to talk instead. */
export function threadRepliesNotReadMessage(
	command: string,
	kind: NonChatRequestKind,
): SlackMessage {
	const elsewhere = kind === 'image' ? `\`${command} image <prompt>\` asks for new images; ` : '';
	const howTo = escapeText(
		`${elsewhere}to talk to the model, start \`${command} chat <message>\` and reply in its thread.`,
	);
	return {
		text: `${escapeText(NOT_READ[kind])} ${howTo}`,
		blocks: [
			section(`:speech_balloon: ${escapeText(NOT_READ[kind])}`),
			context(howTo.charAt(0).toUpperCase() + howTo.slice(1)),
		],
	};
}
