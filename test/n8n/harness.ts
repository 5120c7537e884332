import './env';
import express, { type Request, type Response } from 'express';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Container } from '@n8n/di';
import {
	DataDeduplicationService,
	ExecuteContext,
	ExecutionLifecycleHooks,
	ExternalSecretsProxy,
	LoadOptionsContext,
	PollContext,
	RoutingNode,
	WebhookContext,
	WorkflowExecute,
} from 'n8n-core';
// Not exported by n8n-core's index; n8n calls onShutdown() on it when it stops.
import { SSHClientsManager } from 'n8n-core/dist/execution-engine/ssh-clients-manager';
import {
	ICredentialsHelper,
	NodeConnectionTypes,
	NodeHelpers,
	Workflow,
	createRunExecutionData,
	migrateRunExecutionData,
	type ICredentialDataDecryptedObject,
	type ICredentialType,
	type ICredentials,
	type IConnections,
	type DeduplicationItemTypes,
	type DeduplicationScope,
	type ICheckProcessedContextData,
	type ICheckProcessedOptions,
	type IDataDeduplicator,
	type IDataObject,
	type IDeduplicationOutput,
	type IExecuteFunctions,
	type IHttpRequestOptions,
	type INode,
	type INodeCredentialsDetails,
	type INodeExecutionData,
	type INodeListSearchResult,
	type INodePropertyOptions,
	type ResourceMapperFields,
	type INodeParameters,
	type INodeType,
	type INodeTypeDescription,
	type INodeTypes,
	type NodeConnectionType,
	type IRequestOptionsSimplified,
	type IRun,
	type IRunExecutionData,
	type IVersionedNodeType,
	type IWebhookData,
	type IWebhookDescription,
	type IWorkflowBase,
	type IWorkflowExecuteAdditionalData,
	type OnError,
	type WorkflowExecuteMode,
} from 'n8n-workflow';
import { GpuCloudApi } from '../../credentials/GpuCloudApi.credentials';
import { GpuCloudWorkloadApi } from '../../credentials/GpuCloudWorkloadApi.credentials';
import { GpuCloudObjectStorageApi } from '../../credentials/GpuCloudObjectStorageApi.credentials';
import { GpuCloud } from '../../nodes/GpuCloud/GpuCloud.node';
import { GpuCloudChatModel } from '../../nodes/GpuCloudChatModel/GpuCloudChatModel.node';
import { GpuCloudPollTrigger } from '../../nodes/GpuCloudPollTrigger/GpuCloudPollTrigger.node';
import { GpuCloudTrigger } from '../../nodes/GpuCloudTrigger/GpuCloudTrigger.node';
import { z } from 'zod/v4';
import { TestAgent, TestOpenAiModel } from './agent';
import { TestToolCaller, toolVariant } from './tool-caller';
import { wavBytes } from '../support/media-server';

/**
 * Runs real workflows through n8n's own engine (n8n-core's WorkflowExecute, WebhookContext and
 * execution hooks) without the n8n app: node types are our classes, credentials are plaintext,
 * and a small HTTP server plays the part of n8n's webhook endpoints:
 *   POST /webhook-waiting/<executionId>  resumes a paused execution, as n8n's WaitingWebhooks does;
 *   POST /webhook/<webhookId>/<path>     runs an active workflow's trigger, as n8n's production webhooks do.
 * A paused execution is kept as JSON (as n8n keeps it in its database) and resumed when its
 * deadline passes, as n8n's WaitTracker does.
 */

/** The parts of a failed credential test request n8n's CredentialsTester reads (axios's error as the cause). */
const CredentialTestFailure = z.object({
	cause: z
		.object({
			code: z.string().optional(),
			response: z.object({ status: z.number(), statusText: z.string() }).optional(),
		})
		.optional(),
});

/** lodash's get(), which n8n uses to read a `responseSuccessBody` rule's key (a dotted path). */
function valueAt(value: unknown, path: string): unknown {
	return path
		.split('.')
		.reduce<unknown>(
			(at, key) => (typeof at === 'object' && at !== null ? Reflect.get(at, key) : undefined),
			value,
		);
}

export const PACKAGE = 'n8n-nodes-gpu-cloud';
export const NODE_TYPE = `${PACKAGE}.gpuCloud`;
export const TRIGGER_TYPE = `${PACKAGE}.gpuCloudTrigger`;
export const POLL_TRIGGER_TYPE = `${PACKAGE}.gpuCloudPollTrigger`;
export const CHAT_MODEL_TYPE = `${PACKAGE}.gpuCloudChatModel`;
export const ITEMS_TYPE = 'harness.items';
export const RECORDING_TYPE = 'harness.recording';
export const AGENT_TYPE = 'harness.agent';
export const OPENAI_MODEL_TYPE = 'harness.openAiModel';
/** The GPU Cloud node as n8n serves it to agents (its `usableAsTool` variant). */
export const TOOL_TYPE = `${PACKAGE}.gpuCloudTool`;
export const TOOL_CALLER_TYPE = 'harness.toolCaller';

