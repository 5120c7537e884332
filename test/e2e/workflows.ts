import { randomUUID } from 'node:crypto';
import { TOOL_DESCRIPTIONS, TOOL_PARAMETER_RULES } from '../../shared';

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
	/** The second emulator, whose rate limit is far below what the credential allows itself. */
	rateLimited: { id: 'e2eRateLimited01', name: 'GPU Cloud (emulator with a low rate limit)' },
	/** The first emulator, with a credential that allows itself only a few requests a minute. */
	selfLimited: { id: 'e2eSelfLimited01', name: 'GPU Cloud (credential with a low rate limit)' },
	image: { id: 'e2eImageWorkload', name: 'GPU Cloud image workload (emulator)' },
	chat: { id: 'e2eChatWorkload1', name: 'GPU Cloud chat workload (emulator)' },
	/** The AI checks' emulator (its workloads require the Service-Api-Key header): management, for the tool. */
	aiManagement: { id: 'e2eAiManagement1', name: 'GPU Cloud (AI emulator)' },
	aiChat: { id: 'e2eAiChatWorkld1', name: 'GPU Cloud chat workload (AI emulator)' },
	/** The S3-compatible server on loopback that the Binary File source uploads to. */
	storage: { id: 'e2eObjectStorage', name: 'GPU Cloud Object Storage (S3-compatible test server)' },
	/** n8n's own OpenAI credential pointed at the chat workload (the recipe in docs/ai-agent.md). */
	openAi: {
		id: 'e2eOpenAiWorkld1',
		name: 'OpenAI-compatible: GPU Cloud chat workload (AI emulator)',
	},
};

export interface EmulatorAccess {
	baseUrl: string;
	imageUrl: string;
	chatUrl: string;
	apiKey: string;
	organization: string;
	project: string;
}

/** How many management requests a minute the self-limited credential allows itself. */
export const SELF_LIMIT_PER_MINUTE = 6;

function managementData(emulator: EmulatorAccess): Record<string, string | number> {
	return {
		apiKey: emulator.apiKey,
		baseUrl: emulator.baseUrl,
		organizationName: emulator.organization,
		defaultProject: emulator.project,
	};
}

/** The settings of the GPU Cloud Object Storage API credential. */
export interface StorageAccess {
	endpoint: string;
	bucket: string;
	accessKeyId: string;
	secretAccessKey: string;
}

export function credentials(
	emulator: EmulatorAccess,
	rateLimitedEmulator: EmulatorAccess,
	aiEmulator: EmulatorAccess,
	storage: StorageAccess,
): unknown[] {
	return [
		{
			...CREDENTIALS.storage,
			type: 'gpuCloudObjectStorageApi',
			data: { ...storage, region: 'us-east-1', keyPrefix: 'gpu-cloud/', addressing: 'path' },
		},
		{ ...CREDENTIALS.management, type: 'gpuCloudApi', data: managementData(emulator) },
		{ ...CREDENTIALS.rateLimited, type: 'gpuCloudApi', data: managementData(rateLimitedEmulator) },
		{
			...CREDENTIALS.selfLimited,
			type: 'gpuCloudApi',
			data: { ...managementData(emulator), requestsPerMinute: SELF_LIMIT_PER_MINUTE },
		},
		{
			...CREDENTIALS.image,
			type: 'gpuCloudWorkloadApi',
			data: { serviceUrl: emulator.imageUrl, apiKey: emulator.apiKey },
		},
		{
			...CREDENTIALS.chat,
			type: 'gpuCloudWorkloadApi',
			data: { serviceUrl: emulator.chatUrl, apiKey: emulator.apiKey },
		},
		{ ...CREDENTIALS.aiManagement, type: 'gpuCloudApi', data: managementData(aiEmulator) },
		{
			...CREDENTIALS.aiChat,
			type: 'gpuCloudWorkloadApi',
			data: { serviceUrl: aiEmulator.chatUrl, apiKey: aiEmulator.apiKey },
		},
		{
			...CREDENTIALS.openAi,
			type: 'openAiApi',
			// The workload reads no OpenAI key; its gateway reads Service-Api-Key.
			data: {
				apiKey: 'unused',
				url: `${aiEmulator.chatUrl}/v1`,
				header: true,
				headerName: 'Service-Api-Key',
				headerValue: aiEmulator.apiKey,
			},
		},
	];
}

