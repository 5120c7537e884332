import { SUBCOMMANDS, USAGE, type Subcommand } from '../services/command-parser';
import type { SlackMessage } from '../model';
import { context, escapeText, section } from './format';

export function usageLine(command: string, subcommand: Subcommand): string {
	const usage = USAGE[subcommand];
	const example =
		usage.example === undefined ? '' : `\n_e.g._ \`${command} ${escapeText(usage.example)}\``;
	const note = usage.note === undefined ? '' : `\n_${escapeText(usage.note)}_`;
	return `\`${command} ${escapeText(usage.syntax)}\`${example}${note}`;
}

/** `/gpu`, `/gpu help`: every subcommand with an example, visible only to the asker. */
export function helpMessage(command: string): SlackMessage {
	const lines = SUBCOMMANDS.map((name) => `*${USAGE[name].summary}*\n${usageLine(command, name)}`);
	return {
		text: `GPU Cloud commands: ${SUBCOMMANDS.map((name) => `${command} ${name}`).join(', ')}`,
		blocks: [
			section(
				`*GPU Cloud* runs jobs, transcriptions, images and chat on GPUs. Results arrive in a thread under your request.`,
			),
			...lines.map((line) => section(line)),
			context(
				'Reply in a chat thread to continue the conversation. Buttons under each request cancel, regenerate or show the input.',
			),
		],
	};
}