/** The test's own start node: outputs the items written in its parameter (n8n's manual trigger lives in n8n-nodes-base). */
class TestItems implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Test Items',
		name: 'items',
		group: ['input'],
		version: 1,
		description: 'Outputs the JSON items of its "items" parameter',
		defaults: { name: 'Items' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		properties: [{ displayName: 'Items', name: 'items', type: 'json', default: '[{}]' }],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const value: unknown = this.getNodeParameter('items', 0);
		const list: unknown = typeof value === 'string' ? JSON.parse(value) : value;
		if (!Array.isArray(list)) throw new Error('items must be a JSON array');
		return [list.map((json: IDataObject, index) => ({ json, pairedItem: { item: index } }))];
	}
}

/**
 * Outputs one item whose binary `data` is a WAV recording of `seconds`, stored by n8n's binary data
 * service (in memory, or on disk in filesystem mode) as a read-file node stores what it reads.
 */
class TestRecording implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Test Recording',
		name: 'recording',
		group: ['input'],
		version: 1,
		description: 'Outputs a WAV recording as binary data',
		defaults: { name: 'Recording' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		properties: [
			{ displayName: 'Seconds', name: 'seconds', type: 'number', default: 10 },
			{ displayName: 'File Name', name: 'fileName', type: 'string', default: 'meeting.wav' },
		],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const seconds = Number(this.getNodeParameter('seconds', 0));
		const fileName = String(this.getNodeParameter('fileName', 0));
		const data = await this.helpers.prepareBinaryData(wavBytes(seconds), fileName, 'audio/wav');
		return [[{ json: { fileName }, binary: { data }, pairedItem: { item: 0 } }]];
	}
}

class HarnessNodeTypes implements INodeTypes {
	private readonly types = new Map<string, INodeType | IVersionedNodeType>([
		[NODE_TYPE, new GpuCloud()],
		[TRIGGER_TYPE, new GpuCloudTrigger()],
		[POLL_TRIGGER_TYPE, new GpuCloudPollTrigger()],
		[CHAT_MODEL_TYPE, new GpuCloudChatModel()],
		[ITEMS_TYPE, new TestItems()],
		[RECORDING_TYPE, new TestRecording()],
		[AGENT_TYPE, new TestAgent()],
		[OPENAI_MODEL_TYPE, new TestOpenAiModel()],
		[TOOL_TYPE, toolVariant(new GpuCloud())],
		[TOOL_CALLER_TYPE, new TestToolCaller()],
	]);

	getByName(nodeType: string): INodeType | IVersionedNodeType {
		const type = this.types.get(nodeType);
		if (!type) throw new Error(`Unknown node type ${nodeType}`);
		return type;
	}

	getByNameAndVersion(nodeType: string, version?: number): INodeType {
		return NodeHelpers.getVersionedNodeType(this.getByName(nodeType), version);
	}

	getKnownTypes(): IDataObject {
		return {};
	}
}

const credentialTypes = new Map<string, ICredentialType>([
	['gpuCloudApi', new GpuCloudApi()],
	['gpuCloudWorkloadApi', new GpuCloudWorkloadApi()],
	['gpuCloudObjectStorageApi', new GpuCloudObjectStorageApi()],
]);

interface StoredCredential {
	type: string;
	data: ICredentialDataDecryptedObject;
}

/** Plaintext credentials by id; authentication applied as n8n's CredentialsHelper applies it. */
class PlainCredentialsHelper extends ICredentialsHelper {
	constructor(private readonly stored: Map<string, StoredCredential>) {
		super();
	}

	getParentTypes(): string[] {
		return [];
	}

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		incoming: IHttpRequestOptions | IRequestOptionsSimplified,
		workflow: Workflow,
		node: INode,
	): Promise<IHttpRequestOptions> {
		const type = credentialTypes.get(typeName);
		const requestOptions = incoming as IHttpRequestOptions;
		if (!type?.authenticate) return requestOptions;
		if (typeof type.authenticate === 'function')
			return await type.authenticate(credentials, requestOptions);
		const resolve = (value: string) =>
			String(
				workflow.expression.getSimpleParameterValue(
					node,
					value,
					'internal',
					{ $credentials: credentials },
					undefined,
					'',
				) ?? '',
			);
		for (const [name, value] of Object.entries(type.authenticate.properties.headers ?? {})) {
			requestOptions.headers = {
				...requestOptions.headers,
				[resolve(name)]: resolve(String(value)),
			};
		}
		for (const [name, value] of Object.entries(type.authenticate.properties.qs ?? {})) {
			requestOptions.qs = { ...requestOptions.qs, [resolve(name)]: resolve(String(value)) };
		}
		return requestOptions;
	}

	async preAuthentication(): Promise<undefined> {
		return undefined;
	}

	async runPreAuthentication(): Promise<undefined> {
		return undefined;
	}

	isCredentialUsableByNode(): boolean {
		return true;
	}

	async getCredentials(): Promise<ICredentials> {
		throw new Error('The harness keeps only decrypted credentials');
	}

	async getDecrypted(
		_additionalData: IWorkflowExecuteAdditionalData,
		nodeCredentials: INodeCredentialsDetails,
		type: string,
	): Promise<ICredentialDataDecryptedObject> {
		const credential = nodeCredentials.id ? this.stored.get(nodeCredentials.id) : undefined;
		if (!credential || credential.type !== type)
			throw new Error(`No ${type} credential "${nodeCredentials.id}" in the harness`);
		return { ...credential.data };
	}

	async updateCredentials(): Promise<void> {}

	async updateCredentialsOauthTokenData(): Promise<void> {}

	getCredentialsProperties(type: string) {
		return credentialTypes.get(type)?.properties ?? [];
	}
}