export interface NodeSpec {
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
export function chain(id: string, name: string, specs: NodeSpec[]): WorkflowJson {
	const connections: Record<string, unknown> = {};
	for (let index = 0; index + 1 < specs.length; index++) {
		connections[specs[index].name] = { main: [[link(specs[index + 1].name)]] };
	}
	return {
		id,
		name,
		nodes: toNodes(specs),
		connections,
		active: false,
		settings: { executionOrder: 'v1' },
	};
}

/** One start node feeding several independent nodes. */
function fanOut(id: string, name: string, first: NodeSpec, branches: NodeSpec[]): WorkflowJson {
	const connections = { [first.name]: { main: [branches.map((branch) => link(branch.name))] } };
	return {
		id,
		name,
		nodes: toNodes([first, ...branches]),
		connections,
		active: false,
		settings: { executionOrder: 'v1' },
	};
}

const start: NodeSpec = { name: 'Start', type: 'n8n-nodes-base.manualTrigger', parameters: {} };

const byName = (value: string) => ({ __rl: true, mode: 'name', value });

/** n8n's HTTP Request node posting the item it receives, and the execution id, to the receiver. */
export function report(url: string): NodeSpec {
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
	listEndpoints: 'e2eListEndpoints',
	transcribePoll: 'e2eTranscribePoll',
	transcribeFile: 'e2eTranscribeFile',
	transcribeFileResume: 'e2eTranscribeFileResume',
	fileForMediaField: 'e2eFileForMediaField',
	customList: 'e2eCustomList',
	workloads: 'e2eWorkloads',
	trigger: 'e2eTrigger',
	resume: 'e2eWebhookResume',
	jobLifecycle: 'e2eJobLifecycle',
	deadline: 'e2eWebhookDeadline',
	bulkThrough429: 'e2eBulkThrough429',
	bulkSelfLimited: 'e2eBulkSelfLimited',
	batchResume: 'e2eBatchResume',
	agentOurModel: 'e2eAgentOurModel',
	llmChain: 'e2eLlmChain',
	agentOpenAiModel: 'e2eAgentOpenAiModel',
	agentLegacyOrder: 'e2eAgentLegacyOrder',
	agentWithTools: 'e2eAgentWithTools',
	mcpServer: 'e2eMcpServer',
};

export function listEndpoints(prefix: string, id = IDS.listEndpoints): WorkflowJson {
	return chain(id, `e2e: list endpoints (${prefix})`, [
		start,
		{
			name: 'List Endpoints',
			type: `${prefix}.gpuCloud`,
			credentials: management,
			parameters: {
				resource: 'inferenceEndpoint',
				operation: 'getAll',
				returnAll: true,
				options: {},
			},
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

/** n8n's Read/Write Files from Disk reads a recording at `path` into the binary field `data`. */
function readRecording(path: string): NodeSpec {
	return {
		name: 'Read Recording',
		type: 'n8n-nodes-base.readWriteFile',
		typeVersion: 1,
		parameters: { operation: 'read', fileSelector: path, options: {} },
	};
}

/** n8n's Read/Write Files from Disk reads a recording at `path`; Transcribe sends it as a Binary File. */
function readAndTranscribe(
	prefix: string,
	path: string,
	wait: { waitMode: 'poll' | 'webhook'; timeoutMinutes: number },
): NodeSpec[] {
	return [
		readRecording(path),
		{
			name: 'Transcribe',
			type: `${prefix}.gpuCloud`,
			credentials: { ...management, gpuCloudObjectStorageApi: CREDENTIALS.storage },
			parameters: {
				resource: 'transcription',
				operation: 'transcribe',
				source: 'binaryFile',
				binaryPropertyName: 'data',
				...wait,
				options: {},
			},
		},
	];
}

/** A recording read from disk and transcribed as a Binary File, polling. */
export function transcribeFile(prefix: string, path: string): WorkflowJson {
	return chain(IDS.transcribeFile, 'e2e: read a recording from disk, transcribe the file', [
		start,
		...readAndTranscribe(prefix, path, { waitMode: 'poll', timeoutMinutes: 2 }),
	]);
}

/**
 * A recording read from disk given to the `url` media field of `transcribe` through Job > Create and
 * Wait (node version 2, Files for Media Fields), polling. The resourceMapper value is what the editor
 * saves with the field left empty: its schema, and no value for it.
 */
export function fileForMediaField(prefix: string, path: string): WorkflowJson {
	return chain(IDS.fileForMediaField, 'e2e: read a recording from disk, give it to a media field', [
		start,
		readRecording(path),
		{
			name: 'Create and Wait',
			type: `${prefix}.gpuCloud`,
			typeVersion: 2,
			credentials: { ...management, gpuCloudObjectStorageApi: CREDENTIALS.storage },
			parameters: {
				resource: 'job',
				operation: 'createAndWait',
				endpoint: byName('transcribe'),
				inputMode: 'fields',
				inputFields: {
					mappingMode: 'defineBelow',
					value: {},
					matchingColumns: [],
					schema: [
						{
							id: 'url',
							displayName: 'url (URL, or a File Below)',
							required: false,
							defaultMatch: false,
							canBeUsedToMatch: false,
							display: true,
							type: 'url',
						},
					],
					attemptToConvertTypes: false,
					convertFieldsToString: false,
				},
				mediaFiles: { files: [{ field: 'url', binaryPropertyName: 'data' }] },
				waitMode: 'poll',
				timeoutMinutes: 2,
				options: {},
			},
		},
	]);
}

export const FILE_RESUME_START_PATH = '/webhook/e2e-file-resume';

/** Started over HTTP: a recording read from disk, transcribed as a Binary File with the webhook wait. */
export function transcribeFileResume(
	prefix: string,
	path: string,
	receiverUrl: string,
): WorkflowJson {
	return chain(IDS.transcribeFileResume, 'e2e: transcribe a file, paused until the webhook', [
		startWebhook(FILE_RESUME_START_PATH),
		...readAndTranscribe(prefix, path, { waitMode: 'webhook', timeoutMinutes: 5 }),
		report(receiverUrl),
	]);
}

/** Image > Generate from text, waiting for a 512×512 image into the binary property `data`. */
export function generateImageNode(prefix: string, name: string) {
	return {
		name,
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
	};
}

/** The two deployed workloads: an image as a file, and a chat reply read from a stream. */
export function workloads(prefix: string): WorkflowJson {
	return fanOut(IDS.workloads, 'e2e: image and chat workloads', start, [
		generateImageNode(prefix, 'Generate Image'),
		{
			name: 'Chat',
			type: `${prefix}.gpuCloud`,
			credentials: { gpuCloudWorkloadApi: CREDENTIALS.chat },
			parameters: {
				resource: 'chat',
				operation: 'message',
				inputMode: 'prompt',
				prompt: 'What is an interruptible GPU node?',
				options: { maxTokens: 40 },
			},
		},
	]);
}

export const TRIGGER_WEBHOOK_ID = randomUUID();
/** The trigger's production URL: `/webhook/<webhookId>/<path of the node's webhook>`. */
export const TRIGGER_PATH = `/webhook/${TRIGGER_WEBHOOK_ID}/job-events`;

export const TRIGGER_NODE = 'GPU Cloud Trigger';

export function trigger(prefix: string, receiverUrl: string): WorkflowJson {
	return chain(IDS.trigger, 'e2e: GPU Cloud Trigger', [
		{
			name: TRIGGER_NODE,
			type: `${prefix}.gpuCloudTrigger`,
			webhookId: TRIGGER_WEBHOOK_ID,
			credentials: management,
			parameters: {
				verification: 'credential',
				events: ['succeeded', 'failed', 'cancelled'],
				options: {},
			},
		},
		report(receiverUrl),
	]);
}

export const RESUME_START_PATH = '/webhook/e2e-webhook-resume';

/**
 * n8n's Webhook node. By default it answers at once and the workflow goes on in the background;
 * `lastNode`: it answers with the last node's first item when the workflow has ended.
 */
function startWebhook(
	path: string,
	responseMode: 'onReceived' | 'lastNode' = 'onReceived',
): NodeSpec {
	return {
		name: 'Start Webhook',
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2,
		webhookId: randomUUID(),
		parameters: {
			httpMethod: 'POST',
			path: path.replace('/webhook/', ''),
			responseMode,
			options: {},
		},
	};
}

/** Started over HTTP; the transcription parks the execution until GPU Cloud calls its resume URL. */
export function webhookResume(prefix: string, receiverUrl: string): WorkflowJson {
	return chain(IDS.resume, 'e2e: transcribe, paused until the webhook', [
		startWebhook(RESUME_START_PATH),
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

const job = (
	name: string,
	parameters: Record<string, unknown>,
	prefix: string,
	credential = CREDENTIALS.management,
): NodeSpec => ({
	name,
	type: `${prefix}.gpuCloud`,
	credentials: { gpuCloudApi: credential },
	parameters: { resource: 'job', options: {}, ...parameters },
});

/** The id of the job a node output for the current item. */
const jobIdOf = (node: string) => `={{ $('${node}').item.json.id }}`;

/**
 * Every operation of the Job, Inference Endpoint and Queue resources in one run, with the job
 * waits in poll mode (real sleeps between status reads): a job is created (with metadata) and
 * waited for, read, created-and-waited-for, and a slow job is created, cancelled and read again.
 */
export function jobLifecycle(prefix: string, marker: string, queueName: string): WorkflowJson {
	return chain(IDS.jobLifecycle, 'e2e: every management operation, polling', [
		start,
		job(
			'Create Job',
			{
				operation: 'create',
				endpoint: byName('transcribe'),
				input: JSON.stringify({ url: 'https://files.example/e2e-life.mp3?signature=e2e' }),
				options: { metadata: JSON.stringify({ e2e: marker }) },
			},
			prefix,
		),
		job(
			'Wait for Completion',
			{
				operation: 'waitForCompletion',
				endpoint: byName('transcribe'),
				jobId: jobIdOf('Create Job'),
				timeoutMinutes: 2,
			},
			prefix,
		),
		job(
			'Get Job',
			{ operation: 'get', endpoint: byName('transcribe'), jobId: jobIdOf('Create Job') },
			prefix,
		),
		job(
			'Create and Wait',
			{
				operation: 'createAndWait',
				endpoint: byName('echo'),
				input: JSON.stringify({ e2e: 'create-and-wait' }),
				waitMode: 'poll',
				timeoutMinutes: 2,
			},
			prefix,
		),
		job(
			'Create Slow Job',
			{
				operation: 'create',
				endpoint: byName('batch-echo'),
				input: JSON.stringify({ e2e: 'to-cancel' }),
			},
			prefix,
		),
		job(
			'Cancel Job',
			{ operation: 'cancel', endpoint: byName('batch-echo'), jobId: jobIdOf('Create Slow Job') },
			prefix,
		),
		job(
			'Get Cancelled Job',
			{ operation: 'get', endpoint: byName('batch-echo'), jobId: jobIdOf('Create Slow Job') },
			prefix,
		),
		{
			name: 'Get Endpoint',
			type: `${prefix}.gpuCloud`,
			credentials: management,
			parameters: {
				resource: 'inferenceEndpoint',
				operation: 'get',
				endpoint: byName('transcribe'),
				options: {},
			},
		},
		{
			name: 'Create Queue',
			type: `${prefix}.gpuCloud`,
			credentials: management,
			parameters: {
				resource: 'queue',
				operation: 'create',
				name: queueName,
				options: { description: 'Created by the end-to-end run' },
			},
		},
	]);
}

export const DEADLINE_START_PATH = '/webhook/e2e-webhook-deadline';
/** What makes the emulator hold a job far beyond the wait's deadline. */
export const HOLD_INPUT = { hold: true };

/**
 * A webhook-mode wait whose job outlives its deadline (one minute, the shortest the node allows):
 * what reaches the next node when n8n gives up waiting.
 */
export function webhookDeadline(prefix: string, receiverUrl: string): WorkflowJson {
	return chain(IDS.deadline, 'e2e: webhook wait, job outlives the deadline', [
		startWebhook(DEADLINE_START_PATH),
		job(
			'Create and Wait',
			{
				operation: 'createAndWait',
				endpoint: byName('batch-echo'),
				input: JSON.stringify(HOLD_INPUT),
				waitMode: 'webhook',
				timeoutMinutes: 1,
			},
			prefix,
		),
		report(receiverUrl),
	]);
}

/** One item per entry of the request body's `items`. */
const splitItems: NodeSpec = {
	name: 'Split Out',
	type: 'n8n-nodes-base.splitOut',
	typeVersion: 1,
	parameters: { fieldToSplitOut: 'body.items', options: {} },
};

export const BATCH_RESUME_START_PATH = '/webhook/e2e-batch-resume';

/** Several jobs in one webhook-mode wait: the execution resumes once GPU Cloud has reported every one. */
export function batchResume(prefix: string, receiverUrl: string): WorkflowJson {
	return chain(
		IDS.batchResume,
		'e2e: create and wait for several jobs, paused until their webhooks',
		[
			startWebhook(BATCH_RESUME_START_PATH),
			splitItems,
			job(
				'Create and Wait',
				{
					operation: 'createAndWait',
					endpoint: byName('echo'),
					input: '={{ JSON.stringify({ batch: $json.n }) }}',
					waitMode: 'webhook',
					timeoutMinutes: 5,
				},
				prefix,
			),
			report(receiverUrl),
		],
	);
}

export const BULK_PATHS = {
	[IDS.bulkThrough429]: '/webhook/e2e-bulk-through-429',
	[IDS.bulkSelfLimited]: '/webhook/e2e-bulk-self-limited',
};

/** Job > Create for every entry of the request's `items`: more jobs than the rate limit lets through in a minute. */
export function bulkCreate(
	prefix: string,
	id: typeof IDS.bulkThrough429 | typeof IDS.bulkSelfLimited,
): WorkflowJson {
	const credential = id === IDS.bulkThrough429 ? CREDENTIALS.rateLimited : CREDENTIALS.selfLimited;
	return chain(id, `e2e: bulk create (${credential.name})`, [
		startWebhook(BULK_PATHS[id]),
		splitItems,
		job(
			'Create Jobs',
			{
				operation: 'create',
				endpoint: byName('echo'),
				input: '={{ JSON.stringify({ bulk: $json.n }) }}',
			},
			prefix,
			credential,
		),
	]);
}

const LANGCHAIN = '@n8n/n8n-nodes-langchain';

/** A sub-node of an AI root node and the kind of connection it supplies. */
interface SubNode {
	spec: NodeSpec;
	connection: 'ai_languageModel' | 'ai_tool';
}

export const AI_PATHS = {
	[IDS.agentOurModel]: '/webhook/e2e-agent-our-model',
	[IDS.llmChain]: '/webhook/e2e-llm-chain',
	[IDS.agentOpenAiModel]: '/webhook/e2e-agent-openai-model',
	[IDS.agentLegacyOrder]: '/webhook/e2e-agent-legacy-order',
	[IDS.agentWithTools]: '/webhook/e2e-agent-with-tools',
};

/**
 * Started over HTTP with `{ "prompt": ... }`, answered with the AI root node's output; the sub-nodes
 * connected to the root. Settings as the editor saves a new workflow (execution order v1).
 */
function aiWorkflow(id: string, name: string, root: NodeSpec, subNodes: SubNode[]): WorkflowJson {
	const workflow = chain(id, name, [startWebhook(AI_PATHS[id], 'lastNode'), root]);
	const connections: Record<string, unknown> = { ...workflow.connections };
	for (const { spec, connection } of subNodes)
		connections[spec.name] = { [connection]: [[{ node: root.name, type: connection, index: 0 }]] };
	return {
		...workflow,
		nodes: [...workflow.nodes, ...toNodes(subNodes.map((sub) => sub.spec))],
		connections,
	};
}

const PROMPT = '={{ $json.body.prompt }}';
/** How many endpoints the tool lists. */
export const TOOL_ENDPOINT_LIMIT = 3;
export const TOOL_NODE = 'List Inference Endpoints';
/** The function name n8n gives the tool: the node's name with underscores. */
export const TOOL_NAME = 'List_Inference_Endpoints';

const agent: NodeSpec = {
	name: 'AI Agent',
	type: `${LANGCHAIN}.agent`,
	typeVersion: 3.1,
	parameters: { promptType: 'define', text: PROMPT, options: { returnIntermediateSteps: true } },
};

/** Our GPU Cloud node as the agent's tool (the variant n8n derives from `usableAsTool`). */
function listEndpointsTool(prefix: string): SubNode {
	return {
		connection: 'ai_tool',
		spec: {
			name: TOOL_NODE,
			type: `${prefix}.gpuCloudTool`,
			credentials: { gpuCloudApi: CREDENTIALS.aiManagement },
			parameters: {
				descriptionType: 'manual',
				toolDescription:
					'Lists the inference endpoints of the GPU Cloud organization: their names and what each one runs.',
				resource: 'inferenceEndpoint',
				operation: 'getAll',
				returnAll: false,
				limit: TOOL_ENDPOINT_LIMIT,
				options: {},
			},
		},
	};
}

/** A parameter the model fills, as the editor writes it (its description quoted with backticks). */
const fromAI = (key: string, description: string, type: 'string' | 'number') =>
	`={{ /*n8n-auto-generated-fromAI-override*/ $fromAI('${key}', \`${description}\`, '${type}') }}`;

/** The GPU Cloud tools an agent or an MCP client is given: their node names. */
export const GPU_CLOUD_TOOLS = {
	listEndpoints: 'List Inference Endpoints',
	getEndpoint: 'Get Inference Endpoint',
	runJob: 'Run Echo Job',
	getJob: 'Get Echo Job',
	generateImage: 'Generate Image',
} as const;

/** The name n8n gives a node's tool (nodeNameToToolName): its name with underscores. */
export const toolName = (node: string) => node.replace(/[\s.?!=+#@&*()[\]{}:;,<>/\\'"^%$|]+/g, '_');

function gpuCloudTool(
	prefix: string,
	name: string,
	description: string,
	credentials: NodeSpec['credentials'],
	parameters: Record<string, unknown>,
): NodeSpec {
	return {
		name,
		type: `${prefix}.gpuCloudTool`,
		credentials,
		parameters: { descriptionType: 'manual', toolDescription: description, ...parameters },
	};
}

/**
 * The catalogue, one endpoint, a job run and read back, and an image, each a GPU Cloud tool with
 * the description and `$fromAI` rules docs/ai-agent.md gives. `widthFromModel`: the image's width
 * is the model's to fill too (the emulated model fills numbers with a value out of bounds).
 */
export function gpuCloudTools(
	prefix: string,
	{ widthFromModel }: { widthFromModel: boolean },
): NodeSpec[] {
	return [
		gpuCloudTool(
			prefix,
			GPU_CLOUD_TOOLS.listEndpoints,
			TOOL_DESCRIPTIONS.listEndpoints,
			management,
			{
				resource: 'inferenceEndpoint',
				operation: 'getAll',
				returnAll: true,
				options: {},
			},
		),
		gpuCloudTool(prefix, GPU_CLOUD_TOOLS.getEndpoint, TOOL_DESCRIPTIONS.getEndpoint, management, {
			resource: 'inferenceEndpoint',
			operation: 'get',
			endpoint: {
				__rl: true,
				mode: 'name',
				value: fromAI('endpointName', TOOL_PARAMETER_RULES.endpointName, 'string'),
			},
			options: {},
		}),
		gpuCloudTool(prefix, GPU_CLOUD_TOOLS.runJob, TOOL_DESCRIPTIONS.runJob, management, {
			resource: 'job',
			operation: 'createAndWait',
			endpoint: byName('echo'),
			input: "={{ JSON.stringify({ text: $fromAI('text', `What to echo`, 'string') }) }}",
			options: {},
		}),
		gpuCloudTool(prefix, GPU_CLOUD_TOOLS.getJob, TOOL_DESCRIPTIONS.getJob, management, {
			resource: 'job',
			operation: 'get',
			endpoint: byName('echo'),
			jobId: fromAI('jobId', TOOL_PARAMETER_RULES.jobId, 'string'),
			options: {},
		}),
		gpuCloudTool(
			prefix,
			GPU_CLOUD_TOOLS.generateImage,
			TOOL_DESCRIPTIONS.generateImage,
			// With object storage, the answer links the image: what reaches the agent and the person.
			{ gpuCloudWorkloadApi: CREDENTIALS.image, gpuCloudObjectStorageApi: CREDENTIALS.storage },
			{
				resource: 'image',
				operation: 'generate',
				source: 'text',
				prompt: fromAI('Prompt', TOOL_PARAMETER_RULES.prompt, 'string'),
				workflowName: 'txt2img',
				imageSettings: {
					width: widthFromModel ? fromAI('Width', TOOL_PARAMETER_RULES.imageSide, 'number') : 512,
					height: 512,
				},
				delivery: 'wait',
				outputMode: 'perImage',
				binaryPropertyName: 'data',
				options: {},
			},
		),
	];
}

function ourChatModel(prefix: string): SubNode {
	return {
		connection: 'ai_languageModel',
		spec: {
			name: 'GPU Cloud Chat Model',
			type: `${prefix}.gpuCloudChatModel`,
			credentials: { gpuCloudWorkloadApi: CREDENTIALS.aiChat },
			parameters: { model: { __rl: true, mode: 'list', value: '' }, options: {} },
		},
	};
}

/** (a) The AI Agent with the GPU Cloud Chat Model and our node as its tool. */
export function agentWithOurModel(prefix: string): WorkflowJson {
	return aiWorkflow(
		IDS.agentOurModel,
		'e2e: AI Agent, GPU Cloud Chat Model, GPU Cloud tool',
		agent,
		[ourChatModel(prefix), listEndpointsTool(prefix)],
	);
}

/** (b) The Basic LLM Chain with the GPU Cloud Chat Model. */
export function llmChain(prefix: string): WorkflowJson {
	const root: NodeSpec = {
		name: 'Basic LLM Chain',
		type: `${LANGCHAIN}.chainLlm`,
		typeVersion: 1.9,
		parameters: { promptType: 'define', text: PROMPT },
	};
	return aiWorkflow(IDS.llmChain, 'e2e: Basic LLM Chain, GPU Cloud Chat Model', root, [
		ourChatModel(prefix),
	]);
}

/** (c) The AI Agent with n8n's own OpenAI Chat Model pointed at the workload (docs/ai-agent.md), and our node as its tool. */
export function agentWithOpenAiModel(prefix: string, model: string): WorkflowJson {
	const openAiModel: SubNode = {
		connection: 'ai_languageModel',
		spec: {
			name: 'OpenAI Chat Model',
			type: `${LANGCHAIN}.lmChatOpenAi`,
			typeVersion: 1.3,
			credentials: { openAiApi: CREDENTIALS.openAi },
			// The workload serves /v1/chat/completions only.
			parameters: {
				model: { __rl: true, mode: 'id', value: model },
				responsesApiEnabled: false,
				options: {},
			},
		},
	};
	return aiWorkflow(
		IDS.agentOpenAiModel,
		"e2e: AI Agent, n8n's OpenAI Chat Model on the workload, GPU Cloud tool",
		agent,
		[openAiModel, listEndpointsTool(prefix)],
	);
}

/**
 * (a) saved without `settings.executionOrder`, as a workflow imported from JSON that lacks it: n8n
 * then uses its legacy execution order, in which the agent resumes before its tool has run. Its
 * webhook answers at once: "respond when the last node finishes" fails in that order, because the
 * last node to run is the tool, which outputs no main item.
 */
export function agentWithLegacyOrder(prefix: string): WorkflowJson {
	const workflow = agentWithOurModel(prefix);
	const webhook = startWebhook(AI_PATHS[IDS.agentLegacyOrder]);
	const nodes = workflow.nodes.map((node) =>
		node.name === webhook.name
			? { ...node, webhookId: webhook.webhookId, parameters: webhook.parameters }
			: node,
	);
	return {
		...workflow,
		id: IDS.agentLegacyOrder,
		name: 'e2e: AI Agent in the legacy execution order',
		nodes,
		settings: {},
	};
}

/** (d) The AI Agent with the GPU Cloud Chat Model and the GPU Cloud tools: catalogue, job, image. */
export function agentWithTools(prefix: string): WorkflowJson {
	return aiWorkflow(
		IDS.agentWithTools,
		'e2e: AI Agent, GPU Cloud Chat Model, the GPU Cloud tools',
		agent,
		[
			ourChatModel(prefix),
			...gpuCloudTools(prefix, { widthFromModel: false }).map(
				(spec): SubNode => ({ spec, connection: 'ai_tool' }),
			),
		],
	);
}

/** Where the MCP Server Trigger listens: `/mcp/<path>` (streamable HTTP, its version 2). */
export const MCP_PATH = 'e2e-gpu-cloud';

/** An MCP Server Trigger (no authentication) serving the GPU Cloud tools. */
export function mcpServer(prefix: string): WorkflowJson {
	const trigger: NodeSpec = {
		name: 'MCP Server Trigger',
		type: `${LANGCHAIN}.mcpTrigger`,
		typeVersion: 2,
		webhookId: randomUUID(),
		parameters: { path: MCP_PATH },
	};
	const tools = gpuCloudTools(prefix, { widthFromModel: true });
	const connections: Record<string, unknown> = {};
	for (const { name } of tools)
		connections[name] = { ai_tool: [[{ node: trigger.name, type: 'ai_tool', index: 0 }]] };
	return {
		id: IDS.mcpServer,
		name: 'e2e: MCP Server Trigger with the GPU Cloud tools',
		nodes: toNodes([trigger, ...tools]),
		connections,
		active: false,
		settings: { executionOrder: 'v1' },
	};
}
