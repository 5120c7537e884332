import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';
import { z } from 'zod/v4';
import { chatMessageSchema, chatRequestSchema, type ChatMessage, type ChatRequest } from '../../../../shared';
import { workloadClient } from '../../transport';
import { jsonResult, readConcurrency, runItems } from '../../helpers/items';
import { toDataObject } from '../../helpers/output';
import { check, fieldError, readCollection, readString } from '../../helpers/parameters';
import { concurrencyOption } from '../common.descriptions';

const properties: INodeProperties[] = [
  {
    displayName: 'Input',
    name: 'inputMode',
    type: 'options',
    noDataExpression: true,
    options: [
      { name: 'Prompt', value: 'prompt', description: 'One message, with optional instructions for the model' },
      { name: 'Conversation', value: 'messages', description: 'A list of messages with their roles' },
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
              { name: 'Assistant', value: 'assistant', description: 'An earlier reply of the model' },
            ],
            default: 'user',
          },
          { displayName: 'Content', name: 'content', type: 'string', typeOptions: { rows: 2 }, default: '' },
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
      {
        displayName: 'Frequency Penalty',
        name: 'frequencyPenalty',
        type: 'number',
        typeOptions: { minValue: -2, maxValue: 2, numberPrecision: 2 },
        default: 0,
        description: 'Positive values make the model repeat itself less (-2 to 2)',
      },
      {
        displayName: 'Maximum Number of Tokens',
        name: 'maxTokens',
        type: 'number',
        typeOptions: { minValue: 1 },
        default: 512,
        description: 'The longest reply to generate, in tokens',
      },
      {
        displayName: 'Sampling Temperature',
        name: 'temperature',
        type: 'number',
        typeOptions: { minValue: 0, maxValue: 2, numberPrecision: 2 },
        default: 0.7,
        description: 'Higher values give more varied replies (0-2)',
      },
      {
        displayName: 'Top P',
        name: 'topP',
        type: 'number',
        typeOptions: { minValue: 0, maxValue: 1, numberPrecision: 2 },
        default: 1,
        description: 'Sample only from the most likely tokens whose probabilities add up to this (above 0, at most 1)',
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
    const list = check(messageListSchema, context.getNodeParameter('messages', i, {}), 'Messages').message ?? [];
    return list.map((message, n) => check(chatMessageSchema, message, `Messages ${n + 1}`));
  }
  const system = readString(context, 'systemMessage', i).trim();
  const prompt = readString(context, 'prompt', i);
  if (prompt.trim() === '') throw fieldError('Prompt', 'is required');
  return [...(system ? [{ role: 'system' as const, content: system }] : []), { role: 'user', content: prompt }];
}

function readRequest(context: IExecuteFunctions, i: number): ChatRequest {
  const options = readCollection(context, 'options', i);
  const model = readString(context, 'model', i).trim();
  const request: ChatRequest = { messages: check(fields.messages, readMessages(context, i), 'Messages') };
  if (model) request.model = model;
  if (options.maxTokens !== undefined) request.max_tokens = check(fields.max_tokens, options.maxTokens, 'Maximum Number of Tokens');
  if (options.temperature !== undefined) request.temperature = check(fields.temperature, options.temperature, 'Sampling Temperature');
  if (options.topP !== undefined) request.top_p = check(fields.top_p, options.topP, 'Top P');
  if (options.frequencyPenalty !== undefined) {
    request.frequency_penalty = check(fields.frequency_penalty, options.frequencyPenalty, 'Frequency Penalty');
  }
  return check(chatRequestSchema, request, 'Chat');
}

export async function execute(this: IExecuteFunctions, items: INodeExecutionData[]): Promise<INodeExecutionData[]> {
  const client = await workloadClient(this);
  return await runItems(this, items, readConcurrency(this), {
    prepare: (i) => readRequest(this, i),
    run: async (request, _i, signal) => {
      const reply = await client.chat.collect(request, { signal });
      return jsonResult({
        reply: reply.text,
        model: reply.model,
        finishReason: reply.finishReason,
        ...(reply.usage ? { usage: toDataObject(reply.usage) } : {}),
        id: reply.id,
      });
    },
  });
}
