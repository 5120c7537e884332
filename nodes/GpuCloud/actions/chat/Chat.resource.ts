import type { INodeProperties } from 'n8n-workflow';
import * as message from './message.operation';

export { message };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['chat'] } },
		options: [
			{
				name: 'Message a Model',
				value: 'message',
				description: 'Send a prompt or a conversation to a deployed text generation workload',
				action: 'Message a model',
			},
		],
		default: 'message',
	},
	...message.description,
];
