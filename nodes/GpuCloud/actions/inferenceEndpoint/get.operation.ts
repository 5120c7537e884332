import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';
import { endpointAnswer } from '../../../../shared';
import { managementClient } from '../../transport';
import { jsonResult, readConcurrency, runItems } from '../../helpers/items';
import { toDataObject } from '../../helpers/output';
import { readLocatorName } from '../../helpers/parameters';
import { isToolRun } from '../../helpers/tool';
import { concurrencyOption, endpointLocator } from '../common.descriptions';

const properties: INodeProperties[] = [
	{ ...endpointLocator, description: 'The inference endpoint to read' },
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [concurrencyOption],
	},
];

const displayOptions = { show: { resource: ['inferenceEndpoint'], operation: ['get'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	const { client } = await managementClient(this);
	return await runItems(this, items, readConcurrency(this), {
		prepare: (i) => readLocatorName(this, 'endpoint', i, 'Inference Endpoint'),
		run: async (name, _i, signal) => {
			const endpoint = await client.endpoints.get(name, { signal });
			return jsonResult(toDataObject(isToolRun(this) ? endpointAnswer(endpoint) : endpoint));
		},
	});
}
