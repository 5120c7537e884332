import type { SlackMessage } from '../model';
import { MAX_IMAGES_PER_REQUEST } from './actions';
import { context, escapeText, section } from './format';

/** The `/gpu` subcommands with usage text; `help` and the bare job form have none. */
export type Subcommand =
	| 'endpoints'
	| 'job'
	| 'transcribe'
	| 'status'
	| 'cancel'
	| 'queue'
	| 'image'
	| 'chat';

export interface Usage {
	syntax: string;
	/** Runs as written against the embedded emulator (test/slack/help-examples.test.ts runs each). */
	example?: string;
	/** Where the arguments come from, for subcommands whose example cannot be typed ahead (a job id). */
	note?: string;
	summary: string;
}

export const USAGE: Record<Subcommand, Usage> = {
	endpoints: {
		syntax: 'endpoints [search]',
		example: 'endpoints speech',
		summary: 'Browse the inference endpoint catalogue.',
	},
	job: {
		syntax: 'job <endpoint> [json input]',
		example: 'job echo {"prompt": "hello"}',
		summary: 'Create a job (without input, a form opens).',
	},
	transcribe: {
		syntax:
			'transcribe <url> [--language fr] [--summary 100] [--translate german,spanish] [--word-timestamps]',
		example: 'transcribe https://example.com/talk.mp3 --summary 100 --translate german',
		summary: 'Transcribe an audio or video file from a signed URL.',
		note: 'A file shared in Slack: its message\'s shortcut "Transcribe with GPU Cloud", or send it to the app (DM or thread) with the word transcribe.',
	},
	status: {
		syntax: 'status <job id>',
		note: "The job id is under each job's message.",
		summary: 'Show where a job is.',
	},
	cancel: {
		syntax: 'cancel <job id>',
		note: "The job id is under each job's message; its Cancel button does the same.",
		summary: 'Cancel a job.',
	},
	queue: {
		syntax: 'queue <name> [--display-name <text>] [--description <text>]',
		example: 'queue render-jobs --display-name Render jobs',
		summary: 'Create a queue in the configured project.',
	},
	image: {
		syntax: `image <prompt> [--width 1024] [--height 1024] [--seed 42] [--count 1-${MAX_IMAGES_PER_REQUEST}]`,
		example: 'image a red fox in the snow --count 2',
		summary: 'Generate images into the thread.',
	},
	chat: {
		syntax: 'chat <message>',
		example: 'chat explain CUDA streams briefly',
		summary: 'Ask the model; reply in the thread to continue.',
	},
};

export const SUBCOMMANDS = Object.keys(USAGE) as Subcommand[];

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
