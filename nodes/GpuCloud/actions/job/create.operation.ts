import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';
import { LIMITS } from '../../../../shared';
import { managementClient } from '../../transport';
import { inputSchemaCheck } from '../../helpers/input-schema';
import { jobFormat } from '../../helpers/output';
import { jsonResult, readConcurrency, runItems } from '../../helpers/items';
import { readLocatorName } from '../../helpers/parameters';
import { concurrencyOption, endpointLocator } from '../common.descriptions';
import { readJobRequest } from './request';

const FROM_VERSION_2 = { '@version': [{ _cnd: { gte: 2 } }] };

/**
 * The job's input: version 1 has only the JSON box; version 2 shows the endpoint's own fields, with
 * the JSON box one switch away. The box keeps its name, so a version 1 workflow keeps its input.
 */
export const inputProperties: INodeProperties[] = [
	{
		displayName: 'Input',
		name: 'input',
		type: 'json',
		default: '{\n  "url": ""\n}',
		required: true,
		description:
			"The job's input as JSON. Its shape depends on the endpoint: see its input schema with Inference Endpoint > Get.",
		displayOptions: { show: { '@version': [1] } },
	},
	{
		displayName: 'Input',
		name: 'inputMode',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Using Fields Below',
				value: 'fields',
				description: "One field per property of the endpoint's input schema",
			},
			{ name: 'Using JSON', value: 'json', description: 'The whole input as one JSON object' },
		],
		default: 'fields',
		displayOptions: { show: FROM_VERSION_2 },
	},
	{
		displayName: 'Input Fields',
		name: 'inputFields',
		type: 'resourceMapper',
		noDataExpression: true,
		default: { mappingMode: 'defineBelow', value: null },
		required: true,
		typeOptions: {
			loadOptionsDependsOn: ['endpoint.value'],
			resourceMapper: {
				resourceMapperMethod: 'getEndpointFields',
				mode: 'add',
				fieldWords: { singular: 'field', plural: 'fields' },
				addAllFields: true,
				multiKeyMatch: false,
				supportAutoMap: false,
			},
		},
		displayOptions: { show: { ...FROM_VERSION_2, inputMode: ['fields'] } },
	},
	{
		displayName: 'Input',
		name: 'input',
		type: 'json',
		default: '{}',
		required: true,
		description:
			"The job's input as JSON. Its shape depends on the endpoint: see its input schema with Inference Endpoint > Get.",
		displayOptions: { show: { ...FROM_VERSION_2, inputMode: ['json'] } },
	},
];

export const metadataOption: INodeProperties = {
	displayName: 'Metadata',
	name: 'metadata',
	type: 'json',
	default: '{}',
	description: `Your own JSON object kept with the job and returned with it (at most ${LIMITS.metadataMaxProperties} properties)`,
};

const properties: INodeProperties[] = [
	endpointLocator,
	...inputProperties,
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [
			metadataOption,
			{
				displayName: 'Webhook URL',
				name: 'webhookUrl',
				type: 'string',
				default: '',
				placeholder: 'e.g. https://n8n.example.com/webhook/gpu-cloud-jobs',
				description: `GPU Cloud POSTs the finished job to this address (up to ${LIMITS.webhookUrlMaxLength} characters), for example the URL of a GPU Cloud Trigger node`,
			},
			concurrencyOption,
		],
	},
];

const displayOptions = { show: { resource: ['job'], operation: ['create'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	const { client } = await managementClient(this);
	return await runItems(this, items, readConcurrency(this), {
		prepare: (i) => ({
			endpoint: readLocatorName(this, 'endpoint', i, 'Inference Endpoint'),
			...readJobRequest(this, i),
		}),
		check: inputSchemaCheck(this, client),
		run: async ({ endpoint, request }, _i, _signal, jobs) => {
			const job = await client.jobs.create(endpoint, request, { signal: jobs.createSignal });
			jobs.jobCreated(job.id);
			return jsonResult(jobFormat(this)(job));
		},
	});
}
