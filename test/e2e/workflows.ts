import { randomUUID } from 'node:crypto';

/**
 * The credentials and workflows the end-to-end run imports into n8n, as n8n's own export format.
 * Node types carry the prefix n8n gives our package where it was loaded from:
 * `n8n-nodes-gpu-cloud.` for a community package in `<user folder>/.n8n/nodes`, `CUSTOM.` for a
 * directory in N8N_CUSTOM_EXTENSIONS.
 */

export const PACKAGE_PREFIX = 'n8n-nodes-gpu-cloud';
export const CUSTOM_PREFIX = 'CUSTOM';

export const CREDENTIALS = {
  management: { id: 'e2eGpuCloudApi01', name: 'GPU Cloud (emulator)' },
  image: { id: 'e2eImageWorkload', name: 'GPU Cloud image workload (emulator)' },
  chat: { id: 'e2eChatWorkload1', name: 'GPU Cloud chat workload (emulator)' },
};

export interface EmulatorAccess {
  baseUrl: string;
  imageUrl: string;
  chatUrl: string;
  apiKey: string;
  organization: string;
  project: string;
}

export function credentials(emulator: EmulatorAccess): unknown[] {
  return [
    {
      ...CREDENTIALS.management,
      type: 'gpuCloudApi',
      data: { apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, organizationName: emulator.organization, defaultProject: emulator.project },
    },
    { ...CREDENTIALS.image, type: 'gpuCloudWorkloadApi', data: { serviceUrl: emulator.imageUrl, apiKey: emulator.apiKey } },
    { ...CREDENTIALS.chat, type: 'gpuCloudWorkloadApi', data: { serviceUrl: emulator.chatUrl, apiKey: emulator.apiKey } },
  ];
}

interface NodeSpec {
  name: string;
  type: string;
  typeVersion?: number;
  parameters: Record<string, unknown>;
  webhookId?: string;
  credentials?: Record<string, { id: string; name: string }>;
}

const management = { gpuCloudApi: CREDENTIALS.management };

export interface WorkflowJson {
  id: string;
  name: string;
  nodes: Array<Record<string, unknown>>;
  connections: Record<string, unknown>;
  active: boolean;
  settings: Record<string, unknown>;
}

function toNodes(specs: NodeSpec[]): Array<Record<string, unknown>> {
  return specs.map((spec, index) => ({
    id: randomUUID(),
    name: spec.name,
    type: spec.type,
    typeVersion: spec.typeVersion ?? 1,
    position: [index * 220, 0],
    parameters: spec.parameters,
    ...(spec.webhookId ? { webhookId: spec.webhookId } : {}),
    ...(spec.credentials ? { credentials: spec.credentials } : {}),
  }));
}

const link = (node: string) => ({ node, type: 'main', index: 0 });

/** A straight line of nodes, each feeding the next. */
function chain(id: string, name: string, specs: NodeSpec[]): WorkflowJson {
  const connections: Record<string, unknown> = {};
  for (let index = 0; index + 1 < specs.length; index++) {
    connections[specs[index].name] = { main: [[link(specs[index + 1].name)]] };
  }
  return { id, name, nodes: toNodes(specs), connections, active: false, settings: { executionOrder: 'v1' } };
}

/** One start node feeding several independent nodes. */
function fanOut(id: string, name: string, first: NodeSpec, branches: NodeSpec[]): WorkflowJson {
  const connections = { [first.name]: { main: [branches.map((branch) => link(branch.name))] } };
  return { id, name, nodes: toNodes([first, ...branches]), connections, active: false, settings: { executionOrder: 'v1' } };
}

const start: NodeSpec = { name: 'Start', type: 'n8n-nodes-base.manualTrigger', parameters: {} };

const byName = (value: string) => ({ __rl: true, mode: 'name', value });

/** n8n's HTTP Request node posting the item it receives, and the execution id, to the receiver. */
function report(url: string): NodeSpec {
  return {
    name: 'Report',
    type: 'n8n-nodes-base.httpRequest',
    typeVersion: 4.2,
    parameters: {
      method: 'POST',
      url,
      sendBody: true,
      specifyBody: 'json',
      jsonBody: '={{ JSON.stringify({ executionId: $execution.id, item: $json }) }}',
      options: {},
    },
  };
}

export const IDS = {
  createJob: 'e2eCreateJob',
  listEndpoints: 'e2eListEndpoints',
  transcribePoll: 'e2eTranscribePoll',
  customList: 'e2eCustomList',
  workloads: 'e2eWorkloads',
  trigger: 'e2eTrigger',
  resume: 'e2eWebhookResume',
};

