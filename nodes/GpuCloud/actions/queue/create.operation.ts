import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';
import { LIMITS, createQueueRequestSchema, type CreateQueueRequest } from '../../../../shared';
import { managementClient } from '../../transport';
import { jsonResult, readConcurrency, runItems } from '../../helpers/items';
import { toDataObject } from '../../helpers/output';
import { check, checkName, readCollection, readString } from '../../helpers/parameters';
import { concurrencyOption, NAME_HINT } from '../common.descriptions';

const properties: INodeProperties[] = [
	{
		displayName: 'Project Name',
		name: 'project',
		type: 'string',
		default: '',
		placeholder: 'e.g. default',
		hint: "Leave empty to use the credential's Default Project",
		description: 'The project the queue belongs to',
	},
	{
		displayName: 'Queue Name',
		name: 'name',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. image-jobs',
		hint: `${NAME_HINT}; unique within the project`,
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [
			concurrencyOption,
			{
				displayName: 'Description',
				name: 'description',
				type: 'string',
				typeOptions: { rows: 3 },
				default: '',
				description: `Free notes about the queue, at most ${LIMITS.queueDescriptionMaxLength} characters`,
			},
			{
				displayName: 'Display Name',
				name: 'displayName',
				type: 'string',
				default: '',
				placeholder: 'e.g. Image Jobs',
				description: `A readable name, ${LIMITS.nameMinLength}-${LIMITS.displayNameMaxLength} characters; defaults to the queue name`,
			},
		],
	},
];

const displayOptions = { show: { resource: ['queue'], operation: ['create'] } };

export const description = updateDisplayOptions(displayOptions, properties);

const { display_name: displayNameSchema, description: descriptionSchema } =
	createQueueRequestSchema.shape;

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	const { client, credentials } = await managementClient(this);
	return await runItems(this, items, readConcurrency(this), {
		prepare: (i) => {
			const projectField = readString(this, 'project', i).trim();
			const project =
				projectField === ''
					? checkName(
							credentials.defaultProject ?? '',
							"Project Name (or the credential's Default Project)",
						)
					: checkName(projectField, 'Project Name');
			const options = readCollection(this, 'options', i);
			const request: CreateQueueRequest = {
				name: checkName(readString(this, 'name', i), 'Queue Name'),
			};
			if (typeof options.displayName === 'string' && options.displayName !== '') {
				request.display_name = check(displayNameSchema, options.displayName, 'Display Name');
			}
			if (typeof options.description === 'string' && options.description !== '') {
				request.description = check(descriptionSchema, options.description, 'Description');
			}
			return { project, request };
		},
		run: async ({ project, request }, _i, signal) =>
			jsonResult(toDataObject(await client.queues.create(project, request, { signal }))),
	});
}
