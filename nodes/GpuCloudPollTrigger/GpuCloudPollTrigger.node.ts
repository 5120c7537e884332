import type {
	IDataObject,
	ILoadOptionsFunctions,
	INodeExecutionData,
	INodePropertyOptions,
	INodeType,
	INodeTypeDescription,
	IPollFunctions,
} from 'n8n-workflow';
import { NodeConnectionTypes, NodeOperationError } from 'n8n-workflow';
import { z } from 'zod/v4';
import {
	isTerminalStatus,
	mapWithConcurrency,
	pages,
	type Job,
	type ManagementClient,
	type Settled,
} from '../../shared';
import { toNodeError } from '../GpuCloud/helpers/errors';
import { checkName } from '../GpuCloud/helpers/parameters';
import { managementClient } from '../GpuCloud/transport';
import { EVENTS, endTimeOf, jobItem } from '../GpuCloudTrigger/job-item';
import { boundOpenJobs, pollEndpoint, type EndpointCursor } from '../GpuCloudTrigger/polling';

/** Endpoints polled at once: a handful keeps a poll short without a burst against the rate limit. */
const ENDPOINT_CONCURRENCY = 4;
/** "Fetch Test Event" looks at the newest jobs of each endpoint only, up to this many pages. */
const TEST_EVENT_PAGES = 10;

const cursorSchema = z.object({ newest: z.string(), open: z.array(z.string()) });
/** Every result, or the first failure: a poll reads all endpoints or counts as not done. */
function allOrThrow<R>(settled: Settled<R>[]): R[] {
	return settled.map((result) => {
		if (!result.ok) throw result.error;
		return result.value;
	});
}

/**
 * The cursors n8n kept for this node; an unreadable one counts as that endpoint's first poll. Read
 * entry by entry: n8n's observable static data shows its `__dataChanged` flag as a key to some readers.
 */
function savedCursors(store: IDataObject): Record<string, EndpointCursor> {
	const cursors: Record<string, EndpointCursor> = {};
	const saved = store.cursors;
	if (typeof saved !== 'object' || saved === null) return cursors;
	for (const [name, value] of Object.entries(saved)) {
		const parsed = cursorSchema.safeParse(value);
		if (parsed.success) cursors[name] = parsed.data;
	}
	return cursors;
}

async function endpointNames(context: IPollFunctions, client: ManagementClient): Promise<string[]> {
	const chosen = context.getNodeParameter('endpoints', []);
	const names = (Array.isArray(chosen) ? chosen : [chosen]).map((name) =>
		checkName(name, 'Inference Endpoint Names or IDs'),
	);
	if (names.length > 0) return [...new Set(names)];
	const all: string[] = [];
	for await (const endpoint of client.endpoints.listAll()) all.push(endpoint.name);
	return all;
}

function readStatuses(context: IPollFunctions): Set<string> {
	const events = context.getNodeParameter('events', []);
	const statuses = new Set(Array.isArray(events) ? events.map(String) : []);
	if (statuses.size === 0)
		throw new NodeOperationError(context.getNode(), 'Events: choose at least one job ending.');
	return statuses;
}

/** The newest job, among each endpoint's newest 1,000, that ended in one of the statuses: a sample. */
async function latestEnded(
	client: ManagementClient,
	endpoints: readonly string[],
	statuses: ReadonlySet<string>,
): Promise<Job | undefined> {
	const found = await mapWithConcurrency(endpoints, ENDPOINT_CONCURRENCY, async (name) => {
		for await (const page of pages((query, options) => client.jobs.list(name, query, options), {
			maxPages: TEST_EVENT_PAGES,
		})) {
			const ended = page.items.filter(
				(job) => isTerminalStatus(job.status) && statuses.has(job.status),
			);
			if (ended.length > 0) return ended;
		}
		return [];
	});
	const endedAt = (job: Job) => Date.parse(endTimeOf(job) ?? job.update_time);
	return allOrThrow(found)
		.flat()
		.sort((a, b) => endedAt(b) - endedAt(a))[0];
}

