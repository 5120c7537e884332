import type { Clock } from './clock';
import { GpuCloudError, StreamError, ValidationError } from './errors';
import { generatedImages, readImageReply, type GeneratedImages } from './image-reply';
import { AmbiguousOutcomeError, RequestExecutor, type RequestSpec } from './request';
import type { RetryPolicy } from './retry';
import {
	chatCompletionChunkSchema,
	chatCompletionSchema,
	chatErrorBodySchema,
	chatRequestSchema,
	httpUrlSchema,
	imageAcceptedSchema,
	imagePromptRequestSchema,
	imageResultSchema,
	modelListSchema,
	textToImageRequestSchema,
	workflowNameSchema,
	type ChatCompletion,
	type ChatRequest,
	type ChatToolCallDelta,
	type ChatUsage,
	type ImageAccepted,
	type ModelList,
	type ImagePromptRequest,
	type TextToImageRequest,
} from './schemas';
import { sseData } from './sse';
import type { Transport } from './transport';
import { parseOrThrow } from './validation';

export interface WorkloadClientOptions {
	/** The deployed container group's address (its `service_url`). */
	serviceUrl: string;
	/** Needed only when the workload's gateway authentication is on. */
	apiKey?: string;
	transport: Transport;
	clock: Clock;
	/** Per request. Default `DEFAULT_WORKLOAD_TIMEOUT_MS`. */
	timeoutMs?: number;
	retry?: Partial<RetryPolicy>;
	random?: () => number;
}

/** Per workload request: just past the gateway's own 100 s limit, so its answer wins. */
export const DEFAULT_WORKLOAD_TIMEOUT_MS = 110_000;

/** What to draw: a plain text prompt through a named workflow, or a full node graph. */
export type ImageSource =
	| { kind: 'text'; workflow: string; request: TextToImageRequest }
	| { kind: 'graph'; request: ImagePromptRequest };

/** A tool the model asked to call; `arguments` is JSON text, as the model wrote it. */
export interface ChatToolCallReply {
	id: string;
	name: string;
	arguments: string;
}

export interface ChatDelta {
	/** Of the choice this delta belongs to (0 unless several were asked for). */
	index: number;
	content: string;
	role?: string;
	/** Pieces of tool calls: the first piece of a call carries its id and name, later ones add arguments. */
	toolCalls?: ChatToolCallDelta[];
	finishReason?: string | null;
	/** Of the completion this delta belongs to. */
	id: string;
	model: string;
	/** Servers that report usage do so on the last chunk. */
	usage?: ChatUsage;
}

export interface CollectedChat {
	id: string;
	model: string;
	text: string;
	/** Empty unless the model called tools (finishReason "tool_calls"). */
	toolCalls: ChatToolCallReply[];
	finishReason: string | null;
	usage?: ChatUsage;
}

function parseSource(source: ImageSource): {
	path: string;
	body: ImagePromptRequest | TextToImageRequest;
} {
	if (source.kind === 'text') {
		const workflow = parseOrThrow(workflowNameSchema, source.workflow, 'workflow name');
		return {
			path: `/workflow/${workflow}`,
			body: parseOrThrow(textToImageRequestSchema, source.request, 'image request'),
		};
	}
	return {
		path: '/prompt',
		body: parseOrThrow(imagePromptRequestSchema, source.request, 'image request'),
	};
}

function contentLength(headers: Record<string, string>): number | undefined {
	const length = Number(headers['content-length']);
	return Number.isSafeInteger(length) && length > 0 ? length : undefined;
}

function hasWebhook(body: ImagePromptRequest | TextToImageRequest): boolean {
	return 'webhook' in body && body.webhook !== undefined ? true : body.webhook_v2 !== undefined;
}

/**
 * A workload request leaves nothing behind on the service, so an unknown outcome needs no look-up:
 * report what actually went wrong.
 */
async function plainFailure<T>(work: Promise<T>): Promise<T> {
	try {
		return await work;
	} catch (error) {
		throw error instanceof AmbiguousOutcomeError ? error.underlying : error;
	}
}

/** Joins streamed tool-call pieces into whole calls, by their index. */
class ToolCallAssembler {
	private readonly byIndex = new Map<number, ChatToolCallReply>();

