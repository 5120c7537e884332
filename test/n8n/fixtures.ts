import { Container } from '@n8n/di';
import { BinaryDataService } from 'n8n-core';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INodeParameters, ResourceMapperField } from 'n8n-workflow';
import { startEmulator, type EmulatorOptions, type RunningEmulator } from '../../emulator';
import { startFileHost } from '../support/media-server';
import {
	Harness,
	itemsIntoGpuCloud,
	TRIGGER_TYPE,
	type NodeSpec,
	type ProcessedDataStore,
	type StaticDataStore,
	type WorkflowSpec,
} from './harness';

/** One emulator and one n8n harness for a test file, the harness holding credentials for both APIs. */
export interface Rig {
	emulator: RunningEmulator;
	harness: Harness;
	/** The harness's stand-in for n8n's database of workflow static data. */
	staticData: StaticDataStore;
	processedData: ProcessedDataStore;
	close(): Promise<void>;
}

export async function startRig(options: EmulatorOptions = {}): Promise<Rig> {
	// The recordings behind the made-up URLs of the workflows, which the emulator downloads.
	const fileHost = await startFileHost();
	const emulator = await startEmulator({
		jobDurationMs: 300,
		webhookRetryDelaysMs: [200, 400, 800],
		mediaHosts: fileHost.mediaHosts,
		...options,
	});
	const staticData: StaticDataStore = new Map();
	const processedData: ProcessedDataStore = new Map();
	const harness = await Harness.start({ staticData, processedData });
	harness.setCredentials('management', 'gpuCloudApi', {
		apiKey: emulator.apiKey,
		baseUrl: emulator.baseUrl,
		organizationName: emulator.organization,
		defaultProject: emulator.project,
	});
	harness.setCredentials('images', 'gpuCloudWorkloadApi', {
		serviceUrl: emulator.imageUrl,
		apiKey: emulator.apiKey,
	});
	harness.setCredentials('chat', 'gpuCloudWorkloadApi', {
		serviceUrl: emulator.chatUrl,
		apiKey: '',
	});
	return {
		emulator,
		harness,
		staticData,
		processedData,
		async close() {
			await harness.close();
			await emulator.close();
			await fileHost.close();
		},
	};
}

let workflowCount = 0;

const CREDENTIAL_TYPES = {
	management: 'gpuCloudApi',
	images: 'gpuCloudWorkloadApi',
	chat: 'gpuCloudWorkloadApi',
} as const;

/** Test Items -> GPU Cloud, the node configured with `parameters` and one of the rig's credentials. */
export function gpuCloudWorkflow(
	parameters: INodeParameters,
	options: {
		items?: unknown[];
		credential?: keyof typeof CREDENTIAL_TYPES;
		node?: Partial<NodeSpec>;
	} = {},
): WorkflowSpec {
	const credential = options.credential ?? 'management';
	return itemsIntoGpuCloud(`workflow-${++workflowCount}`, options.items ?? [{}], {
		parameters,
		credentials: { [CREDENTIAL_TYPES[credential]]: credential },
		...options.node,
	});
}

/** The GPU Cloud Trigger on the rig's management credential, with a webhook id of its own. */
export function triggerNode(parameters: INodeParameters = {}): NodeSpec {
	return {
		name: 'GPU Cloud Trigger',
		type: TRIGGER_TYPE,
		parameters,
		credentials: { gpuCloudApi: 'management' },
		webhookId: randomUUID(),
	};
}

/** A resource locator value as the editor stores it. */
export function byName(name: string): INodeParameters {
	return { __rl: true, mode: 'name', value: name };
}

/** The fields the editor shows for an endpoint in Job > Create (version 2): what its resourceMapper loads. */
export async function endpointFields(rig: Rig, endpoint: string): Promise<ResourceMapperField[]> {
	const { fields } = await rig.harness.resourceMapping(
		gpuCloudWorkflow(
			{ resource: 'job', operation: 'create', endpoint: byName(endpoint) },
			{ node: { typeVersion: 2 } },
		),
		'GPU Cloud',
		'getEndpointFields',
	);
	return fields;
}

/** A resourceMapper value as the editor saves it: the values typed and the fields they belong to. */
export function mapped(
	schema: ResourceMapperField[],
	value: Record<string, unknown>,
): INodeParameters {
	return {
		mappingMode: 'defineBelow',
		value: value as INodeParameters,
		matchingColumns: [],
		schema: schema as unknown as INodeParameters[],
		attemptToConvertTypes: false,
		convertFieldsToString: false,
	};
}

/** Requests that reached the emulator's management API (not counting webhook deliveries). */
export function managementRequests(emulator: RunningEmulator) {
	return emulator.requests.filter((request) => request.surface === 'management');
}

export interface ProxyHooks {
	/** Runs when a request arrives; the request is forwarded once it resolves. */
	before?: (incoming: IncomingMessage) => void | Promise<void>;
	/** Runs when the emulator's reply has been passed on whole. */
	after?: (incoming: IncomingMessage) => void;
}

/**
 * A pass-through proxy in front of the rig's emulator, registered with the harness as the
 * management credential `proxied`: lets a test see or hold back requests on their way.
 */
export async function startProxy(rig: Rig, hooks: ProxyHooks): Promise<{ close(): Promise<void> }> {
	const target = new URL(rig.emulator.origin);
	const proxy = createServer((incoming, outgoing) => {
		void Promise.resolve(hooks.before?.(incoming)).then(() => {
			const forwarded = request(
				{
					host: target.hostname,
					port: target.port,
					method: incoming.method,
					path: incoming.url,
					headers: incoming.headers,
				},
				(response) => {
					outgoing.writeHead(response.statusCode ?? 502, response.headers);
					response.pipe(outgoing);
					response.on('end', () => hooks.after?.(incoming));
				},
			);
			incoming.pipe(forwarded);
		});
	});
	proxy.listen(0, '127.0.0.1');
	await once(proxy, 'listening');
	rig.harness.setCredentials('proxied', 'gpuCloudApi', {
		apiKey: rig.emulator.apiKey,
		baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/api/public`,
		organizationName: rig.emulator.organization,
	});
	return {
		async close() {
			proxy.closeAllConnections();
			await new Promise<void>((resolve) => proxy.close(() => resolve()));
		},
	};
}

/**
 * n8n's filesystem binary data mode, as self-hosted installs run it: binaries are files on disk with
 * an id, and the node must stream them. Call before anything asks n8n's container for the service;
 * the answer puts the environment back.
 */
export async function useFilesystemBinaryData(): Promise<() => void> {
	const env = {
		N8N_DEFAULT_BINARY_DATA_MODE: 'filesystem',
		N8N_BINARY_DATA_STORAGE_PATH: mkdtempSync(join(tmpdir(), 'n8n-binary-')),
	};
	Object.assign(process.env, env);
	await Container.get(BinaryDataService).init();
	return () => {
		for (const name of Object.keys(env)) delete process.env[name];
	};
}
