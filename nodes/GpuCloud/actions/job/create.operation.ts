import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';
import { LIMITS, PRESIGN_MAX_SECONDS } from '../../../../shared';
import { BinaryUploads } from '../../helpers/binary-upload';
import { attachFiles } from '../../helpers/jobs';
import { managementClient } from '../../transport';
import { inputSchemaCheck } from '../../helpers/input-schema';
import { jobFormat } from '../../helpers/output';
import { jsonResult, readConcurrency, runItems } from '../../helpers/items';
import { readLocatorName } from '../../helpers/parameters';
import { concurrencyOption, endpointLocator } from '../common.descriptions';
import { readJobWithFiles, readLinkLifetimeSeconds } from './request';

/** Without a wait to match, a link lives a day: time for a queued job to start on GPU Cloud. */
const LINK_MINUTES_WITHOUT_WAIT = 24 * 60;

const FROM_VERSION_2 = { '@version': [{ _cnd: { gte: 2 } }] };

/**
 * The job's input: version 1 has only the JSON box; version 2 shows the endpoint's own fields, with
 * the JSON box one switch away. The box keeps its name, so a version 1 workflow keeps its input.
 */
export const inputProperties: INodeProperties[] = [
	{
		displayName: 'Input',
		name: 'input',
		type: 'json',
		default: '{\n  "url": ""\n}',
		required: true,
		description:
			"The job's input as JSON. Its shape depends on the endpoint: see its input schema with Inference Endpoint > Get.",
		displayOptions: { show: { '@version': [1] } },
	},
	{
		displayName: 'Input',
		name: 'inputMode',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Using Fields Below',
				value: 'fields',
				description: "One field per property of the endpoint's input schema",
			},
			{ name: 'Using JSON', value: 'json', description: 'The whole input as one JSON object' },
		],
		default: 'fields',
		displayOptions: { show: FROM_VERSION_2 },
	},
	{
		displayName: 'Input Fields',
		name: 'inputFields',
		type: 'resourceMapper',
		noDataExpression: true,
		default: { mappingMode: 'defineBelow', value: null },
		required: true,
		typeOptions: {
			loadOptionsDependsOn: ['endpoint.value'],
			resourceMapper: {
				resourceMapperMethod: 'getEndpointFields',
				mode: 'add',
				fieldWords: { singular: 'field', plural: 'fields' },
				addAllFields: true,
				multiKeyMatch: false,
				supportAutoMap: false,
			},
		},
		displayOptions: { show: { ...FROM_VERSION_2, inputMode: ['fields'] } },
	},
	{
		// A resourceMapper field holds text, never a file: files come beside it, one per media field.
		displayName: 'Files for Media Fields',
		name: 'mediaFiles',
		type: 'fixedCollection',
		placeholder: 'Add File',
		typeOptions: { multipleValues: true },
		default: {},
		description: `Files from earlier nodes for the endpoint's media fields (the file GPU Cloud reads, such as a recording or an image), each smaller than ${LIMITS.transcriptionMaxBytes / 1e9} GB. Each is put in the bucket of the GPU Cloud Object Storage API credential and its field gets an expiring link to it.`,
		displayOptions: { show: { ...FROM_VERSION_2, inputMode: ['fields'] } },
		options: [
			{
				displayName: 'File',
				name: 'files',
				values: [
					{
						displayName: 'Media Field Name or ID',
						name: 'field',
						type: 'options',
						typeOptions: {
							loadOptionsMethod: 'getMediaFields',
							loadOptionsDependsOn: ['endpoint.value'],
						},
						default: '',
						required: true,
						description:
							'The field of the endpoint\'s input the file is for; only endpoints whose schema marks media fields list any. Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
					},
					{
						displayName: 'Input Binary Field',
						name: 'binaryPropertyName',
						type: 'string',
						default: 'data',
						required: true,
						description: 'The binary field of the input item holding the file',
					},
				],
			},
		],
	},
	{
		displayName: 'Input',
		name: 'input',
		type: 'json',
		default: '{}',
		required: true,
		description:
			"The job's input as JSON. Its shape depends on the endpoint: see its input schema with Inference Endpoint > Get.",
		displayOptions: { show: { ...FROM_VERSION_2, inputMode: ['json'] } },
	},
];

export const metadataOption: INodeProperties = {
	displayName: 'Metadata',
	name: 'metadata',
	type: 'json',
	default: '{}',
	description: `Your own JSON object kept with the job and returned with it (at most ${LIMITS.metadataMaxProperties} properties)`,
};

const properties: INodeProperties[] = [
	endpointLocator,
	...inputProperties,
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [
			metadataOption,
			{
				displayName: 'Webhook URL',
				name: 'webhookUrl',
				type: 'string',
				default: '',
				placeholder: 'e.g. https://n8n.example.com/webhook/gpu-cloud-jobs',
				description: `GPU Cloud POSTs the finished job to this address (up to ${LIMITS.webhookUrlMaxLength} characters), for example the URL of a GPU Cloud Trigger node`,
			},
			concurrencyOption,
			{
				displayName: 'Link Lifetime (Minutes)',
				name: 'linkLifetimeMinutes',
				type: 'number',
				typeOptions: { minValue: 1, maxValue: PRESIGN_MAX_SECONDS / 60, numberPrecision: 0 },
				default: LINK_MINUTES_WITHOUT_WAIT,
				displayOptions: { show: { '@version': [{ _cnd: { gte: 2 } }] } },
				description:
					'How long GPU Cloud may download the files given under Files for Media Fields, at most 7 days. This operation does not wait for the job, so the files stay in the bucket.',
			},
		],
	},
];

const displayOptions = { show: { resource: ['job'], operation: ['create'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	const { client } = await managementClient(this);
	const uploads = new BinaryUploads(this);
	const filesOfCreatedJobs = new Set<string>();
	try {
		return await runItems(this, items, readConcurrency(this), {
			prepare: async (i) => ({
				endpoint: readLocatorName(this, 'endpoint', i, 'Inference Endpoint'),
				...(await readJobWithFiles(this, i, uploads, {
					lifetimeSeconds: readLinkLifetimeSeconds(this, i, LINK_MINUTES_WITHOUT_WAIT * 60),
					keep: false,
				})),
			}),
			check: inputSchemaCheck(this, client),
			run: async (prepared, _i, _signal, jobs) => {
				const files = await attachFiles(prepared);
				const job = await client.jobs.create(prepared.endpoint, prepared.request, {
					signal: jobs.createSignal,
				});
				jobs.jobCreated(job.id);
				for (const key of files) filesOfCreatedJobs.add(key);
				return jsonResult(jobFormat(this)(job));
			},
		});
	} finally {
		// The node does not see the jobs end: their files stay for GPU Cloud (the links expire).
		// Files of items whose job was not created are of no use.
		await uploads.deleteAll(filesOfCreatedJobs);
	}
}