export interface NodeSpec {
	name: string;
	type: string;
	/** The node version the workflow was saved with; 1 unless given. */
	typeVersion?: number;
	parameters: INodeParameters;
	credentials?: Record<string, string>;
	webhookId?: string;
	onError?: OnError;
}

export interface WorkflowSpec {
	id: string;
	nodes: NodeSpec[];
	/** Pairs of node names, output 0 to input 0, by a main connection unless a type is given (a sub-node's). */
	connections: Array<[string, string] | [string, string, NodeConnectionType]>;
}

/** The workflow every test and benchmark of one operation runs: input items into the GPU Cloud node. */
export function itemsIntoGpuCloud(
	id: string,
	items: unknown[],
	node: Omit<NodeSpec, 'name' | 'type'>,
): WorkflowSpec {
	return {
		id,
		nodes: [
			{ name: 'Items', type: ITEMS_TYPE, parameters: { items: JSON.stringify(items) } },
			{ name: 'GPU Cloud', type: NODE_TYPE, ...node },
		],
		connections: [['Items', 'GPU Cloud']],
	};
}

export type ExecutionStatus = 'running' | 'waiting' | 'success' | 'error';

export interface Execution {
	id: string;
	workflowId: string;
	mode: WorkflowExecuteMode;
	status: ExecutionStatus;
	run?: IRun;
	/** Times the execution was resumed (webhook or deadline). */
	resumes: number;
}

interface Paused {
	spec: WorkflowSpec;
	/** The execution data as n8n would have stored it: serialized. */
	data: string;
	timer: NodeJS.Timeout;
}

function toNodes(spec: WorkflowSpec): INode[] {
	return spec.nodes.map((node, index) => ({
		id: `${spec.id}-node-${index}`,
		name: node.name,
		type: node.type,
		typeVersion: node.typeVersion ?? 1,
		position: [index * 200, 0],
		parameters: node.parameters,
		credentials: Object.fromEntries(
			Object.entries(node.credentials ?? {}).map(([type, id]) => [type, { id, name: id }]),
		),
		webhookId: node.webhookId,
		onError: node.onError,
	}));
}

function toConnections(spec: WorkflowSpec): IConnections {
	const connections: IConnections = {};
	for (const [from, to, type = NodeConnectionTypes.Main] of spec.connections) {
		const outputs = (connections[from] ??= {});
		(outputs[type] ??= [[]])[0]?.push({ node: to, type, index: 0 });
	}
	return connections;
}

/** Restores stored execution data the way n8n reads it back from its database. */
function restore(serialized: string): IRunExecutionData {
	return migrateRunExecutionData(JSON.parse(serialized));
}

/** Workflow id to its static data as n8n's database holds it (JSON). */
export type StaticDataStore = Map<string, string>;

/**
 * n8n's processed_data table (behind "Remove Duplicates" and `helpers.checkProcessedAndRecord`): one
 * row of values per workflow and context ("n:<node id>" or the whole workflow).
 */
export type ProcessedDataStore = Map<string, string[]>;

/** The table of each workflow this copy of n8n-core runs, by workflow id. */
const processedTables = new Map<string, ProcessedDataStore>();

/** How often concurrent executions collided on a store, so a race test can prove they overlapped. */
export interface ProcessedDataCollisions {
	/** Two executions created the same row at once; the second failed on its key. */
	keyConflicts: number;
	/** An execution wrote a row back whole over one another execution had written since it read it. */
	overwrites: number;
}

const collisions = new WeakMap<ProcessedDataStore, ProcessedDataCollisions>();

export function processedDataCollisions(store: ProcessedDataStore): ProcessedDataCollisions {
	let counted = collisions.get(store);
	if (!counted) {
		counted = { keyConflicts: 0, overwrites: 0 };
		collisions.set(store, counted);
	}
	return counted;
}

/**
 * The store n8n gives n8n-core's de-duplication service, keeping values as n8n's DeduplicationHelper
 * does in "entries" mode: the row is read, then written back whole in a second query (so writes of
 * concurrent executions can overwrite each other), and two executions creating the row at once
 * conflict on its key.
 */
class ProcessedDataTable implements IDataDeduplicator {
	async checkProcessedAndRecord(
		items: DeduplicationItemTypes[],
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
		options: ICheckProcessedOptions,
	): Promise<IDeduplicationOutput> {
		if (options.mode !== 'entries') throw new Error('the harness keeps "entries" only');
		const { table, key } = this.row(scope, contextData);
		const saved = table.get(key);
		await new Promise((resolve) => setImmediate(resolve));
		const values = items.map(String);
		if (!saved) {
			if (table.has(key)) {
				processedDataCollisions(table).keyConflicts++;
				throw new Error('duplicate key value violates unique constraint "PK_processed_data"');
			}
			table.set(key, values.slice(-(options.maxEntries ?? values.length)));
			return { new: items, processed: [] };
		}
		const kept = [...saved];
		const result: IDeduplicationOutput = { new: [], processed: [] };
		items.forEach((item, index) => {
			if (kept.includes(values[index])) {
				result.processed.push(item);
			} else {
				result.new.push(item);
				kept.push(values[index]);
			}
		});
		if (table.get(key) !== saved) processedDataCollisions(table).overwrites++;
		table.set(key, options.maxEntries ? kept.slice(-options.maxEntries) : kept);
		return result;
	}

