import type { INodeProperties } from 'n8n-workflow';
import * as create from './create.operation';

export { create };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['queue'] } },
		options: [
			{
				name: 'Create',
				value: 'create',
				description: 'Create a queue in a project',
				action: 'Create a queue',
			},
		],
		default: 'create',
	},
	...create.description,
];
