import { z } from 'zod/v4';
import { ValidationError } from '../../shared/errors';
import {
	createQueueRequestSchema,
	canonicalTranslationLanguage,
	resourceNameSchema,
	transcriptionInputSchema,
	uuidSchema,
	type CreateQueueRequest,
	type TranscriptionInput,
} from '../../shared/schemas';
import { parseOrThrow } from '../../shared/validation';
import { imageRequestSchema, type ImageRequest } from '../messages/actions';
import { SUBCOMMANDS, type Subcommand } from '../messages/help';

/**
 * `/gpu <subcommand> ...` text to a typed command, or a problem plus the usage to show. Pure: no
 * Slack, no network. Everything that can be checked without the service is checked here.
 */

/** The slash command as registered in the manifest. */
export const COMMAND = '/gpu';

export type GpuCommand =
	| { kind: 'help' }
	| { kind: 'endpoints'; search?: string }
	| { kind: 'job'; endpoint: string; input: unknown }
	| { kind: 'job-form'; endpoint?: string }
	| { kind: 'transcribe'; input: TranscriptionInput }
	| { kind: 'status'; jobId: string }
	| { kind: 'cancel'; jobId: string }
	| { kind: 'queue'; request: CreateQueueRequest }
	| { kind: 'image'; request: ImageRequest }
	| { kind: 'chat'; message: string };

export type ParseResult =
	| { ok: true; command: GpuCommand }
	| { ok: false; problem: string; subcommand?: Subcommand };

/** Slack escapes these three in command text; undo it so JSON and URLs arrive as typed. */
export function unescapeSlackText(text: string): string {
	return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** Desktop clients turn straight quotes into typographic ones; JSON and our options need straight ones. */
function straightenQuotes(text: string): string {
	return text
		.replace(/[\u201C\u201D\u201E\u201F\u2033]/g, '"')
		.replace(/[\u2018\u2019\u201A\u201B\u2032]/g, "'");
}

/** Links arrive as `<https://x|label>` or `<https://x>` when Slack formats them. */
function unwrapLink(token: string): string {
	const match = /^<([^|>]+)(?:\|[^>]*)?>$/.exec(token);
	return match ? match[1] : token;
}

export function tokenize(text: string): string[] {
	const tokens: string[] = [];
	const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
	for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
		tokens.push(match[1] ?? match[2] ?? match[3]);
	}
	return tokens;
}

interface OptionSpec {
	/** `flag` takes no value; `word` one token; `text` all tokens up to the next option. */
	type: 'flag' | 'word' | 'text';
}

interface Options {
	positional: string[];
	values: Map<string, string | true>;
}

class UsageProblem extends Error {}

function parseOptions(tokens: string[], specs: Record<string, OptionSpec>): Options {
	const positional: string[] = [];
	const values = new Map<string, string | true>();
	for (let i = 0; i < tokens.length; i++) {
		const token = tokens[i];
		if (!token.startsWith('--') || token.length === 2) {
			positional.push(token);
			continue;
		}
		const [name, inline] = token.slice(2).split(/=(.*)/s, 2);
		const spec = specs[name];
		if (!spec) {
			const known = Object.keys(specs).map((option) => `--${option}`);
			throw new UsageProblem(
				`Unknown option --${name}.${known.length ? ` Options: ${known.join(', ')}.` : ''}`,
			);
		}
		if (values.has(name)) throw new UsageProblem(`--${name} is given twice.`);
		if (spec.type === 'flag') {
			if (inline !== undefined) throw new UsageProblem(`--${name} takes no value.`);
			values.set(name, true);
			continue;
		}
		if (inline !== undefined) {
			values.set(name, inline);
			continue;
		}
		const parts: string[] = [];
		while (
			i + 1 < tokens.length &&
			!tokens[i + 1].startsWith('--') &&
			(spec.type === 'text' || parts.length === 0)
		) {
			parts.push(tokens[++i]);
		}
		if (parts.length === 0) throw new UsageProblem(`--${name} needs a value.`);
		values.set(name, parts.join(' '));
	}
	return { positional, values };
}

