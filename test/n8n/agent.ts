import {
	BaseError,
	NodeConnectionTypes,
	NodeOperationError,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
	type ISupplyDataFunctions,
	type SupplyData,
} from 'n8n-workflow';
import { z } from 'zod/v4';

/**
 * The test's own AI root node (n8n's AI Agent lives in @n8n/n8n-nodes-langchain, which the harness
 * does not install): it takes the language model a sub-node supplies through n8n's engine, as the
 * Agent does, and runs a small agent loop with LangChain's model interface: bind the tools, call the
 * model, answer each tool call with the tool's fixed result, call the model again.
 */

const toolSpecSchema = z.array(
	z.object({
		name: z.string(),
		description: z.string(),
		parameters: z.record(z.string(), z.unknown()),
		result: z.string(),
	}),
);

const toolCallSchema = z.object({
	id: z.string().optional(),
	name: z.string(),
	args: z.record(z.string(), z.unknown()),
});
const contentSchema = z.union([
	z.string(),
	z.array(z.looseObject({ type: z.string(), text: z.string().optional() })),
]);
const aiMessageSchema = z.looseObject({
	content: contentSchema,
	tool_calls: z.array(toolCallSchema).optional(),
});

interface LanguageModel {
	invoke(messages: unknown[]): Promise<unknown>;
	stream(messages: unknown[]): Promise<AsyncIterable<unknown>>;
	bindTools(tools: unknown[]): LanguageModel;
}

function isLanguageModel(value: unknown): value is LanguageModel {
	return (
		typeof value === 'object' &&
		value !== null &&
		'invoke' in value &&
		'stream' in value &&
		'bindTools' in value
	);
}

type Reply = { text: string; toolCalls: z.infer<typeof toolCallSchema>[] };

function textOf(content: z.infer<typeof contentSchema>): string {
	return typeof content === 'string' ? content : content.map((part) => part.text ?? '').join('');
}

async function ask(model: LanguageModel, messages: unknown[], streaming: boolean): Promise<Reply> {
	if (!streaming) {
		const message = aiMessageSchema.parse(await model.invoke(messages));
		return { text: textOf(message.content), toolCalls: message.tool_calls ?? [] };
	}
	// Chunks are joined as LangChain joins them: tool calls are whole only in the joined message.
	let joined: MessageChunk | undefined;
	for await (const chunk of await model.stream(messages)) {
		if (!isMessageChunk(chunk))
			throw new Error('The model streamed something that is not a message chunk');
		joined = joined ? joined.concat(chunk) : chunk;
	}
	const message = aiMessageSchema.parse(joined);
	return { text: textOf(message.content), toolCalls: message.tool_calls ?? [] };
}

interface MessageChunk {
	concat(chunk: MessageChunk): MessageChunk;
}

function isMessageChunk(value: unknown): value is MessageChunk {
	return (
		typeof value === 'object' &&
		value !== null &&
		'concat' in value &&
		typeof value.concat === 'function'
	);
}

export class TestAgent implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Test Agent',
		name: 'agent',
		group: ['transform'],
		version: 1,
		description: 'Asks the connected chat model, answering its tool calls',
		defaults: { name: 'Agent' },
		inputs: [
			NodeConnectionTypes.Main,
			{
				type: NodeConnectionTypes.AiLanguageModel,
				displayName: 'Model',
				required: true,
				maxConnections: 1,
			},
		],
		outputs: [NodeConnectionTypes.Main],
		properties: [
			{ displayName: 'Prompt', name: 'prompt', type: 'string', default: '' },
			{ displayName: 'Tools', name: 'tools', type: 'json', default: '[]' },
			{ displayName: 'Stream', name: 'stream', type: 'boolean', default: false },
			{ displayName: 'Image URL', name: 'imageUrl', type: 'string', default: '' },
		],
	};

	/**
	 * How n8n's AI Agent (v3, n8n-nodes-langchain 2.41.1) passes on what the model threw:
	 * utils/output_parsers/langchainParserError.ts keeps an n8n error as it is and wraps anything
	 * else in a NodeOperationError with its message; ToolsAgent/V3/helpers/executeBatch.ts then
	 * wraps the result in a NodeOperationError of the agent. n8n's NodeError rewrites a message that
	 * names a system error code (ECONNREFUSED...) into a generic sentence on each wrapping.
	 */
	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		try {
			return await answerEach.call(this);
		} catch (error) {
			const kept =
				error instanceof BaseError
					? error
					: new NodeOperationError(this.getNode(), error instanceof Error ? error : String(error), {
							message: error instanceof Error ? error.message : String(error),
							level: 'error',
						});
			throw new NodeOperationError(this.getNode(), kept);
		}
	}
}

