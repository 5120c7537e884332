import type { ChatRequest } from '../../shared/schemas';
import { answer, applyStop, completionTokens, limitReply } from './reply';

const WORDS_PER_CHUNK = 3;
/** Characters of tool-call arguments per streamed piece. */
const ARGUMENT_PIECE = 12;

interface TokenLogprob {
	token: string;
	logprob: number;
	bytes: number[];
}

interface Logprobs {
	content: (TokenLogprob & { top_logprobs: TokenLogprob[] })[];
	refusal: null;
}

/** One streamed chunk's choice: its delta, and its tokens' log probabilities when asked for. */
export interface StreamPiece {
	delta: object;
	logprobs?: Logprobs;
}

/** The answer in both wire forms: the whole message and the pieces of a stream. */
export interface PreparedReply {
	kind: 'text' | 'tools';
	message: object;
	finishReason: 'stop' | 'length' | 'tool_calls';
	completionTokens: number;
	logprobs: Logprobs | null;
	pieces: StreamPiece[];
}

function tokenLogprob(token: string, rank: number): TokenLogprob {
	// A fixed, made-up distribution: the chosen token is always the likeliest.
	return {
		token,
		logprob: -0.05 * (rank + 1) * (rank + 1),
		bytes: [...Buffer.from(token, 'utf8')],
	};
}

function logprobsOf(tokens: readonly string[], top: number): Logprobs {
	return {
		content: tokens.map((token) => ({
			...tokenLogprob(token, 0),
			top_logprobs: Array.from({ length: top }, (_, rank) =>
				tokenLogprob(rank === 0 ? token : `${token.trim()}${'~'.repeat(rank)}`, rank),
			),
		})),
		refusal: null,
	};
}

/**
 * Shapes the emulated answer as the dialect sends it. `n` is accepted and, as the real server does,
 * answered with one choice; `seed`, penalties, `logit_bias` and `user` change nothing in a template.
 */
export function prepareReply(request: ChatRequest): PreparedReply {
	const decided = answer(request);
	if (decided.kind === 'tools') {
		const toolCalls = decided.calls.map((call) => ({
			id: call.id,
			type: 'function',
			function: { name: call.name, arguments: call.arguments },
		}));
		const pieces: StreamPiece[] = decided.calls.flatMap((call, index) => {
			const argumentPieces: StreamPiece[] = [];
			for (let at = 0; at < call.arguments.length; at += ARGUMENT_PIECE) {
				argumentPieces.push({
					delta: {
						tool_calls: [
							{
								index,
								function: {
									arguments: call.arguments.slice(at, at + ARGUMENT_PIECE),
								},
							},
						],
					},
				});
			}
			return [
				{
					delta: {
						tool_calls: [
							{
								index,
								id: call.id,
								type: 'function',
								function: { name: call.name, arguments: '' },
							},
						],
					},
				},
				...argumentPieces,
			];
		});
		return {
			kind: 'tools',
			message: { role: 'assistant', content: null, tool_calls: toolCalls },
			finishReason: 'tool_calls',
			completionTokens: completionTokens(decided, []),
			logprobs: null,
			pieces,
		};
	}
	const limited = limitReply(
		applyStop(decided.text, request.stop),
		request.max_completion_tokens ?? request.max_tokens,
	);
	const { words } = limited;
	const top = request.logprobs ? (request.top_logprobs ?? 0) : -1;
	const tokens = words.map((word, index) => (index === 0 ? word : ` ${word}`));
	const pieces: StreamPiece[] = [];
	for (let i = 0; i < tokens.length; i += WORDS_PER_CHUNK) {
		const pieceTokens = tokens.slice(i, i + WORDS_PER_CHUNK);
		pieces.push({
			delta: { content: pieceTokens.join('') },
			...(top >= 0 ? { logprobs: logprobsOf(pieceTokens, top) } : {}),
		});
	}
	return {
		kind: 'text',
		message: { role: 'assistant', content: words.join(' ') },
		finishReason: limited.finishReason,
		completionTokens: completionTokens(decided, words),
		logprobs: top >= 0 ? logprobsOf(tokens, top) : null,
		pieces,
	};
}
