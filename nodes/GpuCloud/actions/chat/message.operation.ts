import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';
import { z } from 'zod/v4';
import {
	chatMessageSchema,
	chatRequestSchema,
	chatResponseFormatSchema,
	type ChatMessage,
	type ChatRequest,
	type ChatToolCallReply,
} from '../../../../shared';
import { workloadClient } from '../../transport';
import { jsonResult, readConcurrency, runItems } from '../../helpers/items';
import { toDataObject } from '../../helpers/output';
import {
	check,
	fieldError,
	parseJsonValue,
	readCollection,
	readString,
} from '../../helpers/parameters';
import { concurrencyOption } from '../common.descriptions';
import { readSampling, responseFormatOption, samplingOptions } from './sampling';

const properties: INodeProperties[] = [
	{
		displayName: 'Input',
		name: 'inputMode',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Prompt',
				value: 'prompt',
				description: 'One message, with optional instructions for the model',
			},
			{
				name: 'Conversation',
				value: 'messages',
				description: 'A list of messages with their roles',
			},
		],
		default: 'prompt',
	},
	{
		displayName: 'Prompt',
		name: 'prompt',
		type: 'string',
		typeOptions: { rows: 4 },
		default: '',
		required: true,
		placeholder: 'e.g. Summarize this ticket in two sentences: {{ $json.body }}',
		displayOptions: { show: { inputMode: ['prompt'] } },
	},
	{
		displayName: 'System Message',
		name: 'systemMessage',
		type: 'string',
		typeOptions: { rows: 2 },
		default: '',
		placeholder: 'e.g. You are a concise assistant.',
		description: 'Instructions the model follows for the whole reply (optional)',
		displayOptions: { show: { inputMode: ['prompt'] } },
	},
	{
		displayName: 'Messages',
		name: 'messages',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true, sortable: true },
		placeholder: 'Add message',
		default: { message: [{ role: 'user', content: '' }] },
		displayOptions: { show: { inputMode: ['messages'] } },
		options: [
			{
				displayName: 'Message',
				name: 'message',
				values: [
					{
						displayName: 'Role',
						name: 'role',
						type: 'options',
						options: [
							{ name: 'System', value: 'system', description: 'Instructions for the model' },
							{ name: 'User', value: 'user', description: 'What the person says' },
							{
								name: 'Assistant',
								value: 'assistant',
								description: 'An earlier reply of the model',
							},
						],
						default: 'user',
					},
					{
						displayName: 'Content',
						name: 'content',
						type: 'string',
						typeOptions: { rows: 2 },
						default: '',
					},
				],
			},
		],
	},
	{
		displayName: 'Model',
		name: 'model',
		type: 'string',
		default: '',
		placeholder: 'e.g. meta-llama/Llama-3.1-8B-Instruct',
		hint: 'Leave empty to use the model the workload serves',
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [
			concurrencyOption,
			...samplingOptions,
			{
				displayName: 'JSON Schema',
				name: 'jsonSchema',
				type: 'json',
				default:
					'{\n  "type": "object",\n  "properties": {\n    "answer": { "type": "string" }\n  },\n  "required": ["answer"]\n}',
				description:
					'The JSON Schema the reply must satisfy, used when Response Format is JSON Matching a Schema',
			},
			responseFormatOption({
				text: 'A reply in words',
				jsonObject: 'A reply that is a JSON object, returned parsed as an object',
				jsonSchema: 'JSON that satisfies the JSON Schema below, returned parsed as an object',
			}),
			{
				displayName: 'Seed',
				name: 'seed',
				type: 'number',
				typeOptions: { minValue: 0 },
				default: 0,
				description: 'The same seed and request give the same reply, for repeatable results',
			},
			{
				displayName: 'Tool Choice',
				name: 'toolChoice',
				type: 'options',
				options: [
					{ name: 'Auto', value: 'auto', description: 'The model decides whether to call a tool' },
					{
						name: 'Required',
						value: 'required',
						description: 'The model must call at least one tool',
					},
					{ name: 'None', value: 'none', description: 'The model answers in words only' },
				],
				default: 'auto',
			},
			{
				displayName: 'Tools',
				name: 'tools',
				type: 'json',
				default: '[]',
				placeholder:
					'[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]',
				description:
					'Functions the model may ask to call, in the OpenAI format. The calls come back in "toolCalls" (the node does not run them): run them and send the results in a conversation.',
			},
		],
	},
];

const displayOptions = { show: { resource: ['chat'], operation: ['message'] } };

export const description = updateDisplayOptions(displayOptions, properties);

const fields = chatRequestSchema.shape;
const messageListSchema = z.object({ message: z.array(z.unknown()).optional() });

function readMessages(context: IExecuteFunctions, i: number): ChatMessage[] {
	if (context.getNodeParameter('inputMode', i, 'prompt') === 'messages') {
		const list =
			check(messageListSchema, context.getNodeParameter('messages', i, {}), 'Messages').message ??
			[];
		return list.map((message, n) => check(chatMessageSchema, message, `Messages ${n + 1}`));
	}
	const system = readString(context, 'systemMessage', i).trim();
	const prompt = readString(context, 'prompt', i);
	if (prompt.trim() === '') throw fieldError('Prompt', 'is required');
	return [
		...(system ? [{ role: 'system' as const, content: system }] : []),
		{ role: 'user', content: prompt },
	];
}

