import type { INodeProperties } from 'n8n-workflow';
import * as cancel from './cancel.operation';
import * as create from './create.operation';
import * as createAndWait from './createAndWait.operation';
import * as get from './get.operation';
import * as getAll from './getAll.operation';
import * as waitForCompletion from './waitForCompletion.operation';

export { cancel, create, createAndWait, get, getAll, waitForCompletion };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['job'] } },
		options: [
			{ name: 'Cancel', value: 'cancel', description: 'Cancel a job', action: 'Cancel a job' },
			{
				name: 'Create',
				value: 'create',
				description: 'Start a job on an inference endpoint and return at once',
				action: 'Create a job',
			},
			{
				name: 'Create and Wait',
				value: 'createAndWait',
				description: 'Start a job and output it once it has ended',
				action: 'Create a job and wait for it',
			},
			{
				name: 'Get',
				value: 'get',
				description: 'Read a job: its status and, once done, its output',
				action: 'Get a job',
			},
			{
				name: 'Get Many',
				value: 'getAll',
				description: "List an endpoint's jobs, newest first",
				action: 'Get many jobs',
			},
			{
				name: 'Wait for Completion',
				value: 'waitForCompletion',
				description: 'Wait until an existing job has ended',
				action: 'Wait for a job to complete',
			},
		],
		default: 'createAndWait',
	},
	...cancel.description,
	...create.description,
	...createAndWait.description,
	...get.description,
	...getAll.description,
	...waitForCompletion.description,
];
