import type {
	ExecutionBaseError,
	ILoadOptionsFunctions,
	INodeListSearchResult,
	INodeType,
	INodeTypeDescription,
	ISupplyDataFunctions,
	SupplyData,
} from 'n8n-workflow';
import { NodeConnectionTypes, NodeOperationError } from 'n8n-workflow';
import { z } from 'zod/v4';
import { DEFAULT_WORKLOAD_TIMEOUT_MS } from '../../shared';
import {
	readSampling,
	responseFormatOption,
	samplingOptions,
} from '../GpuCloud/actions/chat/sampling';
import { toNodeError } from '../GpuCloud/helpers/errors';
import { check } from '../GpuCloud/helpers/parameters';
import { WORKLOAD_CREDENTIAL, workloadClient } from '../GpuCloud/transport';
import { WorkloadChatModel, type FunctionTool, type ModelSettings } from './model';

const DEFAULT_TIMEOUT_SECONDS = DEFAULT_WORKLOAD_TIMEOUT_MS / 1000;

const optionsSchema = z.looseObject({
	responseFormat: z
		.enum(['text', 'json_object'], { error: 'must be Text or JSON Object' })
		.optional(),
	timeout: z
		.number({ error: 'must be a number of seconds' })
		.positive({ error: 'must be more than 0 seconds' })
		.max(3600, { error: 'must be at most 3600 seconds' })
		.optional(),
});

const modelIdSchema = z.string({ error: 'must be a model id' });

type Sdk = typeof import('@n8n/ai-node-sdk');

/**
 * Loaded when the model is needed, never when n8n loads this file: n8n provides the SDK from 2.16,
 * and on older n8n this file must still load so that the package's other nodes keep working.
 */
async function loadSdk(context: ISupplyDataFunctions): Promise<Sdk> {
	try {
		return await import('@n8n/ai-node-sdk');
	} catch {
		throw new NodeOperationError(
			context.getNode(),
			'The GPU Cloud Chat Model needs n8n 2.16 or newer.',
			{
				description:
					"It supplies the model through n8n's AI node SDK, which older n8n does not have. The GPU Cloud node works on older n8n too.",
			},
		);
	}
}

/** A system error code in parentheses, as the shared client writes it: "Could not connect (ECONNREFUSED)." */
const SYSTEM_ERROR_CODE = /\s*\(([A-Z][A-Z0-9_]+)\)/;

/**
 * n8n's AI root nodes wrap a model's error in errors of their own (the AI Agent twice), and each
 * wrapping swaps a message that names a system error code (ECONNREFUSED...) for n8n's generic
 * sentence, losing which service and request failed. The code moves to the description, so the
 * message that names GPU Cloud and the request reaches the user.
 */
function forTheAiLayer(error: ExecutionBaseError): ExecutionBaseError {
	const code = SYSTEM_ERROR_CODE.exec(error.message)?.[1];
	if (!code) return error;
	error.message = error.message.replace(SYSTEM_ERROR_CODE, '');
	error.description = [code, error.description].filter(Boolean).join(': ');
	return error;
}

export class GpuCloudChatModel implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'GPU Cloud Chat Model',
		name: 'gpuCloudChatModel',
		icon: { light: 'file:gpuCloud.svg', dark: 'file:gpuCloud.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: '={{ $parameter["model"].value || "The model the workload serves" }}',
		description:
			'Use a model deployed on a GPU Cloud text workload in an AI Agent or chain (needs n8n 2.16 or newer).',
		defaults: { name: 'GPU Cloud Chat Model' },
		inputs: [],
		outputs: [NodeConnectionTypes.AiLanguageModel],
		outputNames: ['Model'],
		credentials: [{ name: WORKLOAD_CREDENTIAL, required: true }],
		properties: [
			{
				displayName: 'Model',
				name: 'model',
				type: 'resourceLocator',
				default: { mode: 'list', value: '' },
				description: 'The model the workload serves. Leave empty to use it without naming it.',
				modes: [
					{
						displayName: 'From List',
						name: 'list',
						type: 'list',
						typeOptions: { searchListMethod: 'searchModels', searchable: true },
					},
					{
						displayName: 'ID',
						name: 'id',
						type: 'string',
						placeholder: 'e.g. meta-llama/Llama-3.1-8B-Instruct',
					},
				],
			},
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				placeholder: 'Add Option',
				default: {},
				options: [
					...samplingOptions,
					responseFormatOption({
						text: 'Replies in words',
						jsonObject: 'Every reply is a JSON object (say in the prompt what it should hold)',
					}),
					{
						displayName: 'Timeout (Seconds)',
						name: 'timeout',
						type: 'number',
						typeOptions: { minValue: 1, maxValue: 3600 },
						default: DEFAULT_TIMEOUT_SECONDS,
						description: 'How long one request to the model may take',
					},
				],
			},
		],
	};

	methods = {
		listSearch: {
			/** The models the workload's `/v1/models` lists (a text workload serves one). */
			async searchModels(
				this: ILoadOptionsFunctions,
				filter?: string,
			): Promise<INodeListSearchResult> {
				try {
					const client = await workloadClient(this);
					const wanted = filter?.trim().toLowerCase() ?? '';
					const { data } = await client.models.list();
					return {
						results: data
							.filter((model) => model.id.toLowerCase().includes(wanted))
							.map((model) => ({ name: model.id, value: model.id })),
					};
				} catch (error) {
					throw toNodeError(this.getNode(), error, 0);
				}
			},
		},
	};

	async supplyData(this: ISupplyDataFunctions, itemIndex: number): Promise<SupplyData> {
		const sdk = await loadSdk(this);
		try {
			const options = check(
				optionsSchema,
				this.getNodeParameter('options', itemIndex, {}),
				'Options',
			);
			const model = check(
				modelIdSchema,
				this.getNodeParameter('model', itemIndex, '', { extractValue: true }),
				'Model',
			).trim();
			const settings: ModelSettings = { model, responseFormat: options.responseFormat ?? 'text' };
			const sampling = readSampling(options);
			const config = {
				maxTokens: sampling.max_tokens ?? undefined,
				temperature: sampling.temperature ?? undefined,
				topP: sampling.top_p ?? undefined,
				frequencyPenalty: sampling.frequency_penalty ?? undefined,
				presencePenalty: sampling.presence_penalty ?? undefined,
				stopSequences: sampling.stop,
			};
			const client = await workloadClient(this, {
				timeoutMs: (options.timeout ?? DEFAULT_TIMEOUT_SECONDS) * 1000,
			});
			const toolSchemaOf = (tool: FunctionTool) => ({ ...sdk.getParametersJsonSchema(tool) });
			const fail = (error: unknown) => forTheAiLayer(toNodeError(this.getNode(), error, itemIndex));
			return sdk.supplyModel(
				this,
				new WorkloadChatModel(client, settings, config, toolSchemaOf, fail),
			);
		} catch (error) {
			throw toNodeError(this.getNode(), error, itemIndex);
		}
	}
}