	add(piece: ChatToolCallDelta): void {
		const call = this.byIndex.get(piece.index) ?? { id: '', name: '', arguments: '' };
		if (piece.id) call.id = piece.id;
		if (piece.function?.name) call.name += piece.function.name;
		if (piece.function?.arguments) call.arguments += piece.function.arguments;
		this.byIndex.set(piece.index, call);
	}

	calls(): ChatToolCallReply[] {
		return [...this.byIndex.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
	}
}

/**
 * Folds a chat stream into the whole reply: usage from whichever chunk reports it; text, tool calls
 * and finish reason of the first choice only.
 */
export class ChatStreamFolder {
	private readonly calls = new ToolCallAssembler();
	private readonly reply: CollectedChat;

	/** `model`: the reply's model until the stream names one. */
	constructor(model = '') {
		this.reply = { id: '', model, text: '', toolCalls: [], finishReason: null };
	}

	/** Takes in one delta; returns the text it adds to the reply ('' when none). */
	add(delta: ChatDelta): string {
		this.reply.id = delta.id;
		this.reply.model = delta.model;
		if (delta.usage) this.reply.usage = delta.usage;
		if (delta.index !== 0) return '';
		this.reply.text += delta.content;
		for (const piece of delta.toolCalls ?? []) this.calls.add(piece);
		if (delta.finishReason) this.reply.finishReason = delta.finishReason;
		return delta.content;
	}

	result(): CollectedChat {
		return { ...this.reply, toolCalls: this.calls.calls() };
	}
}

export class WorkloadClient {
	private readonly http: RequestExecutor;
	private readonly canStream: boolean;

	constructor(options: WorkloadClientOptions) {
		this.canStream = typeof options.transport.stream === 'function';
		this.http = new RequestExecutor({
			baseUrl: parseOrThrow(httpUrlSchema, options.serviceUrl, 'service URL'),
			transport: options.transport,
			clock: options.clock,
			apiKey: options.apiKey,
			timeoutMs: options.timeoutMs ?? DEFAULT_WORKLOAD_TIMEOUT_MS,
			retry: options.retry,
			random: options.random,
			serviceName: 'GPU Cloud workload',
		});
	}

	readonly images = {
		/**
		 * Generates and waits for the images, as bytes. Received as a stream when the transport can,
		 * decoding each image as it arrives (see readImageReply).
		 */
		generate: async (
			source: ImageSource,
			options: { signal?: AbortSignal } = {},
		): Promise<GeneratedImages> => {
			const { path, body } = parseSource(source);
			if (hasWebhook(body)) {
				throw new ValidationError(
					[
						{
							field: 'webhook',
							rule: 'must be empty when waiting for the images; use submit for webhook delivery',
						},
					],
					'image request',
				);
			}
			// Generation has no lasting side effect but costs GPU time: repeat only what never ran.
			const spec: RequestSpec = {
				method: 'POST',
				path,
				body,
				idempotent: false,
				signal: options.signal,
			};
			if (this.canStream) {
				return plainFailure(
					this.http.receive(spec, (response, checks) =>
						readImageReply(response.body, contentLength(response.headers), checks),
					),
				);
			}
			const result = await plainFailure(this.http.json(spec, imageResultSchema));
			return generatedImages(
				result,
				result.images.map((image) => Buffer.from(image, 'base64')),
			);
		},

		/** Queues a generation whose images the workload will POST to the request's webhook. */
		submit: async (
			source: ImageSource,
			options: { signal?: AbortSignal } = {},
		): Promise<ImageAccepted> => {
			const { path, body } = parseSource(source);
			if (!hasWebhook(body)) {
				throw new ValidationError(
					[{ field: 'webhook_v2', rule: 'is required to deliver the images by webhook' }],
					'image request',
				);
			}
			return plainFailure(
				this.http.json(
					{ method: 'POST', path, body, idempotent: false, signal: options.signal },
					imageAcceptedSchema,
				),
			);
		},
	};

	readonly models = {
		/** The models a text workload serves, as its `/v1/models` lists them. */
		list: async (options: { signal?: AbortSignal } = {}): Promise<ModelList> =>
			plainFailure(
				this.http.json(
					{ method: 'GET', path: '/v1/models', idempotent: true, signal: options.signal },
					modelListSchema,
				),
			),
	};