function readRequest(context: IExecuteFunctions, i: number): ChatRequest {
	const options = readCollection(context, 'options', i);
	const model = readString(context, 'model', i).trim();
	const request: ChatRequest = {
		messages: check(fields.messages, readMessages(context, i), 'Messages'),
		...readSampling(options),
	};
	if (model) request.model = model;
	if (options.seed !== undefined) request.seed = check(fields.seed, options.seed, 'Seed');
	const format = check(responseFormatSchema, options.responseFormat ?? 'text', 'Response Format');
	if (format === 'json_schema') {
		if (options.jsonSchema === undefined)
			throw fieldError('JSON Schema', 'is required when Response Format is JSON Matching a Schema');
		const schema = parseJsonValue(options.jsonSchema, 'JSON Schema');
		request.response_format = check(
			chatResponseFormatSchema,
			{ type: 'json_schema', json_schema: { name: 'reply', schema } },
			'JSON Schema',
		);
	} else if (options.jsonSchema !== undefined) {
		throw fieldError('JSON Schema', 'is used only when Response Format is JSON Matching a Schema');
	}
	if (format === 'json_object') {
		request.response_format = { type: 'json_object' };
	}
	const tools = check(toolListSchema, parseJsonValue(options.tools ?? '[]', 'Tools'), 'Tools');
	if (tools.length > 0) {
		request.tools = check(fields.tools, tools, 'Tools');
		request.tool_choice = check(fields.tool_choice, options.toolChoice ?? 'auto', 'Tool Choice');
	}
	return check(chatRequestSchema, request, 'Chat');
}

const responseFormatSchema = z.enum(['text', 'json_object', 'json_schema'], {
	error: 'must be Text, JSON Object or JSON Matching a Schema',
});

const toolListSchema = z.array(z.unknown(), { error: 'must be a JSON list of tools' });

const jsonObjectSchema = z.record(z.string(), z.unknown());

/** The JSON object a model wrote, or undefined when the text is not one. */
function jsonObjectOf(text: string): Record<string, unknown> | undefined {
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch {
		return undefined;
	}
	const parsed = jsonObjectSchema.safeParse(value);
	return parsed.success && !Array.isArray(value) ? parsed.data : undefined;
}

/** A tool call as the node outputs it: the arguments parsed, and as the model wrote them. */
function toolCallOutput(call: ChatToolCallReply): IDataObject {
	const parsed = jsonObjectOf(call.arguments);
	return {
		id: call.id,
		name: call.name,
		arguments: parsed ? toDataObject(parsed) : null,
		argumentsText: call.arguments,
	};
}

/** The reply of a JSON response format, parsed: model output is checked, never trusted. */
function parsedReply(text: string, context: IExecuteFunctions, itemIndex: number): IDataObject {
	const parsed = jsonObjectOf(text);
	if (parsed) return toDataObject(parsed);
	throw new NodeOperationError(
		context.getNode(),
		'The model was asked for a JSON object but its reply is not one.',
		{
			itemIndex,
			description: `The reply begins: ${JSON.stringify(text.slice(0, 80))}. A reply cut short by Maximum Number of Tokens is the usual cause.`,
		},
	);
}

/**
 * Images the items carry never reach a text workload (a Chat Trigger's uploads, a generated picture):
 * said beside the output, since a reply that reads as if the model saw them would mislead.
 */
function warnOfImages(context: IExecuteFunctions, items: INodeExecutionData[]): void {
	const properties = new Set(
		items.flatMap((item) =>
			Object.entries(item.binary ?? {})
				.filter(([, data]) => data.mimeType.startsWith('image/'))
				.map(([property]) => property),
		),
	);
	if (properties.size === 0) return;
	const names = [...properties].map((property) => `"${property}"`).join(', ');
	const what =
		properties.size > 1
			? `images in binary properties ${names} were`
			: `image in binary property ${names} was`;
	context.addExecutionHints({
		message: `GPU Cloud text workloads read text only: the ${what} not sent to the model. Describe what the model needs to know in the prompt.`,
		type: 'warning',
		location: 'outputPane',
	});
}

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	const client = await workloadClient(this);
	warnOfImages(this, items);
	return await runItems(this, items, readConcurrency(this), {
		prepare: (i) => readRequest(this, i),
		run: async (request, i, signal) => {
			const reply = await client.chat.collect(request, { signal });
			const wantsJson =
				request.response_format?.type === 'json_object' ||
				request.response_format?.type === 'json_schema';
			return jsonResult({
				reply: reply.text,
				...(wantsJson && reply.toolCalls.length === 0
					? { json: parsedReply(reply.text, this, i) }
					: {}),
				...(request.tools?.length ? { toolCalls: reply.toolCalls.map(toolCallOutput) } : {}),
				model: reply.model,
				finishReason: reply.finishReason,
				...(reply.usage ? { usage: toDataObject(reply.usage) } : {}),
				id: reply.id,
			});
		},
	});
}