/** Digits become numbers; anything else is passed on so the schema names the rule it breaks. */
function numeric(value: string | true | undefined): unknown {
	if (value === undefined) return undefined;
	if (value === true) return value;
	return /^-?\d+$/.test(value) ? Number(value) : value;
}

/** Describes a schema failure with the names the user typed (`--summary`) rather than API fields. */
function describeIssues(error: ValidationError, names: Record<string, string>): string {
	return error.issues
		.map((issue) => {
			const top = issue.field.split('.')[0];
			const name = names[top] ?? (issue.field || 'value');
			return `${name}${issue.received === undefined ? '' : ` ${issue.received}`} ${issue.rule}.`;
		})
		.join(' ');
}

function check<T extends z.ZodType>(
	schema: T,
	value: unknown,
	names: Record<string, string>,
): z.output<T> {
	try {
		return parseOrThrow(schema, value);
	} catch (error) {
		if (error instanceof ValidationError) throw new UsageProblem(describeIssues(error, names));
		throw error;
	}
}

/** Deeper JSON is refused: no endpoint needs it, and code that walks it recursively would overflow. */
export const MAX_JSON_DEPTH = 64;

/** How deep arrays and objects nest, counted without recursion; stops counting past `limit`. */
function jsonDepth(value: unknown, limit: number): number {
	let deepest = 0;
	const stack: [unknown, number][] = [[value, 0]];
	while (stack.length > 0) {
		const [item, depth] = stack.pop() as [unknown, number];
		if (typeof item !== 'object' || item === null) continue;
		deepest = Math.max(deepest, depth + 1);
		if (deepest > limit) return deepest;
		for (const child of Object.values(item)) stack.push([child, depth + 1]);
	}
	return deepest;
}

/** Parses JSON as a person types it in Slack, with a message that points at the problem. */
export function parseJsonInput(
	text: string,
): { ok: true; value: unknown } | { ok: false; problem: string } {
	const source = straightenQuotes(text).trim();
	let value: unknown;
	try {
		value = JSON.parse(source);
	} catch (error) {
		const reason =
			error instanceof Error ? error.message.replace(/^JSON\.parse: /, '') : 'it cannot be parsed';
		return { ok: false, problem: `The input is not valid JSON: ${reason}.` };
	}
	if (jsonDepth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH)
		return {
			ok: false,
			problem: `The input nests arrays and objects too deeply: at most ${MAX_JSON_DEPTH} levels.`,
		};
	return { ok: true, value };
}

/** With no input the job form opens (with the endpoint preselected when one was named). */
function parseJob(rest: string): GpuCommand {
	const match = /^(\S+)\s*([\s\S]*)$/.exec(rest.trim());
	if (!match) return { kind: 'job-form' };
	const endpoint = check(resourceNameSchema, match[1], { '': 'The endpoint name' });
	if (match[2].trim() === '') return { kind: 'job-form', endpoint };
	const json = parseJsonInput(match[2]);
	if (!json.ok) throw new UsageProblem(json.problem);
	return { kind: 'job', endpoint, input: json.value };
}

/** Options the user did not give are left out of the request rather than sent as undefined. */
function compact<T extends object>(value: T): T {
	const result = { ...value };
	for (const key of Object.keys(result) as (keyof T)[]) {
		if (result[key] === undefined) delete result[key];
	}
	return result;
}