	async removeProcessed(
		items: DeduplicationItemTypes[],
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
	): Promise<void> {
		const { table, key } = this.row(scope, contextData);
		const saved = table.get(key);
		// As n8n's DeduplicationHelper: no row, nothing to remove and nothing written.
		if (!saved) return;
		const removed = new Set(items.map(String));
		table.set(
			key,
			saved.filter((value) => !removed.has(value)),
		);
	}

	async clearAllProcessedItems(
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
	): Promise<void> {
		const { table, key } = this.row(scope, contextData);
		table.delete(key);
	}

	async getProcessedDataCount(
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
	): Promise<number> {
		const { table, key } = this.row(scope, contextData);
		return table.get(key)?.length ?? 0;
	}

	private row(
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
	): { table: ProcessedDataStore; key: string } {
		const table = processedTables.get(contextData.workflow.id);
		if (!table) throw new Error(`workflow ${contextData.workflow.id} was not run by a harness`);
		return { table, key: scope === 'node' ? `n:${contextData.node?.id ?? ''}` : '' };
	}
}

// n8n initialises the service once per process, when it starts.
let processedDataReady: Promise<void> | undefined;

export class Harness {
	readonly executions = new Map<string, Execution>();
	private readonly nodeTypes = new HarnessNodeTypes();
	private readonly credentials = new Map<string, StoredCredential>();
	/** Errors thrown while handling a webhook request; a test expects none. */
	readonly webhookErrors: unknown[] = [];
	/**
	 * Webhook and resume requests whose handling has ended (answered, and any execution they started
	 * finished or paused): what a test waits for before saying a request started nothing.
	 */
	webhookRequestsHandled = 0;
	private readonly paused = new Map<string, Paused>();
	private readonly resuming = new Set<string>();
	private readonly active = new Map<
		string,
		{ spec: WorkflowSpec; node: INode; description: IWebhookDescription }
	>();
	/** Active polling triggers: the workflow n8n keeps in memory between polls, by "<workflow>/<node>". */
	private readonly polling = new Map<string, Workflow>();
	private readonly listeners = new Set<() => void>();
	private readonly running = new Set<Promise<unknown>>();
	private nextId = 1;

	private constructor(
		private readonly server: Server,
		readonly baseUrl: string,
		private readonly staticData: StaticDataStore,
		private readonly processedData: ProcessedDataStore,
	) {}

	/**
	 * `staticData` and `processedData` stand for n8n's database: harnesses given the same stores act as
	 * n8n processes sharing one (main, webhook processors, workers), and a harness started on old
	 * stores as a restarted one.
	 */
	static async start(
		options: { staticData?: StaticDataStore; processedData?: ProcessedDataStore } = {},
	): Promise<Harness> {
		processedDataReady ??= DataDeduplicationService.init(new ProcessedDataTable());
		await processedDataReady;
		const app = express();
		const server = createServer(app);
		server.listen(0, '127.0.0.1');
		await once(server, 'listening');
		const { port } = server.address() as AddressInfo;
		const harness = new Harness(
			server,
			`http://127.0.0.1:${port}`,
			options.staticData ?? new Map(),
			options.processedData ?? new Map(),
		);
		// n8n reads the raw bytes and parses JSON bodies before a node's webhook() runs.
		app.use(express.raw({ type: () => true, limit: '50mb' }));
		app.use((req, _res, next) => {
			const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
			req.rawBody = raw;
			req.body =
				/json/.test(req.headers['content-type'] ?? '') && raw.length > 0
					? JSON.parse(raw.toString('utf8'))
					: {};
			next();
		});
		app.post('/webhook-waiting/:executionId', (req, res) =>
			harness.track(harness.resumeByWebhook(req, res)),
		);
		app.post('/webhook/{*path}', (req, res) => harness.track(harness.runTriggerWebhook(req, res)));
		return harness;
	}

	/** Stores a credential; nodes refer to it by `id` (see NodeSpec.credentials). */
	setCredentials(id: string, type: string, data: ICredentialDataDecryptedObject): void {
		this.credentials.set(id, { type, data });
	}

