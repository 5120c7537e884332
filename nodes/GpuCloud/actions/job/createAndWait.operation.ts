import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';
import { PRESIGN_MAX_SECONDS } from '../../../../shared';
import { linkLifetimeSeconds, withUploadsDeletedAfter } from '../../helpers/binary-upload';
import { createAndWaitForJobs, readWaitSettings } from '../../helpers/jobs';
import { jobFormat } from '../../helpers/output';
import { readConcurrency } from '../../helpers/items';
import { readLocatorName } from '../../helpers/parameters';
import { concurrencyOption, endpointLocator, waitProperties } from '../common.descriptions';
import { inputProperties, metadataOption } from './create.operation';
import { readJobWithFiles, readLinkLifetimeSeconds } from './request';

const properties: INodeProperties[] = [
	endpointLocator,
	...inputProperties,
	...waitProperties(true),
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [
			metadataOption,
			concurrencyOption,
			{
				displayName: 'Keep Uploaded Files',
				name: 'keepUploadedFile',
				type: 'boolean',
				default: false,
				displayOptions: { show: { '@version': [{ _cnd: { gte: 2 } }] } },
				description:
					'Whether to leave the files given under Files for Media Fields in the bucket after the job (their links still expire)',
			},
			{
				displayName: 'Link Lifetime (Minutes)',
				name: 'linkLifetimeMinutes',
				type: 'number',
				typeOptions: { minValue: 1, maxValue: PRESIGN_MAX_SECONDS / 60, numberPrecision: 0 },
				default: 60,
				displayOptions: { show: { '@version': [{ _cnd: { gte: 2 } }] } },
				description:
					'How long GPU Cloud may download the files given under Files for Media Fields; without this option, as long as the node waits (Timeout), at most 7 days',
			},
		],
	},
];

const displayOptions = { show: { resource: ['job'], operation: ['createAndWait'] } };

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	return withUploadsDeletedAfter(this, (uploads, keep) =>
		createAndWaitForJobs(
			this,
			items,
			readConcurrency(this),
			async (i) => {
				const wait = readWaitSettings(this, i, true);
				return {
					endpoint: readLocatorName(this, 'endpoint', i, 'Inference Endpoint'),
					...(await readJobWithFiles(this, i, uploads, {
						lifetimeSeconds: readLinkLifetimeSeconds(this, i, linkLifetimeSeconds(wait.timeoutMs)),
						keep,
					})),
					wait,
				};
			},
			jobFormat(this),
		),
	);
}
