import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';
import { managementClient } from '../../transport';
import { finish, readWaitSettings } from '../../helpers/jobs';
import { jobFormat } from '../../helpers/output';
import { jsonResult, readConcurrency, runItems } from '../../helpers/items';
import { readJobReference } from '../../helpers/parameters';
import {
	concurrencyOption,
	endpointLocator,
	jobIdField,
	waitProperties,
} from '../common.descriptions';

const properties: INodeProperties[] = [
	endpointLocator,
	jobIdField,
	...waitProperties(false),
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [concurrencyOption],
	},
];

const displayOptions = { show: { resource: ['job'], operation: ['waitForCompletion'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	const { client } = await managementClient(this);
	return await runItems(this, items, readConcurrency(this), {
		prepare: (i) => ({ ...readJobReference(this, i), wait: readWaitSettings(this, i, false) }),
		run: async ({ endpoint, jobId, wait }, _i, signal) => {
			const job = await client.jobs.wait(endpoint, jobId, { timeoutMs: wait.timeoutMs, signal });
			return jsonResult(jobFormat(this)(finish(job, wait.onFailure)));
		},
	});
}
