import { NodeConnectionTypes, type INodeTypeDescription } from 'n8n-workflow';
import * as chat from './chat/Chat.resource';
import * as image from './image/Image.resource';
import * as inferenceEndpoint from './inferenceEndpoint/InferenceEndpoint.resource';
import * as job from './job/Job.resource';
import * as queue from './queue/Queue.resource';
import * as transcription from './transcription/Transcription.resource';

/** Resources served by a deployed workload rather than the management API. */
const WORKLOAD_RESOURCES = ['image', 'chat'];

/**
 * Version 1 of the node. The icon, subtitle and tool flag sit on the node class itself, where n8n's
 * lint looks for them. A later breaking change adds a version 2 next to this one.
 */
export const versionDescription: Omit<INodeTypeDescription, 'icon' | 'subtitle' | 'usableAsTool'> = {
  displayName: 'GPU Cloud',
  name: 'gpuCloud',
  group: ['transform'],
  version: 1,
  description: 'Run inference jobs, transcribe audio, generate images and chat with models on GPU Cloud',
  defaults: { name: 'GPU Cloud' },
  inputs: [NodeConnectionTypes.Main],
  outputs: [NodeConnectionTypes.Main],
  credentials: [
    { name: 'gpuCloudApi', required: true, displayOptions: { hide: { resource: WORKLOAD_RESOURCES } } },
    { name: 'gpuCloudWorkloadApi', required: true, displayOptions: { show: { resource: WORKLOAD_RESOURCES } } },
  ],
  // Where GPU Cloud reports the end of a job in webhook wait mode: n8n's resume URL of the paused execution.
  webhooks: [{ name: 'default', httpMethod: 'POST', responseMode: 'onReceived', path: '', restartWebhook: true }],
  properties: [
    {
      displayName: 'Resource',
      name: 'resource',
      type: 'options',
      noDataExpression: true,
      options: [
        { name: 'Chat', value: 'chat', description: 'Text generation with a deployed model' },
        { name: 'Image', value: 'image', description: 'Image generation with a deployed model' },
        { name: 'Inference Endpoint', value: 'inferenceEndpoint', description: 'The catalogue of hosted operations' },
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
