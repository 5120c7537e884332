// Types only: the SDK exists from n8n 2.16, and nothing here may load it (see supplyData).
import type {
	ChatModel,
	ChatModelConfig,
	FinishReason,
	GenerateResult,
	Message,
	MessageContent,
	StreamChunk,
	TokenUsage,
	Tool,
} from '@n8n/ai-node-sdk';
import {
	ChatStreamFolder,
	GpuCloudError,
	type ChatRequest,
	type ChatRequestMessage,
	type ChatToolCallReply,
	type ChatUsage,
	type WorkloadClient,
} from '../../shared';

/** What the node's parameters fix for every call; the agent's per-call config may override the numbers. */
export interface ModelSettings {
	/** Empty: the model the workload serves. */
	model: string;
	responseFormat: 'text' | 'json_object';
}

export type FunctionTool = Extract<Tool, { type: 'function' }>;

/** The SDK's conversion of a tool's input schema (a zod schema from LangChain, or JSON Schema). */
type ToolSchemaOf = (tool: FunctionTool) => Record<string, unknown>;

const FINISH_REASONS: Record<string, FinishReason> = {
	stop: 'stop',
	length: 'length',
	tool_calls: 'tool-calls',
	content_filter: 'content-filter',
};

function finishReasonOf(reason: string | null): FinishReason {
	return reason === null ? 'other' : (FINISH_REASONS[reason] ?? 'other');
}

function usageOf(usage: ChatUsage | undefined): TokenUsage | undefined {
	return (
		usage && {
			promptTokens: usage.prompt_tokens,
			completionTokens: usage.completion_tokens,
			totalTokens: usage.total_tokens,
		}
	);
}

/**
 * Said when a message held an image or file: n8n's AI Agent passes chat uploads on by default
 * ("Automatically Passthrough Binary Images"), and the SDK drops image parts before they reach us,
 * leaving a user message with no text at all. Sending it would have the model answer an empty message.
 */
export const TEXT_ONLY_MESSAGE =
	'GPU Cloud text workloads read text only: an image or file sent to the chat cannot reach the model.';
const TEXT_ONLY_ADVICE =
	'Ask in words. To have an AI Agent send the text of such a message without its image, turn off its option "Automatically Passthrough Binary Images".';

function textOnly(): GpuCloudError {
	return new GpuCloudError(TEXT_ONLY_MESSAGE, { detail: TEXT_ONLY_ADVICE });
}

function textOf(content: readonly MessageContent[]): string {
	if (content.some((block) => block.type === 'file')) throw textOnly();
	return content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}

/** A user turn's text; one with none left held only an image or file, which the SDK dropped. */
function userText(content: readonly MessageContent[]): string {
	const text = textOf(content);
	if (text.trim() === '') throw textOnly();
	return text;
}

function resultText(result: unknown): string {
	if (typeof result === 'string') return result;
	// A tool result given as content blocks (how the SDK passes a LangChain tool message's parts).
	if (
		Array.isArray(result) &&
		result.every((block) => typeof block === 'object' && block !== null && 'type' in block)
	) {
		return result
			.map((block: { type: unknown; text?: unknown }) =>
				block.type === 'text' && typeof block.text === 'string' ? block.text : '',
			)
			.join('');
	}
	return JSON.stringify(result) ?? '';
}

/** The SDK's messages in the chat dialect: tool calls ride on assistant messages, each result is its own tool message. */
function toDialect(messages: readonly Message[]): ChatRequestMessage[] {
	return messages.flatMap((message): ChatRequestMessage[] => {
		switch (message.role) {
			case 'system':
				return [{ role: 'system', content: textOf(message.content) }];
			case 'user':
				return [{ role: 'user', content: userText(message.content) }];
			case 'assistant': {
				const calls = message.content.flatMap((block) =>
					block.type === 'tool-call'
						? [
								{
									id: block.toolCallId ?? '',
									type: 'function' as const,
									function: { name: block.toolName, arguments: block.input },
								},
							]
						: [],
				);
				const text = textOf(message.content.filter((block) => block.type === 'text'));
				return [
					calls.length > 0
						? { role: 'assistant', content: text || null, tool_calls: calls }
						: { role: 'assistant', content: text },
				];
			}
			case 'tool':
				return message.content.flatMap((block): ChatRequestMessage[] =>
					block.type === 'tool-result'
						? [{ role: 'tool', tool_call_id: block.toolCallId, content: resultText(block.result) }]
						: [],
				);
		}
	});
}

