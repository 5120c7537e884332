import type { AllEntities } from 'n8n-workflow';

type NodeMap = {
	job: 'create' | 'get' | 'getAll' | 'cancel' | 'waitForCompletion' | 'createAndWait';
	transcription: 'transcribe';
	inferenceEndpoint: 'getAll' | 'get';
	queue: 'create';
	image: 'generate';
	chat: 'message';
};

export type GpuCloudType = AllEntities<NodeMap>;
export type GpuCloudResource = GpuCloudType['resource'];
