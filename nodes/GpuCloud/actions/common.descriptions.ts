import type { INodeProperties } from 'n8n-workflow';
import { LIMITS, NAME_PATTERN } from '../../../shared';
import { DEFAULT_CONCURRENCY } from '../helpers/items';

export const NAME_HINT =
	'2-63 lower-case letters, digits or hyphens; starts with a letter, ends with a letter or digit';

export const endpointLocator: INodeProperties = {
	displayName: 'Inference Endpoint',
	name: 'endpoint',
	type: 'resourceLocator',
	default: { mode: 'list', value: '' },
	required: true,
	description: 'The inference endpoint that runs the job',
	modes: [
		{
			displayName: 'From List',
			name: 'list',
			type: 'list',
			placeholder: 'Select an endpoint...',
			typeOptions: { searchListMethod: 'searchEndpoints', searchable: true },
		},
		{
			displayName: 'By Name',
			name: 'name',
			type: 'string',
			placeholder: 'e.g. transcribe',
			hint: NAME_HINT,
			validation: [
				{
					type: 'regex',
					properties: {
						regex: NAME_PATTERN.source,
						errorMessage: `Not a valid endpoint name: ${NAME_HINT}`,
					},
				},
			],
		},
	],
};

/** "Return All" and "Limit", as every n8n Get Many offers them. */
export const returnAllFields: INodeProperties[] = [
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
];

export const jobIdField: INodeProperties = {
	displayName: 'Job ID',
	name: 'jobId',
	type: 'string',
	default: '',
	required: true,
	placeholder: 'e.g. 3f2a9c1e-8b4d-4e6f-9a0b-1c2d3e4f5a6b',
	description: 'The ID GPU Cloud returned when the job was created (the "ID" field of a job)',
};

/** Whether a wait may use n8n's resume webhook: only where the node itself creates the job. */
export function waitProperties(withWebhookMode: boolean): INodeProperties[] {
	const mode: INodeProperties = {
		displayName: 'Wait Mode',
		name: 'waitMode',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Poll',
				value: 'poll',
				description:
					'The node checks the job periodically, briefly at first and less often as time passes',
			},
			{
				name: 'Webhook (Pause the Execution)',
				value: 'webhook',
				description:
					'The execution pauses without using resources and resumes when GPU Cloud reports the end of the job. GPU Cloud must be able to reach this n8n instance. With several items, the last job created reports back and the others are read then (and waited for, should they still run).',
			},
		],
		default: 'poll',
	};
	const timeout: INodeProperties = {
		displayName: 'Timeout (Minutes)',
		name: 'timeoutMinutes',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 7 * 24 * 60 },
		default: 60,
		description:
			'How long to wait for the job to end. The job keeps running on GPU Cloud after a timeout. In webhook mode n8n does not run this node again at the deadline: it passes the items on with the job ID and "waitTimedOut: true" but without the result, so add a Job > Get after this node (or use Poll) to read it.',
	};
	const onFailure: INodeProperties = {
		displayName: 'On Failed or Cancelled Job',
		name: 'onJobFailure',
		type: 'options',
		options: [
			{
				name: 'Stop With an Error',
				value: 'error',
				description: 'The item fails (in webhook mode the job is output, see below)',
			},
			{
				name: 'Output the Job',
				value: 'output',
				description: 'The job is output with its status and error like any other',
			},
		],
		default: 'error',
		description:
			'In webhook mode the workflow resumes after this node, so a failed or cancelled job is always output, with "status" and "error"',
	};
	return withWebhookMode ? [mode, timeout, onFailure] : [timeout, onFailure];
}

export const concurrencyOption: INodeProperties = {
	displayName: 'Concurrency',
	name: 'concurrency',
	type: 'number',
	typeOptions: { minValue: 1, maxValue: 64 },
	default: DEFAULT_CONCURRENCY,
	description: `How many input items to process at the same time. Management requests are also held to the credential's Requests per Minute (${LIMITS.rateLimitPerMinute} unless raised). With a round trip of about 0.1 s, ${DEFAULT_CONCURRENCY} at a time can send about ${(DEFAULT_CONCURRENCY * 600).toLocaleString('en-US')} requests a minute; raise this only for a higher limit.`,
};
