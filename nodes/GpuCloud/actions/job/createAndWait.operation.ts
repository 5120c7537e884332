import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';
import { createAndWaitForJobs, readWaitSettings } from '../../helpers/jobs';
import { jobFormat } from '../../helpers/output';
import { readConcurrency } from '../../helpers/items';
import { readLocatorName } from '../../helpers/parameters';
import { concurrencyOption, endpointLocator, waitProperties } from '../common.descriptions';
import { inputProperties, metadataOption } from './create.operation';
import { readJobRequest } from './request';

const properties: INodeProperties[] = [
	endpointLocator,
	...inputProperties,
	...waitProperties(true),
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [metadataOption, concurrencyOption],
	},
];

const displayOptions = { show: { resource: ['job'], operation: ['createAndWait'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	return await createAndWaitForJobs(
		this,
		items,
		readConcurrency(this),
		(i) => ({
			endpoint: readLocatorName(this, 'endpoint', i, 'Inference Endpoint'),
			...readJobRequest(this, i),
			wait: readWaitSettings(this, i, true),
		}),
		jobFormat(this),
	);
}