function parseTranscribe(tokens: string[]): GpuCommand {
	const { positional, values } = parseOptions(tokens, {
		language: { type: 'word' },
		summary: { type: 'word' },
		translate: { type: 'word' },
		'word-timestamps': { type: 'flag' },
	});
	if (positional.length === 0)
		throw new UsageProblem(
			'Give the URL of the file to transcribe. For a file shared in Slack, use the message shortcut "Transcribe with GPU Cloud", or send the file to the app with the word transcribe.',
		);
	if (positional.length > 1)
		throw new UsageProblem('Give exactly one URL (one file per transcription).');
	const translate = values.get('translate');
	const languages =
		typeof translate === 'string'
			? translate.split(',').map((name) => canonicalTranslationLanguage(name) ?? name.trim())
			: undefined;
	const input = check(
		transcriptionInputSchema,
		{
			url: unwrapLink(positional[0]),
			language_code: values.get('language'),
			summarize: numeric(values.get('summary')),
			llm_translation: languages?.join(','),
			word_level_timestamps: values.has('word-timestamps') ? true : undefined,
		},
		{
			url: 'The URL',
			language_code: '--language',
			summarize: '--summary',
			llm_translation: '--translate',
			word_level_timestamps: '--word-timestamps',
		},
	);
	return { kind: 'transcribe', input: compact(input) };
}

function parseJobId(tokens: string[], kind: 'status' | 'cancel'): GpuCommand {
	if (tokens.length !== 1) throw new UsageProblem('Give one job id.');
	const jobId = check(uuidSchema, tokens[0].toLowerCase(), { '': 'The job id' });
	return { kind, jobId };
}

function parseQueue(tokens: string[]): GpuCommand {
	const { positional, values } = parseOptions(tokens, {
		'display-name': { type: 'text' },
		description: { type: 'text' },
	});
	if (positional.length === 0) throw new UsageProblem('Give the queue name.');
	if (positional.length > 1)
		throw new UsageProblem('The queue name is one word; put a readable name in --display-name.');
	const raw = {
		name: positional[0],
		display_name: values.get('display-name'),
		description: values.get('description'),
	};
	const request = check(createQueueRequestSchema, raw, {
		name: 'The queue name',
		display_name: '--display-name',
		description: '--description',
	});
	return { kind: 'queue', request: compact(request) };
}

function parseImage(tokens: string[]): GpuCommand {
	const { positional, values } = parseOptions(tokens, {
		width: { type: 'word' },
		height: { type: 'word' },
		seed: { type: 'word' },
		count: { type: 'word' },
	});
	const prompt = positional.join(' ').trim();
	if (prompt === '') throw new UsageProblem('Describe the image to generate.');
	const request = check(
		imageRequestSchema,
		{
			prompt,
			width: numeric(values.get('width')),
			height: numeric(values.get('height')),
			seed: numeric(values.get('seed')),
			count: values.has('count') ? numeric(values.get('count')) : 1,
		},
		{
			prompt: 'The prompt',
			width: '--width',
			height: '--height',
			seed: '--seed',
			count: '--count',
		},
	);
	return { kind: 'image', request: compact(request) };
}

function parseSubcommand(kind: Subcommand, rest: string): GpuCommand {
	const tokens = tokenize(straightenQuotes(rest));
	switch (kind) {
		case 'endpoints': {
			const search = rest.trim();
			return search ? { kind, search } : { kind };
		}
		case 'job':
			return parseJob(rest);
		case 'transcribe':
			return parseTranscribe(tokens);
		case 'status':
		case 'cancel':
			return parseJobId(tokens, kind);
		case 'queue':
			return parseQueue(tokens);
		case 'image':
			return parseImage(tokens);
		case 'chat': {
			const message = rest.trim();
			if (!message) throw new UsageProblem('Write the message to send.');
			return { kind, message };
		}
	}
}

function isSubcommand(name: string): name is Subcommand {
	return (SUBCOMMANDS as string[]).includes(name);
}

export function parseCommand(rawText: string): ParseResult {
	const text = unescapeSlackText(rawText).trim();
	const match = /^(\S+)\s*([\s\S]*)$/.exec(text);
	if (!match || match[1].toLowerCase() === 'help') return { ok: true, command: { kind: 'help' } };
	const kind = match[1].toLowerCase();
	if (!isSubcommand(kind)) return { ok: false, problem: `There is no subcommand "${match[1]}".` };
	try {
		return { ok: true, command: parseSubcommand(kind, match[2]) };
	} catch (error) {
		if (error instanceof UsageProblem)
			return { ok: false, problem: error.message, subcommand: kind };
		throw error;
	}
}
