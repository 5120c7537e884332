import type {
  IExecuteFunctions,
  INodeExecutionData,
  INodeType,
  INodeTypeDescription,
  IWebhookFunctions,
  IWebhookResponseData,
} from 'n8n-workflow';
import { router } from './actions/router';
import { versionDescription } from './actions/versionDescription';
import { resumeOnJobWebhook } from './helpers/jobs';
import { jobOutput, transcriptionOutput } from './helpers/output';
import { listSearch } from './methods';

export class GpuCloud implements INodeType {
  description: INodeTypeDescription = {
    ...versionDescription,
    icon: { light: 'file:gpuCloud.svg', dark: 'file:gpuCloud.dark.svg' },
    subtitle: '={{ $parameter["operation"] + ": " + $parameter["resource"] }}',
    usableAsTool: true,
  };

  methods = { listSearch };

  async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
    return await router.call(this);
  }

  /** GPU Cloud reporting the end of a job to a paused execution (webhook wait mode). */
  async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
    const format = this.getNodeParameter('resource', 'job') === 'transcription' ? transcriptionOutput : jobOutput;
    return await resumeOnJobWebhook(this, format);
  }
}
