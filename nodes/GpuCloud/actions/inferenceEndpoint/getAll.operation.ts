import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';
import {
	LIMITS,
	catalogueAnswer,
	pageSizeSchema,
	type InferenceEndpoint,
} from '../../../../shared';
import { managementClient } from '../../transport';
import { jsonResult, readConcurrency, runItems } from '../../helpers/items';
import { toDataObject } from '../../helpers/output';
import { check, readCollection, readLimit } from '../../helpers/parameters';
import { isToolRun } from '../../helpers/tool';
import { concurrencyOption, returnAllFields } from '../common.descriptions';

/** The largest page the service serves: the fewest requests for the whole catalogue. */
const DEFAULT_PAGE_SIZE = LIMITS.pageSizeMax;

const properties: INodeProperties[] = [
	...returnAllFields,
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [
			{
				displayName: 'Page Size',
				name: 'pageSize',
				type: 'number',
				typeOptions: { minValue: 1, maxValue: LIMITS.pageSizeMax },
				default: DEFAULT_PAGE_SIZE,
				description: `How many endpoints to fetch per request (1-${LIMITS.pageSizeMax})`,
			},
			concurrencyOption,
		],
	},
];

const displayOptions = { show: { resource: ['inferenceEndpoint'], operation: ['getAll'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	const { client } = await managementClient(this);
	return await runItems(this, items, readConcurrency(this), {
		prepare: (i) => {
			const { pageSize } = readCollection(this, 'options', i);
			return {
				limit: readLimit(this, i),
				pageSize: check(pageSizeSchema, pageSize ?? LIMITS.pageSizeMax, 'Page Size'),
			};
		},
		run: async ({ limit, pageSize }, _i, signal) => {
			const endpoints: InferenceEndpoint[] = [];
			// Ask for no more than needed: a limit of 5 costs one request of page size 5.
			for await (const endpoint of client.endpoints.listAll({
				pageSize: Math.min(pageSize, limit),
				signal,
			})) {
				endpoints.push(endpoint);
				if (endpoints.length >= limit) break;
			}
			// A model gets the catalogue as one answer sized for it; a workflow, one item per endpoint.
			return jsonResult(
				isToolRun(this) ? toDataObject(catalogueAnswer(endpoints)) : endpoints.map(toDataObject),
			);
		},
	});
}
