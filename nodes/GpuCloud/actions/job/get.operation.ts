import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';
import { managementClient } from '../../transport';
import { jobOutput } from '../../helpers/output';
import { jsonResult, readConcurrency, runItems } from '../../helpers/items';
import { readJobReference } from '../../helpers/parameters';
import { concurrencyOption, endpointLocator, jobIdField } from '../common.descriptions';

const properties: INodeProperties[] = [
	endpointLocator,
	jobIdField,
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [concurrencyOption],
	},
];

const displayOptions = { show: { resource: ['job'], operation: ['get'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	const { client } = await managementClient(this);
	return await runItems(this, items, readConcurrency(this), {
		prepare: (i) => readJobReference(this, i),
		run: async ({ endpoint, jobId }, _i, signal) =>
			jsonResult(jobOutput(await client.jobs.get(endpoint, jobId, { signal }))),
	});
}
