import type { INodeProperties } from 'n8n-workflow';
import * as get from './get.operation';
import * as getAll from './getAll.operation';

export { get, getAll };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['inferenceEndpoint'] } },
		options: [
			{
				name: 'Get',
				value: 'get',
				description: 'Read one endpoint of the catalogue',
				action: 'Get an inference endpoint',
			},
			{
				name: 'Get Many',
				value: 'getAll',
				description: 'List the endpoints your organization can run',
				action: 'Get many inference endpoints',
			},
		],
		default: 'getAll',
	},
	...get.description,
	...getAll.description,
];