function signalOf(config: ChatModelConfig | undefined): AbortSignal | undefined {
	if (config?.abortSignal) return config.abortSignal;
	// LangChain passes its call options through as they are; its signal is named `signal`.
	const signal: unknown = config ? Reflect.get(config, 'signal') : undefined;
	return signal instanceof AbortSignal ? signal : undefined;
}

/**
 * A model deployed on a GPU Cloud text workload, as n8n's AI nodes use a chat model: every request
 * goes through the shared WorkloadClient (validated, retried where safe) over n8n's request helper.
 */
export class WorkloadChatModel implements ChatModel {
	readonly provider = 'gpu-cloud';

	constructor(
		private readonly client: WorkloadClient,
		private readonly settings: ModelSettings,
		readonly defaultConfig: ChatModelConfig,
		private readonly toolSchemaOf: ToolSchemaOf,
		/** Turns what a call threw into the error n8n shows for this node. */
		private readonly fail: (error: unknown) => Error,
		private readonly tools: readonly Tool[] = [],
	) {}

	get modelId(): string {
		return this.settings.model || 'default';
	}

	withTools(tools: Tool[]): ChatModel {
		return new WorkloadChatModel(
			this.client,
			this.settings,
			this.defaultConfig,
			this.toolSchemaOf,
			this.fail,
			[...this.tools, ...tools],
		);
	}

	private request(messages: Message[], callConfig: ChatModelConfig | undefined): ChatRequest {
		const config = { ...this.defaultConfig, ...callConfig };
		const functions = this.tools.flatMap((tool) =>
			tool.type === 'function'
				? [
						{
							type: 'function' as const,
							function: {
								name: tool.name,
								description: tool.description,
								parameters: this.toolSchemaOf(tool),
							},
						},
					]
				: [],
		);
		return {
			...(this.settings.model ? { model: this.settings.model } : {}),
			messages: toDialect(messages),
			max_tokens: config.maxTokens,
			temperature: config.temperature,
			top_p: config.topP,
			frequency_penalty: config.frequencyPenalty,
			presence_penalty: config.presencePenalty,
			stop: config.stopSequences?.length ? config.stopSequences : undefined,
			seed: config.seed,
			...(this.settings.responseFormat === 'json_object'
				? { response_format: { type: 'json_object' } }
				: {}),
			...(functions.length > 0 ? { tools: functions } : {}),
		};
	}

	async generate(messages: Message[], config?: ChatModelConfig): Promise<GenerateResult> {
		try {
			return await this.generateOnce(messages, config);
		} catch (error) {
			throw this.fail(error);
		}
	}

	private async generateOnce(
		messages: Message[],
		config: ChatModelConfig | undefined,
	): Promise<GenerateResult> {
		const reply = await this.client.chat.collect(this.request(messages, config), {
			signal: signalOf(config),
		});
		const content: MessageContent[] = reply.text ? [{ type: 'text', text: reply.text }] : [];
		for (const call of reply.toolCalls)
			content.push({
				type: 'tool-call',
				toolCallId: call.id,
				toolName: call.name,
				input: call.arguments,
			});
		return {
			id: reply.id,
			finishReason: finishReasonOf(reply.finishReason),
			usage: usageOf(reply.usage),
			message: { role: 'assistant', content, id: reply.id },
		};
	}

	/**
	 * Text as it arrives; tool calls once whole. The SDK's LangChain adapter gives every tool-call
	 * piece the same index, so argument pieces of two calls would run together if sent as they come.
	 */
	async *stream(messages: Message[], config?: ChatModelConfig): AsyncIterable<StreamChunk> {
		try {
			yield* this.streamOnce(messages, config);
		} catch (error) {
			throw this.fail(error);
		}
	}

	private async *streamOnce(
		messages: Message[],
		config: ChatModelConfig | undefined,
	): AsyncIterable<StreamChunk> {
		const request: ChatRequest = {
			...this.request(messages, config),
			stream_options: { include_usage: true },
		};
		const folder = new ChatStreamFolder();
		for await (const delta of this.client.chat.stream(request, { signal: signalOf(config) })) {
			const text = folder.add(delta);
			if (text) yield { type: 'text-delta', id: delta.id, delta: text };
		}
		const reply = folder.result();
		for (const call of reply.toolCalls) yield toolCallChunk(call);
		yield {
			type: 'finish',
			finishReason: finishReasonOf(reply.finishReason),
			usage: usageOf(reply.usage),
		};
	}
}

function toolCallChunk(call: ChatToolCallReply): StreamChunk {
	return { type: 'tool-call-delta', id: call.id, name: call.name, argumentsDelta: call.arguments };
}
