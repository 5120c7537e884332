import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import * as chat from './chat/Chat.resource';
import * as image from './image/Image.resource';
import * as inferenceEndpoint from './inferenceEndpoint/InferenceEndpoint.resource';
import * as job from './job/Job.resource';
import type { GpuCloudType } from './node.type';
import * as queue from './queue/Queue.resource';
import * as transcription from './transcription/Transcription.resource';

type Execute = (
	this: IExecuteFunctions,
	items: INodeExecutionData[],
) => Promise<INodeExecutionData[]>;

/** Every operation of every resource, as the node's parameters name them. */
const operations: {
	[R in GpuCloudType['resource']]: Record<
		Extract<GpuCloudType, { resource: R }>['operation'],
		{ execute: Execute }
	>;
} = {
	chat,
	image,
	inferenceEndpoint,
	job,
	queue,
	transcription,
};

function isResource(value: unknown): value is GpuCloudType['resource'] {
	return typeof value === 'string' && Object.hasOwn(operations, value);
}

export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const resource = this.getNodeParameter('resource', 0);
	const operation = this.getNodeParameter('operation', 0);
	if (!isResource(resource))
		throw new NodeOperationError(
			this.getNode(),
			`The resource "${String(resource)}" is not supported.`,
		);
	const byName: Record<string, { execute: Execute }> = operations[resource];
	const selected = typeof operation === 'string' ? byName[operation] : undefined;
	if (!selected)
		throw new NodeOperationError(
			this.getNode(),
			`The operation "${String(operation)}" is not supported for "${resource}".`,
		);
	return [await selected.execute.call(this, items)];
}
