import { randomUUID } from 'node:crypto';
import { MAX_STOP_SEQUENCES, chatRequestSchema, type ChatRequest } from '../../shared/schemas';
import type { Faults } from '../faults';
import { gatewayRefusal } from '../gateway';
import {
	describeIssues,
	json,
	problem,
	STREAMED,
	type Reply,
	type RequestContext,
	type RouteResult,
} from '../http';
import type { ResolvedOptions } from '../options';
import { streamFault } from '../request-faults';
import { promptTokens } from './reply';
import { prepareReply, type PreparedReply } from './wire';

export const CHAT_PREFIX = '/workloads/chat';
export const CHAT_MODEL_ID = 'emulator/chat-8b-instruct';
export const MAX_INPUT_TOKENS = 4096;
export const MAX_TOTAL_TOKENS = 8192;
/** Pause between streamed chunks, so a stream really arrives in pieces. */
const CHUNK_PAUSE_MS = 5;

interface ChatDeps {
	options: ResolvedOptions;
	faults: Faults;
}

function validation(error: string): Reply {
	return json(422, { error, error_type: 'validation' });
}

/** The text generation workload: an OpenAI-style chat server with SSE streaming. */
export function createChatRoutes(deps: ChatDeps) {
	const { options, faults } = deps;
	const { clock } = options;
	const createdAt = Math.floor(clock.now() / 1000);
	/** When the replica started by the first request is ready (scaled to zero until then). */
	let readyAt: number | undefined = options.chatColdStartMs > 0 ? undefined : 0;

	/** While no replica is ready the gateway answers for the workload: 503, problem details. */
	function coldStart(ctx: RequestContext): Reply | undefined {
		readyAt ??= clock.now() + options.chatColdStartMs;
		if (clock.now() >= readyAt) return undefined;
		return problem(
			503,
			'No replica of this workload is ready yet: one is starting (scaled up from zero).',
			ctx.path,
			{ 'retry-after': String(Math.ceil((readyAt - clock.now()) / 1000)) },
		);
	}

	function limits(request: ChatRequest, prompt: number): Reply | undefined {
		if (prompt > MAX_INPUT_TOKENS) {
			return validation(
				`Input validation error: inputs tokens (${prompt}) must be at most ${MAX_INPUT_TOKENS}.`,
			);
		}
		const maxTokens = request.max_completion_tokens ?? request.max_tokens;
		if (maxTokens != null && prompt + maxTokens > MAX_TOTAL_TOKENS) {
			return validation(
				`Input validation error: inputs tokens + max_tokens must be at most ${MAX_TOTAL_TOKENS}; given ${prompt} inputs tokens and ${maxTokens} max_tokens.`,
			);
		}
		return undefined;
	}

	async function stream(
		ctx: RequestContext,
		request: ChatRequest,
		reply: PreparedReply,
		usage: object,
	) {
		const { res } = ctx;
		const id = `chatcmpl-${randomUUID()}`;
		const created = Math.floor(clock.now() / 1000);
		const includeUsage = request.stream_options?.include_usage === true;
		const event = (choices: object[], extra: object = {}) =>
			`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: CHAT_MODEL_ID, choices, ...(includeUsage ? { usage: null } : {}), ...extra })}\n\n`;
		const chunk = (delta: object, finish: string | null, extra: object = {}) =>
			event([{ index: 0, delta, logprobs: null, finish_reason: finish, ...extra }]);
		res.writeHead(200, {
			'content-type': 'text/event-stream',
			'cache-control': 'no-cache',
			connection: 'keep-alive',
		});
		const { pieces } = reply;
		const fault = streamFault(faults, ctx.scripted);
		ctx.fault = fault;
		const failAt = fault ? Math.floor(pieces.length / 2) : -1;
		const gone = () => res.destroyed || res.writableEnded;
		res.write(chunk({ role: 'assistant', content: reply.kind === 'tools' ? null : '' }, null));
		for (let index = 0; index < pieces.length; index++) {
			await clock.sleep(CHUNK_PAUSE_MS);
			if (gone()) return;
			if (index === failAt && fault === 'stream-cut') {
				// The workload's node is lost: the gateway ends the response, with no word of why.
				res.end();
				return;
			}
			if (index === failAt) {
				// As the real server does: an error event after a 200, then the stream ends without [DONE].
				res.end(
					`data: ${JSON.stringify({ error: { message: 'Request failed during generation: the emulated GPU stopped responding.', type: 'generation' }, error_type: 'generation' })}\n\n`,
				);
				return;
			}
			const piece = pieces[index];
			if (piece)
				res.write(chunk(piece.delta, null, piece.logprobs ? { logprobs: piece.logprobs } : {}));
			if (index === 0) res.write(': keep-alive\n\n');
		}
		if (gone()) return;
		if (includeUsage) {
			// OpenAI's form: `usage: null` on every chunk, then a last chunk with no choices that carries it.
			res.write(chunk({}, reply.finishReason));
			res.write(event([], { usage }));
		} else {
			res.write(
				event([{ index: 0, delta: {}, logprobs: null, finish_reason: reply.finishReason }], {
					usage,
				}),
			);
		}
		res.end('data: [DONE]\n\n');
	}

	async function completions(ctx: RequestContext): Promise<RouteResult> {
		const body = await ctx.readJson();
		if (!body.ok) return validation(`Failed to parse the request body as JSON: ${body.reason}`);
		const parsed = chatRequestSchema.safeParse(body.value);
		if (!parsed.success) return validation(describeIssues(parsed.error, body.value));
		const request = parsed.data;
		const prompt = promptTokens(request);
		const refusal = limits(request, prompt);
		if (refusal) return refusal;
		const reply = prepareReply(request);
		const usage = {
			prompt_tokens: prompt,
			completion_tokens: reply.completionTokens,
			total_tokens: prompt + reply.completionTokens,
		};
		if (request.stream) {
			await stream(ctx, request, reply, usage);
			return STREAMED;
		}
		return json(200, {
			id: `chatcmpl-${randomUUID()}`,
			object: 'chat.completion',
			created: Math.floor(clock.now() / 1000),
			model: CHAT_MODEL_ID,
			system_fingerprint: '3.0.0-emulator',
			choices: [
				{
					index: 0,
					message: reply.message,
					logprobs: reply.logprobs,
					finish_reason: reply.finishReason,
				},
			],
			usage,
		});
	}

	const apiKeys = options.organizations.map((org) => org.apiKey);
	return async function handle(ctx: RequestContext): Promise<RouteResult> {
		const refusal = gatewayRefusal(ctx, apiKeys, options.workloadAuth);
		if (refusal) return refusal;
		const path = ctx.path.slice(CHAT_PREFIX.length);
		const starting = coldStart(ctx);
		if (starting) return starting;
		if (path === '/v1/chat/completions') {
			return ctx.method === 'POST'
				? completions(ctx)
				: json(405, { error: 'Use POST.', error_type: 'validation' }, { allow: 'POST' });
		}
		if (ctx.method !== 'GET') return json(404, { error: `Not found: ${ctx.method} ${ctx.path}` });
		if (path === '/health') return json(200, { status: 'healthy' });
		if (path === '/info') {
			return json(200, {
				model_id: CHAT_MODEL_ID,
				model_sha: null,
				model_dtype: 'bfloat16',
				model_device_type: 'cuda',
				max_concurrent_requests: 128,
				max_best_of: 2,
				max_stop_sequences: MAX_STOP_SEQUENCES,
				max_input_tokens: MAX_INPUT_TOKENS,
				max_total_tokens: MAX_TOTAL_TOKENS,
				max_client_batch_size: 4,
				router: 'text-generation-router',
				version: '3.0.0-emulator',
			});
		}
		if (path === '/v1/models') {
			return json(200, {
				object: 'list',
				data: [{ id: CHAT_MODEL_ID, object: 'model', created: createdAt, owned_by: 'emulator' }],
			});
		}
		return json(404, { error: `Not found: ${ctx.path}` });
	};
}