	/**
	 * The "Test" button of a credential: its test request sent through n8n's declarative request
	 * machinery (RoutingNode) with the credential's authentication, as n8n's credentials tester does.
	 */
	async testCredentials(
		type: string,
		data: ICredentialDataDecryptedObject,
	): Promise<{ status: 'OK' | 'Error'; message: string }> {
		const test = credentialTypes.get(type)?.test;
		if (!test) throw new Error(`${type} has no test request`);
		const { request, rules = [] } = test;
		const nodeType: INodeType = {
			description: {
				displayName: 'Credential Test',
				name: 'harness.credentialTest',
				group: ['transform'],
				version: 1,
				description: 'Sends a credential test request',
				defaults: {},
				inputs: [NodeConnectionTypes.Main],
				outputs: [NodeConnectionTypes.Main],
				credentials: [{ name: type, required: true }],
				properties: [
					{ displayName: 'Temp', name: 'temp', type: 'string', routing: { request }, default: '' },
				],
			},
		};
		const id = `credential-test-${this.nextId++}`;
		this.credentials.set(id, { type, data });
		const node: INode = {
			id,
			name: 'Temp-Node',
			type: nodeType.description.name,
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
			credentials: { [type]: { id, name: id } },
		};
		const workflow = new Workflow({
			nodes: [node],
			connections: {},
			active: false,
			nodeTypes: {
				getByName: () => nodeType,
				getByNameAndVersion: () => nodeType,
				getKnownTypes: () => ({}),
			},
		});
		const context = new ExecuteContext(
			workflow,
			node,
			this.additionalData(id),
			'internal',
			createRunExecutionData(),
			0,
			[],
			{ main: [[{ json: {} }]] },
			{ node, data: {}, source: null },
			[],
		);
		// What n8n's CredentialsTester.testCredentials does with the answer (packages/cli/src/services/
		// credentials-tester.service.ts, the same in n8n 2.8.4 and 2.41.1): a `responseCode` rule's
		// message for its status, else the status text; a connection failure's code; a `responseSuccessBody`
		// rule's message when a successful body holds its value at its key.
		let response: Awaited<ReturnType<RoutingNode['runNode']>>;
		try {
			response = await new RoutingNode(context, nodeType, { id, name: id, type, data }).runNode();
		} catch (error) {
			const cause = CredentialTestFailure.safeParse(error).data?.cause;
			if (cause?.response) {
				const { status, statusText } = cause.response;
				for (const rule of rules)
					if (rule.type === 'responseCode' && rule.properties.value === status)
						return { status: 'Error', message: rule.properties.message };
				if (status < 199 || status > 299)
					return {
						status: 'Error',
						message: statusText || `Received HTTP status code: ${status}`,
					};
			} else if (cause?.code) return { status: 'Error', message: cause.code };
			return { status: 'Error', message: error instanceof Error ? error.message : String(error) };
		} finally {
			this.credentials.delete(id);
		}
		const body: unknown = response?.[0]?.[0]?.json;
		for (const rule of rules)
			if (
				rule.type === 'responseSuccessBody' &&
				valueAt(body, rule.properties.key) === rule.properties.value
			)
				return { status: 'Error', message: rule.properties.message };
		return { status: 'OK', message: 'Connection successful!' };
	}

	/** Calls a node's list-search method as the editor does when the user opens a "From List" dropdown. */
	async listSearch(
		spec: WorkflowSpec,
		nodeName: string,
		method: string,
		filter?: string,
		paginationToken?: string,
	): Promise<INodeListSearchResult> {
		const workflow = this.workflow(spec);
		const node = workflow.getNode(nodeName);
		if (!node) throw new Error(`Node ${nodeName} is missing`);
		const search = this.nodeTypes.getByNameAndVersion(node.type, node.typeVersion).methods
			?.listSearch?.[method];
		if (!search) throw new Error(`${node.type} has no list search ${method}`);
		const context = new LoadOptionsContext(workflow, node, this.additionalData(''), 'parameters');
		return await search.call(context, filter, paginationToken);
	}

	/** Calls a node's load-options method as the editor does when the user opens an "options" dropdown. */
	async loadOptions(
		spec: WorkflowSpec,
		nodeName: string,
		method: string,
	): Promise<INodePropertyOptions[]> {
		const workflow = this.workflow(spec);
		const node = workflow.getNode(nodeName);
		if (!node) throw new Error(`Node ${nodeName} is missing`);
		const load = this.nodeTypes.getByNameAndVersion(node.type, node.typeVersion).methods
			?.loadOptions?.[method];
		if (!load) throw new Error(`${node.type} has no load-options method ${method}`);
		const context = new LoadOptionsContext(workflow, node, this.additionalData(''), 'parameters');
		return await load.call(context);
	}

	/** Calls a node's resource-mapping method as the editor does when it shows a resourceMapper's fields. */
	async resourceMapping(
		spec: WorkflowSpec,
		nodeName: string,
		method: string,
	): Promise<ResourceMapperFields> {
		const workflow = this.workflow(spec);
		const node = workflow.getNode(nodeName);
		if (!node) throw new Error(`Node ${nodeName} is missing`);
		const load = this.nodeTypes.getByNameAndVersion(node.type, node.typeVersion).methods
			?.resourceMapping?.[method];
		if (!load) throw new Error(`${node.type} has no resource mapping ${method}`);
		const context = new LoadOptionsContext(workflow, node, this.additionalData(''), 'parameters');
		return await load.call(context);
	}

	/** The URL a trigger node of an active workflow listens on (n8n's "Production URL"). */
	webhookUrl(spec: WorkflowSpec, nodeName: string): string {
		const registered = [...this.active.entries()].find(
			([, entry]) => entry.spec.id === spec.id && entry.node.name === nodeName,
		);
		if (!registered) throw new Error(`${nodeName} of ${spec.id} is not active`);
		return `${this.baseUrl}/webhook/${registered[0]}`;
	}

