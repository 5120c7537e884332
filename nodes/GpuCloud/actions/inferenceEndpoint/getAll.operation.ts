import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';
import { z } from 'zod/v4';
import { LIMITS, pageSizeSchema, type InferenceEndpoint } from '../../../../shared';
import { managementClient } from '../../transport';
import { jsonResult, readConcurrency, runItems } from '../../helpers/items';
import { toDataObject } from '../../helpers/output';
import { check, readCollection } from '../../helpers/parameters';
import { concurrencyOption } from '../common.descriptions';

/** The largest page the service serves: the fewest requests for the whole catalogue. */
const DEFAULT_PAGE_SIZE = LIMITS.pageSizeMax;

const properties: INodeProperties[] = [
	{
		displayName: 'Return All',
		name: 'returnAll',
		type: 'boolean',
		default: false,
		description: 'Whether to return all results or only up to a given limit',
	},
	{
		displayName: 'Limit',
		name: 'limit',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 50,
		description: 'Max number of results to return',
		displayOptions: { show: { returnAll: [false] } },
	},
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

const limitSchema = z
	.number({ error: 'must be a whole number' })
	.int({ error: 'must be a whole number' })
	.min(1, { error: 'must be at least 1' });

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	const { client } = await managementClient(this);
	return await runItems(this, items, readConcurrency(this), {
		prepare: (i) => {
			const returnAll = this.getNodeParameter('returnAll', i, false) === true;
			const { pageSize } = readCollection(this, 'options', i);
			return {
				limit: returnAll
					? Number.POSITIVE_INFINITY
					: check(limitSchema, this.getNodeParameter('limit', i, 50), 'Limit'),
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
			return jsonResult(endpoints.map(toDataObject));
		},
	});
}