/** The agent loop for each item: ask, answer the tool calls, ask again. */
async function answerEach(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const supplied: unknown = await this.getInputConnectionData(
		NodeConnectionTypes.AiLanguageModel,
		0,
	);
	const model = Array.isArray(supplied) ? supplied[0] : supplied;
	if (!isLanguageModel(model))
		throw new NodeOperationError(this.getNode(), 'The connected node did not supply a chat model');
	const output: INodeExecutionData[] = [];
	for (let item = 0; item < this.getInputData().length; item++) {
		const tools = toolSpecSchema.parse(JSON.parse(String(this.getNodeParameter('tools', item))));
		const streaming = this.getNodeParameter('stream', item) === true;
		const bound =
			tools.length > 0
				? model.bindTools(
						tools.map(({ name, description, parameters }) => ({
							type: 'function',
							function: { name, description, parameters },
						})),
					)
				: model;
		const messages: unknown[] = [
			{ role: 'user', content: String(this.getNodeParameter('prompt', item)) },
		];
		// What n8n's AI Agent adds with "Automatically Passthrough Binary Images" (its default) when
		// the item carries an image: a user message of image parts alone (ToolsAgent/common.ts,
		// extractBinaryMessages, n8n-nodes-langchain 2.41.1).
		const imageUrl = String(this.getNodeParameter('imageUrl', item, ''));
		if (imageUrl)
			messages.push({
				role: 'user',
				content: [{ type: 'image_url', image_url: { url: imageUrl } }],
			});
		const first = await ask(bound, messages, streaming);
		let answer = first;
		if (first.toolCalls.length > 0) {
			messages.push({
				role: 'assistant',
				content: first.text,
				tool_calls: first.toolCalls.map((call) => ({
					id: call.id,
					type: 'function',
					function: { name: call.name, arguments: JSON.stringify(call.args) },
				})),
			});
			for (const call of first.toolCalls) {
				messages.push({
					role: 'tool',
					tool_call_id: call.id,
					content: tools.find((tool) => tool.name === call.name)?.result ?? 'no such tool',
				});
			}
			answer = await ask(bound, messages, streaming);
		}
		output.push({
			json: {
				answer: answer.text,
				toolCalls: first.toolCalls.map(({ name, args }) => ({ name, args })),
			},
			pairedItem: { item },
		});
	}
	return [output];
}

/**
 * n8n's own way of supplying an OpenAI-compatible model (the SDK's `supplyModel` with type "openai":
 * LangChain's ChatOpenAI, the client inside n8n's OpenAI Chat Model node), configured as
 * docs/ai-agent.md tells users to configure that node: base URL `<service_url>/v1`, the gateway key
 * in a Service-Api-Key header, the Responses API off.
 */
export class TestOpenAiModel implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Test OpenAI-Compatible Model',
		name: 'openAiModel',
		group: ['transform'],
		version: 1,
		description: 'Supplies an OpenAI-compatible chat model',
		defaults: { name: 'OpenAI Model' },
		inputs: [],
		outputs: [NodeConnectionTypes.AiLanguageModel],
		properties: [
			{ displayName: 'Base URL', name: 'baseUrl', type: 'string', default: '' },
			{ displayName: 'Service API Key', name: 'serviceApiKey', type: 'string', default: '' },
			{ displayName: 'Model', name: 'model', type: 'string', default: '' },
			{ displayName: 'Streaming', name: 'streaming', type: 'boolean', default: false },
		],
	};

	async supplyData(this: ISupplyDataFunctions, itemIndex: number): Promise<SupplyData> {
		const { supplyModel } = await import('@n8n/ai-node-sdk');
		return supplyModel(this, {
			type: 'openai',
			baseUrl: String(this.getNodeParameter('baseUrl', itemIndex)),
			apiKey: 'unused',
			defaultHeaders: {
				'Service-Api-Key': String(this.getNodeParameter('serviceApiKey', itemIndex)),
			},
			model: String(this.getNodeParameter('model', itemIndex)),
			useResponsesApi: false,
			streaming: this.getNodeParameter('streaming', itemIndex) === true,
		});
	}
}