	/** Registers the production webhooks of a workflow's trigger nodes, as activating it in n8n does. */
	activate(spec: WorkflowSpec): void {
		for (const node of toNodes(spec)) {
			const type = this.nodeTypes.getByNameAndVersion(node.type, node.typeVersion);
			for (const description of type.description.webhooks ?? []) {
				if (description.restartWebhook) continue;
				const path = NodeHelpers.getNodeWebhookPath(spec.id, node, description.path);
				this.active.set(path, { spec, node, description });
			}
		}
	}

	/**
	 * Activates a polling trigger as n8n's ActiveWorkflows does: reads the workflow (static data
	 * included) once and keeps it between polls, polls at once, then saves the static data. A
	 * restarted n8n is `stopPolling` (nothing saved, as at a shutdown) and `activatePolling` again.
	 */
	async activatePolling(spec: WorkflowSpec, nodeName: string): Promise<Execution | undefined> {
		const workflow = this.workflow(spec);
		this.polling.set(`${spec.id}/${nodeName}`, workflow);
		const execution = await this.poll(spec, nodeName);
		this.saveStaticData(workflow);
		return execution;
	}

	stopPolling(spec: WorkflowSpec, nodeName: string): void {
		this.polling.delete(`${spec.id}/${nodeName}`);
	}

	/**
	 * One scheduled poll of an active polling trigger: when poll() returns items, n8n saves the static
	 * data and runs the workflow from the trigger with them (resolved here once the run ends).
	 */
	async poll(spec: WorkflowSpec, nodeName: string): Promise<Execution | undefined> {
		const workflow = this.polling.get(`${spec.id}/${nodeName}`);
		if (!workflow) throw new Error(`${nodeName} of ${spec.id} is not polling`);
		const node = workflow.getNode(nodeName);
		if (!node) throw new Error(`Node ${nodeName} is missing`);
		const nodeType = this.nodeTypes.getByNameAndVersion(node.type, node.typeVersion);
		if (!nodeType.poll) throw new Error(`${node.type} has no poll method`);
		const context = new PollContext(workflow, node, this.additionalData(''), 'trigger', 'activate');
		const data = await nodeType.poll.call(context);
		if (data === null) return undefined;
		this.saveStaticData(workflow);
		const runData = createRunExecutionData({
			executionData: { nodeExecutionStack: [{ node, data: { main: data }, source: null }] },
		});
		return await this.execute(String(this.nextId++), spec, 'trigger', runData, false);
	}

	/**
	 * Runs a workflow from its first node; resolves when it has finished or paused. `start` gives the
	 * first node's input and the mode, e.g. a webhook's items in a production execution.
	 */
	async run(
		spec: WorkflowSpec,
		start: { items?: INodeExecutionData[]; mode?: WorkflowExecuteMode } = {},
	): Promise<Execution> {
		const nodes = toNodes(spec);
		const data = createRunExecutionData({
			executionData: {
				nodeExecutionStack: [
					{ node: nodes[0], data: { main: [start.items ?? [{ json: {} }]] }, source: null },
				],
			},
		});
		return await this.execute(String(this.nextId++), spec, start.mode ?? 'trigger', data, false);
	}

	/** Resolves when the execution is no longer running or waiting. */
	async finished(executionId: string, timeoutMs = 15_000): Promise<Execution> {
		return await this.until(() => {
			const execution = this.executions.get(executionId);
			return execution && (execution.status === 'success' || execution.status === 'error')
				? execution
				: undefined;
		}, timeoutMs);
	}

	/** Resolves with the first execution (of any workflow) the predicate accepts. */
	async until<T>(check: () => T | undefined, timeoutMs = 15_000): Promise<T> {
		const now = check();
		if (now !== undefined) return now;
		return await new Promise<T>((resolve, reject) => {
			const timer = setTimeout(() => {
				this.listeners.delete(listener);
				reject(new Error(`Timed out after ${timeoutMs} ms waiting for an execution state`));
			}, timeoutMs);
			const listener = () => {
				const value = check();
				if (value === undefined) return;
				clearTimeout(timer);
				this.listeners.delete(listener);
				resolve(value);
			};
			this.listeners.add(listener);
		});
	}

	async close(): Promise<void> {
		for (const paused of this.paused.values()) clearTimeout(paused.timer);
		this.paused.clear();
		await Promise.allSettled([...this.running]);
		this.server.closeAllConnections();
		await new Promise<void>((resolve) => this.server.close(() => resolve()));
		// n8n-core starts this service's cleanup interval on first use; n8n stops it at shutdown.
		Container.get(SSHClientsManager).onShutdown();
	}

	private track(work: Promise<unknown>): void {
		const handled = work.catch((error: unknown) => {
			this.webhookErrors.push(error);
		});
		this.running.add(handled);
		void handled.finally(() => {
			this.running.delete(handled);
			this.webhookRequestsHandled++;
			this.changed();
		});
	}

