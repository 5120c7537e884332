import {
	contentText,
	type ChatRequest,
	type ChatRequestMessage,
	type ChatTool,
} from '../../shared/schemas';
import { hashOf, wordsOf } from '../determinism';
import { exampleFor } from './json-schema';

/** Tokens a chat template adds around each message. */
const TOKENS_PER_MESSAGE = 3;
/** Characters per token for JSON (tool definitions and arguments). */
const CHARS_PER_TOKEN = 4;

/** What the emulated model answers: text, or calls of the offered tools. */
export type Answer = { kind: 'text'; text: string } | { kind: 'tools'; calls: PlannedCall[] };

export interface PlannedCall {
	id: string;
	name: string;
	/** JSON text, as the dialect carries it. */
	arguments: string;
}

function quote(text: string, words: number): string {
	const all = wordsOf(text);
	return all.length > words ? `${all.slice(0, words).join(' ')}…` : all.join(' ');
}

function messageText(message: ChatRequestMessage): string {
	return contentText(message.content);
}

/** Words stand in for tokens: close enough for usage figures and limits. */
export function promptTokens(request: Pick<ChatRequest, 'messages' | 'tools'>): number {
	const messages = request.messages.reduce((sum, message) => {
		const calls =
			message.role === 'assistant'
				? JSON.stringify(message.tool_calls ?? []).length / CHARS_PER_TOKEN
				: 0;
		return sum + wordsOf(messageText(message)).length + Math.ceil(calls) + TOKENS_PER_MESSAGE;
	}, 0);
	return messages + Math.ceil(JSON.stringify(request.tools ?? []).length / CHARS_PER_TOKEN);
}

export function completionTokens(answer: Answer, words: readonly string[]): number {
	if (answer.kind === 'text') return words.length;
	return answer.calls.reduce(
		(sum, call) => sum + Math.ceil((call.name.length + call.arguments.length) / CHARS_PER_TOKEN),
		0,
	);
}

/** The tool results that answer the assistant's latest tool calls, by tool name. */
function latestToolResults(
	messages: readonly ChatRequestMessage[],
): { name: string; result: string }[] {
	const results: { name: string; result: string }[] = [];
	let index = messages.length - 1;
	for (; index >= 0 && messages[index]?.role === 'tool'; index--);
	const caller = messages[index];
	const names = new Map(
		caller?.role === 'assistant'
			? (caller.tool_calls ?? []).map((call) => [call.id, call.function.name])
			: [],
	);
	for (const message of messages.slice(index + 1)) {
		if (message.role === 'tool')
			results.push({
				name: names.get(message.tool_call_id) ?? 'tool',
				result: messageText(message),
			});
	}
	return results;
}

/**
 * A readable, deterministic answer that depends on the conversation: it quotes the last user
 * message, counts the earlier turns, mentions the system instruction and, after tool calls,
 * reports what the tools returned.
 */
export function composeReply(messages: readonly ChatRequestMessage[]): string {
	const userIndex = messages.map((m) => m.role).lastIndexOf('user');
	const last = messages[userIndex >= 0 ? userIndex : messages.length - 1];
	const content = last ? messageText(last).trim() : '';
	const earlier = messages
		.slice(0, Math.max(0, userIndex))
		.filter((m) => m.role === 'user' || m.role === 'assistant');
	const firstUser = earlier.find((m) => m.role === 'user');
	const system = messages.find((m) => m.role === 'system' && messageText(m).trim().length > 0);
	const words = wordsOf(content).length;
	const results = latestToolResults(messages);
	const parts = [
		content ? `You wrote: "${quote(content, 24)}".` : 'You sent an empty message.',
		`That message has ${words} word${words === 1 ? '' : 's'}${content.endsWith('?') ? ' and asks a question' : ''}.`,
		earlier.length === 0
			? 'This is the first turn of our conversation.'
			: `Before it came ${earlier.length} earlier message${earlier.length === 1 ? '' : 's'}${firstUser ? `, starting with "${quote(messageText(firstUser), 8)}"` : ''}.`,
	];
	for (const { name, result } of results)
		parts.push(`The tool ${name} returned: "${quote(result, 40)}".`);
	if (system) parts.push(`I am following the instruction "${quote(messageText(system), 12)}".`);
	parts.push(
		'This answer comes from the GPU Cloud emulator, so it follows a template instead of a language model.',
	);
	return parts.join(' ');
}

const STOP_WORDS = new Set(
	'about above after again also could does each from have here into just like make more most much only over please some such than that their them then there these they this those tool tools through using very want what when where which while with would your'.split(
		' ',
	),
);

