import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
	type IWebhookFunctions,
	type IWebhookResponseData,
} from 'n8n-workflow';
import * as chat from './actions/chat/Chat.resource';
import * as image from './actions/image/Image.resource';
import * as inferenceEndpoint from './actions/inferenceEndpoint/InferenceEndpoint.resource';
import * as job from './actions/job/Job.resource';
import * as queue from './actions/queue/Queue.resource';
import { router } from './actions/router';
import * as transcription from './actions/transcription/Transcription.resource';
import { deleteUploaded } from './helpers/binary-upload';
import { resumeOnJobWebhook } from './helpers/jobs';
import { jobOutput, transcriptionOutput } from './helpers/output';
import { listSearch, loadOptions, resourceMapping } from './methods';
import { nothingToRegister } from './webhook/lifecycle';

/** Resources served by a deployed workload rather than the management API. */
const WORKLOAD_RESOURCES = ['image', 'chat'];

/**
 * The node, versions 1 and 2 in one description (parameters that differ say which version shows
 * them, n8n's way for small changes); each resource file brings its operations and their parameters. The whole
 * description sits in this file, where n8n's lint and package scanner look for it.
 */
export class GpuCloud implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'GPU Cloud',
		name: 'gpuCloud',
		icon: { light: 'file:gpuCloud.svg', dark: 'file:gpuCloud.dark.svg' },
		group: ['transform'],
		// 2: Job > Create and Create and Wait take the endpoint's input as fields (see job/create.operation.ts).
		version: [1, 2],
		description:
			'Run inference jobs, transcribe audio, generate images and chat with models on GPU Cloud',
		subtitle: '={{ $parameter["operation"] + ": " + $parameter["resource"] }}',
		defaults: { name: 'GPU Cloud' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [
			{
				name: 'gpuCloudApi',
				required: true,
				displayOptions: { hide: { resource: WORKLOAD_RESOURCES } },
			},
			{
				name: 'gpuCloudWorkloadApi',
				required: true,
				displayOptions: { show: { resource: WORKLOAD_RESOURCES } },
			},
			{
				// Transcription's Binary File source and Job's Files for Media Fields need it, said before
				// any request when missing; Image > Generate, given one, puts its images there. Not beside
				// Using JSON, which takes no file. (A credential's displayOptions take plain values only,
				// and one entry per type counts, so version 1's Job operations show it too, unused.)
				name: 'gpuCloudObjectStorageApi',
				required: false,
				displayOptions: {
					show: {
						resource: ['transcription', 'image', 'job'],
						operation: ['transcribe', 'generate', 'create', 'createAndWait'],
					},
					hide: { source: ['url'], inputMode: ['json'] },
				},
			},
		],
		// Where GPU Cloud reports the end of a job in webhook wait mode: n8n's resume URL of the paused execution.
		webhooks: [
			{
				name: 'default',
				httpMethod: 'POST',
				responseMode: 'onReceived',
				path: '',
				restartWebhook: true,
			},
		],
		properties: [
			{
				displayName: 'Resource',
				name: 'resource',
				type: 'options',
				noDataExpression: true,
				options: [
					{ name: 'Chat', value: 'chat', description: 'Text generation with a deployed model' },
					{ name: 'Image', value: 'image', description: 'Image generation with a deployed model' },
					{
						name: 'Inference Endpoint',
						value: 'inferenceEndpoint',
						description: 'The catalogue of hosted operations',
					},
					{ name: 'Job', value: 'job', description: 'Jobs on any inference endpoint' },
					{ name: 'Queue', value: 'queue', description: 'Queues of container groups in a project' },
					{ name: 'Transcription', value: 'transcription', description: 'Speech to text' },
				],
				default: 'transcription',
			},
			...chat.description,
			...image.description,
			...inferenceEndpoint.description,
			...job.description,
			...queue.description,
			...transcription.description,
		],
	};

	methods = { listSearch, loadOptions, resourceMapping };

	// n8n serves the resume URL itself; each job is created with it as its `webhook_url`.
	webhookMethods = { default: nothingToRegister };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	}

	/** GPU Cloud reporting the end of a job to a paused execution (webhook wait mode). */
	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		const format =
			this.getNodeParameter('resource', 'job') === 'transcription'
				? transcriptionOutput
				: jobOutput;
		// Files uploaded for the jobs are deleted once every job of the execution has ended.
		return await resumeOnJobWebhook(this, format, (keys) => deleteUploaded(this, keys));
	}
}