export class GpuCloudPollTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'GPU Cloud Poll Trigger',
		name: 'gpuCloudPollTrigger',
		icon: { light: 'file:gpuCloud.svg', dark: 'file:gpuCloud.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle: '=Jobs: {{ $parameter["events"].join(", ") }}',
		description:
			"Starts the workflow when a GPU Cloud job ends, by polling the endpoints' job lists",
		defaults: { name: 'GPU Cloud Poll Trigger' },
		polling: true,
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'gpuCloudApi', required: true }],
		properties: [
			{
				displayName:
					"For an n8n that GPU Cloud cannot reach (a home server, a company network, a laptop): on the schedule below, this node reads the endpoints' job lists and starts the workflow once for each job that ended since the last look, also after a restart. Where GPU Cloud can reach n8n, the GPU Cloud Trigger reports jobs at once, without polling.",
				name: 'pollingNotice',
				type: 'notice',
				default: '',
			},
			{
				displayName: 'Inference Endpoint Names or IDs',
				name: 'endpoints',
				type: 'multiOptions',
				typeOptions: { loadOptionsMethod: 'getEndpoints' },
				default: [],
				description:
					'Whose jobs to watch; none chosen: every endpoint in the catalogue (read at each poll). Choose from the list, or specify IDs using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
			},
			{
				displayName: 'Events',
				name: 'events',
				type: 'multiOptions',
				options: EVENTS,
				default: ['succeeded', 'failed', 'cancelled'],
				required: true,
				description: 'Which job endings start the workflow',
			},
		],
	};

	methods = {
		loadOptions: {
			async getEndpoints(this: ILoadOptionsFunctions): Promise<INodePropertyOptions[]> {
				try {
					const { client } = await managementClient(this);
					const options: INodePropertyOptions[] = [];
					for await (const endpoint of client.endpoints.listAll())
						options.push({
							name:
								endpoint.display_name === endpoint.name
									? endpoint.name
									: `${endpoint.display_name} (${endpoint.name})`,
							value: endpoint.name,
						});
					return options;
				} catch (error) {
					throw toNodeError(this.getNode(), error, 0);
				}
			},
		},
	};

	/**
	 * One poll: the jobs of each endpoint that ended since the last poll, one item each, oldest ending
	 * first. The cursor lives in the node's static data, which n8n saves whenever a poll emits (and
	 * at activation), so a restart resumes from the last emission: no job is emitted twice, and jobs
	 * that ended while n8n was down come with the first poll after it. "Fetch Test Event" returns the
	 * latest ended job and leaves the cursor alone.
	 */
	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		const statuses = readStatuses(this);
		try {
			const { client } = await managementClient(this);
			const endpoints = await endpointNames(this, client);
			if (this.getMode() === 'manual') {
				const latest = await latestEnded(client, endpoints, statuses);
				if (!latest)
					throw new NodeOperationError(
						this.getNode(),
						`No job of ${endpoints.join(', ') || 'any endpoint'} has ended as chosen in Events among the newest ${TEST_EVENT_PAGES * 100} jobs of each endpoint.`,
					);
				return [this.helpers.returnJsonArray([jobItem(latest)])];
			}
			const store = this.getWorkflowStaticData('node');
			const saved = savedCursors(store);
			const results = allOrThrow(
				await mapWithConcurrency(endpoints, ENDPOINT_CONCURRENCY, (name) =>
					pollEndpoint(client, name, saved[name], statuses),
				),
			);
			const cursors: Record<string, EndpointCursor> = {};
			endpoints.forEach((name, index) => (cursors[name] = results[index].cursor));
			boundOpenJobs(cursors);
			// Written only once every endpoint was read: a failed poll leaves the cursor as it was.
			store.cursors = cursors;
			const ended = results
				.flatMap((result) => result.ended)
				.sort((a, b) => Date.parse(a.update_time) - Date.parse(b.update_time));
			return ended.length > 0
				? [this.helpers.returnJsonArray(ended.map((job) => jobItem(job)))]
				: null;
		} catch (error) {
			throw toNodeError(this.getNode(), error, 0);
		}
	}
}