/** Lower-case word stems of at least four letters: what a prompt and a tool description share. */
function stems(text: string): Set<string> {
	const spaced = text.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
	return new Set(
		spaced
			.split(/[^a-z0-9]+/)
			.filter((word) => word.length >= 4 && !STOP_WORDS.has(word))
			.map((word) => word.replace(/(ies|es|s)$/, (ending) => (ending === 'ies' ? 'y' : ''))),
	);
}

function mentions(prompt: string, tool: ChatTool): boolean {
	const lower = prompt.toLowerCase();
	const name = tool.function.name.toLowerCase();
	return lower.includes(name) || lower.includes(name.replace(/[_-]+/g, ' '));
}

function overlap(prompt: Set<string>, tool: ChatTool): number {
	const toolStems = stems(
		`${tool.function.name.replace(/[_-]+/g, ' ')} ${tool.function.description ?? ''}`,
	);
	return [...prompt].filter((stem) => toolStems.has(stem)).length;
}

const ASKS_FOR_A_TOOL = /\b(use|call|run|invoke|with)\b.{0,40}\btools?\b/i;

/**
 * Which tools the emulated model calls, deterministically: a named tool_choice always; none after
 * tool results (it answers with them) unless a call is required; otherwise the tools the prompt
 * names, else the one sharing the most words (at least one) with the prompt, else (when the prompt asks for a
 * tool or a call is required) the best match.
 */
function chooseTools(request: ChatRequest, prompt: string): ChatTool[] {
	const tools = request.tools ?? [];
	const choice = request.tool_choice ?? 'auto';
	if (tools.length === 0 || choice === 'none') return [];
	if (typeof choice === 'object')
		return tools.filter((tool) => tool.function.name === choice.function.name);
	const required = choice === 'required';
	if (!required && request.messages.at(-1)?.role === 'tool') return [];
	const named = tools.filter((tool) => mentions(prompt, tool));
	const single = request.parallel_tool_calls === false;
	if (named.length > 0) return single ? named.slice(0, 1) : named;
	const promptStems = stems(prompt);
	const ranked = tools
		.map((tool) => ({ tool, score: overlap(promptStems, tool) }))
		.sort((a, b) => b.score - a.score);
	const best = ranked[0];
	if (!best) return [];
	if (best.score >= 1 || required || ASKS_FOR_A_TOOL.test(prompt)) return [best.tool];
	return [];
}

/** Decides the answer: tool calls whose arguments satisfy each tool's parameters, or text. */
export function answer(request: ChatRequest): Answer {
	const userMessage = [...request.messages].reverse().find((message) => message.role === 'user');
	const prompt = userMessage ? messageText(userMessage).trim() : '';
	const chosen = chooseTools(request, prompt);
	if (chosen.length > 0) {
		const seed = JSON.stringify(request.messages);
		const argumentText = quote(prompt, 16).replace(/…$/, '');
		return {
			kind: 'tools',
			calls: chosen.map((tool, index) => ({
				id: `call_${hashOf(`${seed}|${tool.function.name}|${index}`).toString(36)}${index}`,
				name: tool.function.name,
				arguments: JSON.stringify(
					exampleFor(tool.function.parameters ?? { type: 'object', properties: {} }, argumentText),
				),
			})),
		};
	}
	const reply = composeReply(request.messages);
	const format = request.response_format;
	if (format?.type === 'json_object')
		return {
			kind: 'text',
			text: JSON.stringify({ answer: wordsOf(reply).join(' ') }),
		};
	if (format?.type === 'json_schema') {
		return {
			kind: 'text',
			text: JSON.stringify(
				exampleFor(
					format.json_schema.schema ?? { type: 'object' },
					quote(reply, 16).replace(/…$/, ''),
				),
			),
		};
	}
	return { kind: 'text', text: reply };
}

/** Ends the text before the first stop sequence, as a server does (the sequence itself is not returned). */
export function applyStop(text: string, stop: ChatRequest['stop']): string {
	const sequences = stop == null ? [] : typeof stop === 'string' ? [stop] : stop;
	const cut = Math.min(
		...sequences.map((sequence) => text.indexOf(sequence)).filter((index) => index >= 0),
	);
	return Number.isFinite(cut) ? text.slice(0, cut) : text;
}

/** Cuts the reply to `maxTokens` words; `length` tells the caller it was cut. */
export function limitReply(
	reply: string,
	maxTokens: number | null | undefined,
): { words: string[]; finishReason: 'stop' | 'length' } {
	const words = wordsOf(reply);
	if (maxTokens == null || words.length <= maxTokens) return { words, finishReason: 'stop' };
	return { words: words.slice(0, maxTokens), finishReason: 'length' };
}
