import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';
import { z } from 'zod/v4';
import { TOOL_PARAMETER_RULES, jobAnswer } from '../../../../shared';
import { managementClient } from '../../transport';
import { jobOutput, toDataObject } from '../../helpers/output';
import { jsonResult, readConcurrency, runItems } from '../../helpers/items';
import { check, readJobReference } from '../../helpers/parameters';
import { isToolRun } from '../../helpers/tool';
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
		options: [
			concurrencyOption,
			{
				displayName: 'Output Offset',
				name: 'outputOffset',
				type: 'number',
				typeOptions: { minValue: 0 },
				default: 0,
				description: `${TOOL_PARAMETER_RULES.outputOffset} Read only when the node runs as an AI tool. Other runs return the whole output.`,
			},
		],
	},
];

const offsetSchema = z
	.number({ error: 'must be a whole number of 0 or more' })
	.int({ error: 'must be a whole number of 0 or more' })
	.min(0, { error: 'must be a whole number of 0 or more' });

const displayOptions = { show: { resource: ['job'], operation: ['get'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	const { client } = await managementClient(this);
	const asTool = isToolRun(this);
	return await runItems(this, items, readConcurrency(this), {
		prepare: (i) => ({
			...readJobReference(this, i),
			outputOffset: asTool
				? check(offsetSchema, this.getNodeParameter('options.outputOffset', i, 0), 'Output Offset')
				: 0,
		}),
		run: async ({ endpoint, jobId, outputOffset }, _i, signal) => {
			const job = await client.jobs.get(endpoint, jobId, { signal });
			return jsonResult(asTool ? toDataObject(jobAnswer(job, { outputOffset })) : jobOutput(job));
		},
	});
}
