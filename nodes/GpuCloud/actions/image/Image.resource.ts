import type { INodeProperties } from 'n8n-workflow';
import * as generate from './generate.operation';

export { generate };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['image'] } },
		options: [
			{
				name: 'Generate',
				value: 'generate',
				description: 'Create images with a deployed image generation workload',
				action: 'Generate an image',
			},
		],
		default: 'generate',
	},
	...generate.description,
];
