import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';
import { JOB_STATUSES, LIMITS, jobListAnswer, jobStatusSchema, type Job } from '../../../../shared';
import { managementClient } from '../../transport';
import { jobOutput, toDataObject } from '../../helpers/output';
import { isToolRun } from '../../helpers/tool';
import { jsonResult, readConcurrency, runItems } from '../../helpers/items';
import {
	check,
	readCollection,
	readDateTime,
	readLimit,
	readLocatorName,
} from '../../helpers/parameters';
import { concurrencyOption, endpointLocator, returnAllFields } from '../common.descriptions';

const properties: INodeProperties[] = [
	{ ...endpointLocator, description: 'The inference endpoint whose jobs to list' },
	...returnAllFields,
	{
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add filter',
		default: {},
		description:
			'GPU Cloud lists all of an endpoint\'s jobs, newest first, and filters none: these filters are applied by the node to the jobs it reads. With "Created After" it stops reading at the first older job.',
		options: [
			{
				displayName: 'Created After',
				name: 'createdAfter',
				type: 'dateTime',
				default: '',
				description: 'Only jobs created at or after this time',
			},
			{
				displayName: 'Created Before',
				name: 'createdBefore',
				type: 'dateTime',
				default: '',
				description: 'Only jobs created before this time',
			},
			{
				displayName: 'Status',
				name: 'status',
				type: 'multiOptions',
				options: JOB_STATUSES.map((status) => ({
					name: status.charAt(0).toUpperCase() + status.slice(1),
					value: status,
				})),
				default: [],
				description: 'Only jobs in one of these statuses. None chosen: every status.',
			},
		],
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [concurrencyOption],
	},
];

const displayOptions = { show: { resource: ['job'], operation: ['getAll'] } };

export const description = updateDisplayOptions(displayOptions, properties);

interface JobFilter {
	statuses: ReadonlySet<string>;
	createdAfter?: number;
	createdBefore?: number;
}

function readFilter(context: IExecuteFunctions, itemIndex: number): JobFilter {
	const filters = readCollection(context, 'filters', itemIndex);
	const status = filters.status ?? [];
	const statuses = (Array.isArray(status) ? status : [status]).map((value) =>
		check(jobStatusSchema, value, 'Status'),
	);
	return {
		statuses: new Set(statuses),
		createdAfter: readDateTime(context, filters.createdAfter, 'Created After'),
		createdBefore: readDateTime(context, filters.createdBefore, 'Created Before'),
	};
}

function matches(job: Job, filter: JobFilter): boolean {
	const created = Date.parse(job.create_time);
	return (
		(filter.statuses.size === 0 || filter.statuses.has(job.status)) &&
		(filter.createdBefore === undefined || created < filter.createdBefore)
	);
}

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	const { client } = await managementClient(this);
	return await runItems(this, items, readConcurrency(this), {
		prepare: (i) => ({
			endpoint: readLocatorName(this, 'endpoint', i, 'Inference Endpoint'),
			limit: readLimit(this, i),
			filter: readFilter(this, i),
		}),
		run: async ({ endpoint, limit, filter }, _i, signal) => {
			const filtered =
				filter.statuses.size > 0 ||
				filter.createdAfter !== undefined ||
				filter.createdBefore !== undefined;
			// Unfiltered, a limit of 5 costs one request of page size 5; filtered, full pages.
			const pageSize = filtered ? LIMITS.pageSizeMax : Math.min(limit, LIMITS.pageSizeMax);
			const jobs: Job[] = [];
			for await (const job of client.jobs.listAll(endpoint, { pageSize, signal })) {
				// Newest first: every job after this one is older still.
				if (filter.createdAfter !== undefined && Date.parse(job.create_time) < filter.createdAfter)
					break;
				if (!matches(job, filter)) continue;
				jobs.push(job);
				if (jobs.length >= limit) break;
			}
			return jsonResult(isToolRun(this) ? toDataObject(jobListAnswer(jobs)) : jobs.map(jobOutput));
		},
	});
}