	/** n8n's saveStaticData: written back only when a node changed it. */
	private saveStaticData(workflow: Workflow): void {
		if (workflow.staticData.__dataChanged !== true || !workflow.id) return;
		this.staticData.set(workflow.id, JSON.stringify(workflow.staticData));
		workflow.staticData.__dataChanged = false;
	}

	private changed(): void {
		for (const listener of [...this.listeners]) listener();
	}

	/** As n8n does per request and per execution: the workflow read afresh, static data included. */
	private workflow(spec: WorkflowSpec): Workflow {
		const stored = this.staticData.get(spec.id);
		const staticData: IDataObject = stored ? (JSON.parse(stored) as IDataObject) : {};
		return new Workflow({
			id: spec.id,
			name: spec.id,
			nodes: toNodes(spec),
			connections: toConnections(spec),
			active: this.active.size > 0,
			nodeTypes: this.nodeTypes,
			staticData,
			settings: { executionOrder: 'v1' },
		});
	}

	private additionalData(
		executionId: string,
		hooks?: ExecutionLifecycleHooks,
		http?: { req: Request; res: Response },
	): IWorkflowExecuteAdditionalData {
		const unsupported = async (): Promise<never> => {
			throw new Error('Not supported by the harness');
		};
		return {
			credentialsHelper: new PlainCredentialsHelper(this.credentials),
			executeWorkflow: unsupported,
			getRunExecutionData: async () => undefined,
			executionId,
			currentNodeExecutionIndex: 0,
			restApiUrl: `${this.baseUrl}/rest`,
			instanceBaseUrl: this.baseUrl,
			formWaitingBaseUrl: `${this.baseUrl}/form-waiting`,
			webhookBaseUrl: `${this.baseUrl}/webhook`,
			webhookWaitingBaseUrl: `${this.baseUrl}/webhook-waiting`,
			webhookTestBaseUrl: `${this.baseUrl}/webhook-test`,
			formBaseUrl: `${this.baseUrl}/form`,
			formTestBaseUrl: `${this.baseUrl}/form-test`,
			mcpBaseUrl: `${this.baseUrl}/mcp`,
			mcpTestBaseUrl: `${this.baseUrl}/mcp-test`,
			getRuntimeCredential: async () => undefined,
			variables: {},
			logAiEvent: () => {},
			startRunnerTask: unsupported,
			externalSecretsProxy: new ExternalSecretsProxy(),
			hooks,
			httpRequest: http?.req,
			httpResponse: http?.res,
		};
	}

	private async execute(
		executionId: string,
		spec: WorkflowSpec,
		mode: WorkflowExecuteMode,
		data: IRunExecutionData,
		resumed: boolean,
	): Promise<Execution> {
		const previous = this.executions.get(executionId);
		const execution: Execution = {
			id: executionId,
			workflowId: spec.id,
			mode,
			status: 'running',
			resumes: (previous?.resumes ?? 0) + (resumed ? 1 : 0),
		};
		this.executions.set(executionId, execution);
		this.changed();
		const workflowData: IWorkflowBase = {
			id: spec.id,
			name: spec.id,
			active: false,
			activeVersionId: null,
			isArchived: false,
			createdAt: new Date(),
			updatedAt: new Date(),
			nodes: toNodes(spec),
			connections: toConnections(spec),
		};
		processedTables.set(spec.id, this.processedData);
		const hooks = new ExecutionLifecycleHooks(mode, executionId, workflowData);
		const additionalData = this.additionalData(executionId, hooks);
		if (resumed) additionalData.restartExecutionId = executionId;
		const workflow = this.workflow(spec);
		const run = await new WorkflowExecute(additionalData, mode, data).processRunExecutionData(
			workflow,
		);
		this.saveStaticData(workflow);
		execution.run = run;
		if (run.waitTill) {
			execution.status = 'waiting';
			const waitTill = new Date(run.waitTill).getTime();
			const timer = setTimeout(
				() => this.track(this.resumeAfterDeadline(executionId)),
				Math.max(0, waitTill - Date.now()),
			);
			this.paused.set(executionId, { spec, data: JSON.stringify(run.data), timer });
		} else {
			execution.status = run.data.resultData.error ? 'error' : 'success';
		}
		this.changed();
		return execution;
	}

	/** n8n's WaitTracker: the deadline passed, so the execution goes on (the paused node passes its input on). */
	private async resumeAfterDeadline(executionId: string): Promise<void> {
		const paused = this.paused.get(executionId);
		if (!paused) return;
		this.paused.delete(executionId);
		await this.execute(
			executionId,
			paused.spec,
			this.executions.get(executionId)?.mode ?? 'trigger',
			restore(paused.data),
			true,
		);
	}

	/** n8n's WaitingWebhooks: a POST to the resume URL runs the paused node's webhook() and resumes with its output. */
	private async resumeByWebhook(req: Request, res: Response): Promise<void> {
		const executionId = String(req.params.executionId);
		const paused = this.paused.get(executionId);
		const execution = this.executions.get(executionId);
		if (!paused || !execution) {
			res.status(execution ? 409 : 404).json({
				message: `The execution "${executionId}" is ${execution ? execution.status : 'unknown'}.`,
			});
			return;
		}
		// As n8n: one request at a time may resume an execution; the others are refused meanwhile.
		if (this.resuming.has(executionId)) {
			res.status(500).json({ message: `The execution "${executionId}" is already being resumed.` });
			return;
		}
		this.resuming.add(executionId);
		try {
			await this.resumePaused(executionId, paused, execution, req, res);
		} finally {
			this.resuming.delete(executionId);
		}
	}