	readonly chat = {
		/**
		 * Whether a replica of the text workload is ready to answer: false while one starts (its
		 * `/health`, or the gateway for it, answers 503), as when the workload scales up from zero.
		 */
		ready: async (options: { signal?: AbortSignal } = {}): Promise<boolean> => {
			try {
				await this.http.empty({
					method: 'GET',
					path: '/health',
					idempotent: true,
					once: true,
					signal: options.signal,
				});
				return true;
			} catch (error) {
				if (error instanceof GpuCloudError && error.status === 503) return false;
				throw error;
			}
		},

		complete: async (
			request: ChatRequest,
			options: { signal?: AbortSignal } = {},
		): Promise<ChatCompletion> => {
			const body = parseOrThrow(chatRequestSchema, { ...request, stream: false }, 'chat request');
			return plainFailure(
				this.http.json(
					{
						method: 'POST',
						path: '/v1/chat/completions',
						body,
						idempotent: false,
						signal: options.signal,
					},
					chatCompletionSchema,
				),
			);
		},

		/** The reply as it is generated. An error reported mid-stream is thrown as StreamError. */
		stream: (
			request: ChatRequest,
			options: { signal?: AbortSignal } = {},
		): AsyncIterable<ChatDelta> => {
			const body = parseOrThrow(chatRequestSchema, { ...request, stream: true }, 'chat request');
			const http = this.http;
			return {
				async *[Symbol.asyncIterator]() {
					const spec: RequestSpec = {
						method: 'POST',
						path: '/v1/chat/completions',
						body,
						idempotent: false,
						signal: options.signal,
					};
					const response = await plainFailure(http.openStream(spec));
					for await (const data of sseData(response.body)) {
						if (data === '[DONE]') return;
						let json: unknown;
						try {
							json = JSON.parse(data);
						} catch {
							throw new StreamError('The chat stream sent an event that is not valid JSON.');
						}
						const failure = chatErrorBodySchema.safeParse(json);
						if (failure.success) {
							const { error, error_type: errorType } = failure.data;
							const text = typeof error === 'string' ? error : (error.message ?? 'unknown error');
							throw new StreamError(`The chat model stopped with an error: ${text}`, { errorType });
						}
						const chunk = chatCompletionChunkSchema.safeParse(json);
						if (!chunk.success)
							throw new StreamError('The chat stream sent an event of an unexpected shape.');
						const { id, model, usage } = chunk.data;
						for (const choice of chunk.data.choices) {
							yield {
								index: choice.index,
								content: choice.delta.content ?? '',
								role: choice.delta.role,
								...(choice.delta.tool_calls?.length ? { toolCalls: choice.delta.tool_calls } : {}),
								finishReason: choice.finish_reason,
								id,
								model,
								usage: usage ?? undefined,
							};
						}
						if (chunk.data.choices.length === 0 && usage)
							yield { index: 0, content: '', id, model, usage };
					}
					throw new StreamError('The chat stream ended before it was complete (no [DONE]).');
				},
			};
		},

		/**
		 * The whole reply, received as a stream when the transport can: tokens keep the connection busy,
		 * so a long answer does not hit the gateway's 100 s limit for a silent request.
		 */
		collect: async (
			request: ChatRequest,
			options: { signal?: AbortSignal; streaming?: boolean } = {},
		): Promise<CollectedChat> => {
			if (options.streaming === false || !this.canStream) {
				const completion = await this.chat.complete(request, options);
				const choice = completion.choices[0];
				return {
					id: completion.id,
					model: completion.model,
					text: choice.message.content ?? '',
					toolCalls: (choice.message.tool_calls ?? []).map((call) => ({
						id: call.id,
						name: call.function.name,
						arguments: call.function.arguments,
					})),
					finishReason: choice.finish_reason,
					usage: completion.usage,
				};
			}
			const folder = new ChatStreamFolder(request.model);
			// Servers that report usage only when asked (OpenAI, vLLM) are asked.
			const streamed: ChatRequest = {
				...request,
				stream_options: { include_usage: true, ...request.stream_options },
			};
			for await (const delta of this.chat.stream(streamed, options)) folder.add(delta);
			return folder.result();
		},
	};
}