export function createJob(prefix: string, marker: string): WorkflowJson {
  return chain(IDS.createJob, 'e2e: create a job', [
    start,
    {
      name: 'Create Job',
      type: `${prefix}.gpuCloud`,
      credentials: management,
      parameters: {
        resource: 'job',
        operation: 'create',
        endpoint: byName('transcribe'),
        input: JSON.stringify({ url: 'https://files.example/e2e-create.mp3?signature=e2e' }),
        options: { metadata: JSON.stringify({ e2e: marker }) },
      },
    },
  ]);
}

export function listEndpoints(prefix: string, id = IDS.listEndpoints): WorkflowJson {
  return chain(id, `e2e: list endpoints (${prefix})`, [
    start,
    {
      name: 'List Endpoints',
      type: `${prefix}.gpuCloud`,
      credentials: management,
      parameters: { resource: 'inferenceEndpoint', operation: 'getAll', returnAll: true, options: {} },
    },
  ]);
}

export function transcribePoll(prefix: string): WorkflowJson {
  return chain(IDS.transcribePoll, 'e2e: transcribe, polling', [
    start,
    {
      name: 'Transcribe',
      type: `${prefix}.gpuCloud`,
      credentials: management,
      parameters: {
        resource: 'transcription',
        operation: 'transcribe',
        url: 'https://files.example/e2e-poll.mp3?signature=e2e',
        transcriptionOptions: { summarize: 20 },
        waitMode: 'poll',
        timeoutMinutes: 2,
        options: {},
      },
    },
  ]);
}

/** The two deployed workloads: an image as a file, and a chat reply read from a stream. */
export function workloads(prefix: string): WorkflowJson {
  return fanOut(IDS.workloads, 'e2e: image and chat workloads', start, [
    {
      name: 'Generate Image',
      type: `${prefix}.gpuCloud`,
      credentials: { gpuCloudWorkloadApi: CREDENTIALS.image },
      parameters: {
        resource: 'image',
        operation: 'generate',
        source: 'text',
        prompt: 'A lighthouse on a cliff at dawn, watercolor',
        workflowName: 'txt2img',
        imageSettings: { width: 512, height: 512, seed: 7 },
        delivery: 'wait',
        outputMode: 'perImage',
        binaryPropertyName: 'data',
        options: {},
      },
    },
    {
      name: 'Chat',
      type: `${prefix}.gpuCloud`,
      credentials: { gpuCloudWorkloadApi: CREDENTIALS.chat },
      parameters: { resource: 'chat', operation: 'message', inputMode: 'prompt', prompt: 'What is an interruptible GPU node?', options: { maxTokens: 40 } },
    },
  ]);
}

export const TRIGGER_WEBHOOK_ID = randomUUID();
/** The trigger's production URL: `/webhook/<webhookId>/<path of the node's webhook>`. */
export const TRIGGER_PATH = `/webhook/${TRIGGER_WEBHOOK_ID}/job-events`;

export function trigger(prefix: string, receiverUrl: string): WorkflowJson {
  return chain(IDS.trigger, 'e2e: GPU Cloud Trigger', [
    {
      name: 'GPU Cloud Trigger',
      type: `${prefix}.gpuCloudTrigger`,
      webhookId: TRIGGER_WEBHOOK_ID,
      credentials: management,
      parameters: { verification: 'credential', events: ['succeeded', 'failed', 'cancelled'], options: {} },
    },
    report(receiverUrl),
  ]);
}

export const RESUME_START_PATH = '/webhook/e2e-webhook-resume';

/** Started over HTTP; the transcription parks the execution until GPU Cloud calls its resume URL. */
export function webhookResume(prefix: string, receiverUrl: string): WorkflowJson {
  return chain(IDS.resume, 'e2e: transcribe, paused until the webhook', [
    {
      name: 'Start Webhook',
      type: 'n8n-nodes-base.webhook',
      typeVersion: 2,
      webhookId: randomUUID(),
      parameters: { httpMethod: 'POST', path: RESUME_START_PATH.replace('/webhook/', ''), responseMode: 'onReceived', options: {} },
    },
    {
      name: 'Transcribe',
      type: `${prefix}.gpuCloud`,
      credentials: management,
      parameters: {
        resource: 'transcription',
        operation: 'transcribe',
        url: '={{ $json.body.url }}',
        waitMode: 'webhook',
        timeoutMinutes: 5,
        options: { metadata: '={{ JSON.stringify({ e2e: $json.body.marker }) }}' },
      },
    },
    report(receiverUrl),
  ]);
}