	private async resumePaused(
		executionId: string,
		paused: Paused,
		execution: Execution,
		req: Request,
		res: Response,
	): Promise<void> {
		const data = restore(paused.data);
		const stack = data.executionData?.nodeExecutionStack;
		const lastNodeExecuted = data.resultData.lastNodeExecuted;
		if (!stack?.[0] || !lastNodeExecuted)
			throw new Error('A paused execution must have a node to resume');
		stack[0].node.disabled = true;
		data.waitTill = undefined;
		data.resultData.runData[lastNodeExecuted]?.pop();

		const workflow = this.workflow(paused.spec);
		const node = workflow.getNode(lastNodeExecuted);
		if (!node) throw new Error(`Node ${lastNodeExecuted} is missing`);
		const nodeType = this.nodeTypes.getByNameAndVersion(node.type, node.typeVersion);
		const description = nodeType.description.webhooks?.find(
			(webhook) =>
				webhook.restartWebhook && webhook.httpMethod === req.method && webhook.path === '',
		);
		if (!description || !nodeType.webhook) {
			res.status(404).json({ message: 'The paused node has no resume webhook.' });
			return;
		}
		const response = await this.callWebhook(
			nodeType,
			workflow,
			node,
			description,
			execution.mode,
			data,
			req,
			res,
		);
		if (!response.workflowData) return;
		// Resuming: no longer paused (a second report now gets 409, as from n8n).
		if (!this.paused.delete(executionId)) return;
		clearTimeout(paused.timer);
		stack[0].data.main = response.workflowData;
		await this.execute(executionId, paused.spec, execution.mode, data, true);
	}

	/** A production webhook: the trigger's webhook() decides whether a new execution starts. */
	private async runTriggerWebhook(req: Request, res: Response): Promise<void> {
		const path = req.path.replace(/^\/webhook\//, '');
		const registered = this.active.get(path);
		if (!registered) {
			res.status(404).json({ message: `The requested webhook "POST ${path}" is not registered.` });
			return;
		}
		const workflow = this.workflow(registered.spec);
		const node = workflow.getNode(registered.node.name);
		if (!node) throw new Error(`Node ${registered.node.name} is missing`);
		const nodeType = this.nodeTypes.getByNameAndVersion(node.type, node.typeVersion);
		const response = await this.callWebhook(
			nodeType,
			workflow,
			node,
			registered.description,
			'webhook',
			undefined,
			req,
			res,
		);
		this.saveStaticData(workflow);
		if (!response.workflowData) return;
		const data = createRunExecutionData({
			executionData: {
				nodeExecutionStack: [{ node, data: { main: response.workflowData }, source: null }],
			},
		});
		await this.execute(String(this.nextId++), registered.spec, 'webhook', data, false);
	}

	private async callWebhook(
		nodeType: INodeType,
		workflow: Workflow,
		node: INode,
		description: IWebhookDescription,
		mode: WorkflowExecuteMode,
		data: IRunExecutionData | undefined,
		req: Request,
		res: Response,
	): Promise<{ workflowData?: INodeExecutionData[][] }> {
		const additionalData = this.additionalData('', undefined, { req, res });
		const webhookData: IWebhookData = {
			httpMethod: 'POST',
			node: node.name,
			path: description.path,
			webhookDescription: description,
			workflowId: workflow.id,
			workflowExecuteAdditionalData: additionalData,
			webhookId: node.webhookId,
		};
		const context = new WebhookContext(
			workflow,
			node,
			additionalData,
			mode,
			webhookData,
			[],
			data ?? null,
		);
		let response;
		try {
			if (!nodeType.webhook) throw new Error(`${node.type} has no webhook method`);
			response = await nodeType.webhook.call(context);
		} catch (error) {
			res.status(500).json({
				message: 'Error in workflow',
				error: error instanceof Error ? error.message : String(error),
			});
			return {};
		}
		if (!response.noWebhookResponse && !res.headersSent) {
			res.status(200).json(response.webhookResponse ?? { message: 'Workflow was started' });
		}
		return response.workflowData ? { workflowData: response.workflowData } : {};
	}
}

/** The output items of a node in an execution's last run of it. */
export function outputOf(execution: Execution, nodeName: string): INodeExecutionData[] {
	const runs = execution.run?.data.resultData.runData[nodeName];
	const last = runs?.[runs.length - 1];
	return last?.data?.main?.[0] ?? [];
}

/** The error that stopped an execution, if any. */
export function errorOf(
	execution: Execution,
): { message: string; description?: string | null; node?: string } | undefined {
	const error = execution.run?.data.resultData.error;
	if (!error) return undefined;
	const node =
		'node' in error && error.node && typeof error.node === 'object' && 'name' in error.node
			? String(error.node.name)
			: undefined;
	return { message: error.message, description: error.description, node };
}
