import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';
import { managementClient } from '../../transport';
import { jsonResult, readConcurrency, runItems } from '../../helpers/items';
import { readJobReference } from '../../helpers/parameters';
import { concurrencyOption, endpointLocator, jobIdField } from '../common.descriptions';

const properties: INodeProperties[] = [
	endpointLocator,
	{
		...jobIdField,
		description:
			'The ID of the job to cancel. Cancelling a job that has already ended changes nothing.',
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [concurrencyOption],
	},
];

const displayOptions = { show: { resource: ['job'], operation: ['cancel'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	const { client } = await managementClient(this);
	return await runItems(this, items, readConcurrency(this), {
		prepare: (i) => readJobReference(this, i),
		run: async ({ endpoint, jobId }, _i, signal) => {
			await client.jobs.cancel(endpoint, jobId, { signal });
			return jsonResult({ id: jobId, inference_endpoint_name: endpoint, cancelRequested: true });
		},
	});
}
