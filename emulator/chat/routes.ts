import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { chatRequestSchema, type ChatRequest } from '../../shared/schemas';
import type { Faults } from '../faults';
import { gatewayRefusal } from '../gateway';
import { describeIssues, json, STREAMED, type Reply, type RequestContext, type RouteResult } from '../http';
import type { ResolvedOptions } from '../options';
import { composeReply, limitReply, promptTokens } from './reply';

export const CHAT_PREFIX = '/workloads/chat';
export const CHAT_MODEL_ID = 'emulator/chat-8b-instruct';
export const MAX_INPUT_TOKENS = 4096;
export const MAX_TOTAL_TOKENS = 8192;
const WORDS_PER_CHUNK = 3;
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

  function limits(request: ChatRequest, prompt: number): Reply | undefined {
    if (prompt > MAX_INPUT_TOKENS) {
      return validation(`Input validation error: inputs tokens (${prompt}) must be at most ${MAX_INPUT_TOKENS}.`);
    }
    if (request.max_tokens !== undefined && prompt + request.max_tokens > MAX_TOTAL_TOKENS) {
      return validation(
        `Input validation error: inputs tokens + max_tokens must be at most ${MAX_TOTAL_TOKENS}; given ${prompt} inputs tokens and ${request.max_tokens} max_tokens.`,
      );
    }
    return undefined;
  }

  async function stream(res: ServerResponse, words: string[], finishReason: string, usage: object) {
    const id = `chatcmpl-${randomUUID()}`;
    const created = Math.floor(clock.now() / 1000);
    const chunk = (delta: object, finish: string | null, extra: object = {}) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: CHAT_MODEL_ID, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra })}\n\n`;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const failAt = faults.hits('chat') && faults.roll('stream-error') ? Math.floor(words.length / (2 * WORDS_PER_CHUNK)) : -1;
    const gone = () => res.destroyed || res.writableEnded;
    res.write(chunk({ role: 'assistant', content: '' }, null));
    for (let i = 0, piece = 0; i < words.length; i += WORDS_PER_CHUNK, piece++) {
      await clock.sleep(CHUNK_PAUSE_MS);
      if (gone()) return;
      if (piece === failAt) {
        // As the real server does: an error event after a 200, then the stream ends without [DONE].
        res.end(`data: ${JSON.stringify({ error: { message: 'Request failed during generation: the emulated GPU stopped responding.', type: 'generation' }, error_type: 'generation' })}\n\n`);
        return;
      }
      const text = words.slice(i, i + WORDS_PER_CHUNK).join(' ');
      res.write(chunk({ content: i === 0 ? text : ` ${text}` }, null));
      if (piece === 0) res.write(': keep-alive\n\n');
    }
    if (gone()) return;
    res.write(chunk({}, finishReason, { usage }));
    res.end('data: [DONE]\n\n');
  }

  async function completions(ctx: RequestContext): Promise<RouteResult> {
    const body = await ctx.readJson();
    if (!body.ok) return validation(`Failed to parse the request body as JSON: ${body.reason}`);
    const parsed = chatRequestSchema.safeParse(body.value);
    if (!parsed.success) return validation(describeIssues(parsed.error, body.value));
    const request = parsed.data;
    const prompt = promptTokens(request.messages);
    const refusal = limits(request, prompt);
    if (refusal) return refusal;
    const { words, finishReason } = limitReply(composeReply(request.messages), request.max_tokens);
    const usage = { prompt_tokens: prompt, completion_tokens: words.length, total_tokens: prompt + words.length };
    if (request.stream) {
      await stream(ctx.res, words, finishReason, usage);
      return STREAMED;
    }
    return json(200, {
      id: `chatcmpl-${randomUUID()}`,
      object: 'chat.completion',
      created: Math.floor(clock.now() / 1000),
      model: CHAT_MODEL_ID,
      system_fingerprint: '3.0.0-emulator',
      choices: [{ index: 0, message: { role: 'assistant', content: words.join(' ') }, logprobs: null, finish_reason: finishReason }],
      usage,
    });
  }

  return async function handle(ctx: RequestContext): Promise<RouteResult> {
    const refusal = gatewayRefusal(ctx, options.apiKey, options.workloadAuth);
    if (refusal) return refusal;
    const path = ctx.path.slice(CHAT_PREFIX.length);
    if (path === '/v1/chat/completions') {
      return ctx.method === 'POST' ? completions(ctx) : json(405, { error: 'Use POST.', error_type: 'validation' }, { allow: 'POST' });
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
        max_stop_sequences: 4,
        max_input_tokens: MAX_INPUT_TOKENS,
        max_total_tokens: MAX_TOTAL_TOKENS,
        max_client_batch_size: 4,
        router: 'text-generation-router',
        version: '3.0.0-emulator',
      });
    }
    if (path === '/v1/models') {
      return json(200, { object: 'list', data: [{ id: CHAT_MODEL_ID, object: 'model', created: createdAt, owned_by: 'emulator' }] });
    }
    return json(404, { error: `Not found: ${ctx.path}` });
  };
}
