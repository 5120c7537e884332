import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod/v4';
import type { NodeTypeInfo } from './rest';
import { CREDENTIALS, PACKAGE_PREFIX } from './workflows';

/**
 * The example workflows users copy from docs/workflows. Every one is imported into the real n8n
 * and checked against the node types (and versions) that n8n actually offers. Then each is run as
 * a user would start it (by hand, through its webhook or by submitting its form), with its GPU
 * Cloud credentials pointed at the emulator and the nodes that would leave this machine (Slack,
 * files on disk, ...) disabled, which makes n8n pass their input through.
 */

const nodeSchema = z.looseObject({
	name: z.string(),
	type: z.string(),
	typeVersion: z.number(),
	parameters: z.record(z.string(), z.unknown()).default({}),
	webhookId: z.string().optional(),
	credentials: z.record(z.string(), z.unknown()).optional(),
	disabled: z.boolean().optional(),
});
type WorkflowNode = z.infer<typeof nodeSchema>;
const workflowSchema = z.looseObject({
	name: z.string().optional(),
	nodes: z.array(nodeSchema),
	connections: z.record(z.string(), z.unknown()),
});

/** How a user starts the example, and so how the test does. */
export type Start =
	| { kind: 'manual' }
	| {
			kind: 'webhook';
			path: string;
			body: unknown;
			check?: (response: unknown) => string | undefined;
	  }
	| { kind: 'form'; path: string; fields: Record<string, string> }
	| { kind: 'none'; why: string };

export interface Example {
	file: string;
	/** The id the test imports it under. */
	id: string;
	workflow: z.infer<typeof workflowSchema>;
	start: Start;
	/** Nodes disabled for the run because they would reach beyond GPU Cloud. */
	disabled: string[];
}

/**
 * What the test sends to examples started over HTTP; an example without an entry here is
 * imported and type-checked but not run (the run says so).
 */
const INPUTS: Record<
	string,
	{
		body?: unknown;
		fields?: Record<string, string>;
		check?: (response: unknown) => string | undefined;
	}
> = {
	'chat-with-a-model.json': {
		body: { question: 'What is an interruptible GPU node?' },
		check: (response) => {
			const answer = z
				.object({ answer: z.string().min(1), tokens: z.number() })
				.safeParse(response);
			return answer.success
				? undefined
				: `expected { answer, tokens }, got ${JSON.stringify(response).slice(0, 200)}`;
		},
	},
	'transcribe-and-post-summary.json': {
		fields: { 'field-0': 'https://files.example/meeting.mp3?X-Signature=e2e', 'field-1': 'en' },
	},
};

/** n8n's own nodes that neither reach the network nor need an account. */
const OFFLINE_CORE_NODES = new Set(
	[
		'manualTrigger',
		'webhook',
		'formTrigger',
		'respondToWebhook',
		'noOp',
		'set',
		'if',
		'filter',
		'switch',
		'merge',
		'splitOut',
		'aggregate',
		'code',
		'stickyNote',
		'dateTime',
		'limit',
		'sort',
		'splitInBatches',
		'renameKeys',
	].map((name) => `n8n-nodes-base.${name}`),
);

function isOurs(type: string): boolean {
	return type.startsWith(`${PACKAGE_PREFIX}.`);
}

/** Our nodes' credentials, pointed at the ones the test imported (one per workload for the workload API). */
function withEmulatorCredentials(node: WorkflowNode): WorkflowNode {
	if (!isOurs(node.type) || !node.credentials) return node;
	const credentials: Record<string, unknown> = {};
	for (const type of Object.keys(node.credentials)) {
		if (type === 'gpuCloudApi') credentials[type] = CREDENTIALS.management;
		else if (type === 'gpuCloudWorkloadApi')
			credentials[type] =
				node.parameters.resource === 'chat' ? CREDENTIALS.chat : CREDENTIALS.image;
		else credentials[type] = node.credentials[type];
	}
	return { ...node, credentials };
}

function startOf(file: string, nodes: WorkflowNode[]): Start {
	const input = INPUTS[file];
	const trigger = nodes.find(
		(node) =>
			node.type === 'n8n-nodes-base.manualTrigger' ||
			node.type.endsWith('Trigger') ||
			node.type === 'n8n-nodes-base.webhook',
	);
	if (!trigger) return { kind: 'none', why: 'it has no trigger' };
	if (trigger.type === 'n8n-nodes-base.manualTrigger') return { kind: 'manual' };
	if (trigger.type === 'n8n-nodes-base.webhook') {
		if (!input?.body)
			return {
				kind: 'none',
				why: 'the test has no request body for its webhook (INPUTS in test/e2e/examples.ts)',
			};
		const path =
			typeof trigger.parameters.path === 'string' ? trigger.parameters.path : trigger.webhookId;
		return { kind: 'webhook', path: `/webhook/${path}`, body: input.body, check: input.check };
	}
	if (trigger.type === 'n8n-nodes-base.formTrigger') {
		if (!input?.fields)
			return {
				kind: 'none',
				why: 'the test has no answers for its form (INPUTS in test/e2e/examples.ts)',
			};
		const path =
			typeof trigger.parameters.path === 'string' && trigger.parameters.path !== ''
				? trigger.parameters.path
				: trigger.webhookId;
		return { kind: 'form', path: `/form/${path}`, fields: input.fields };
	}
	return { kind: 'none', why: `the test cannot start a ${trigger.type}` };
}

export async function loadExamples(repo: string): Promise<Example[]> {
	const dir = join(repo, 'docs', 'workflows');
	if (!existsSync(dir)) return [];
	const files = (await readdir(dir)).filter((file) => file.endsWith('.json')).sort();
	const examples: Example[] = [];
	for (const [index, file] of files.entries()) {
		let parsed: z.infer<typeof workflowSchema>;
		try {
			parsed = workflowSchema.parse(JSON.parse(await readFile(join(dir, file), 'utf8')));
		} catch (error) {
			throw new Error(
				`docs/workflows/${file} is not an n8n workflow: ${error instanceof Error ? error.message : String(error)}`,
			);
		}
		const disabled: string[] = [];
		const nodes = parsed.nodes.map((node) => {
			if (isOurs(node.type) || OFFLINE_CORE_NODES.has(node.type))
				return withEmulatorCredentials(node);
			disabled.push(node.name);
			return { ...node, disabled: true };
		});
		examples.push({
			file,
			id: `e2eExample${index + 1}`,
			workflow: { ...parsed, nodes },
			start: startOf(file, nodes),
			disabled,
		});
	}
	return examples;
}

/** The workflow as imported: under the test's id, inactive. */
export function importable(example: Example): Record<string, unknown> {
	return { ...example.workflow, id: example.id, name: `example: ${example.file}`, active: false };
}

/** Every node whose type or version the running n8n does not offer. */
export function unknownNodes(example: Example, offered: NodeTypeInfo[]): string[] {
	// A node with several implementations appears once per implementation.
	const versions = new Map<string, number[]>();
	for (const type of offered)
		versions.set(type.name, [...(versions.get(type.name) ?? []), ...[type.version].flat()]);
	return example.workflow.nodes.flatMap((node) => {
		const known = versions.get(node.type);
		if (!known) return [`"${node.name}": unknown type ${node.type}`];
		return known.includes(node.typeVersion)
			? []
			: [
					`"${node.name}": ${node.type} has no version ${node.typeVersion} (offered: ${known.join(', ')})`,
				];
	});
}

export function ourNodeNames(example: Example): string[] {
	return example.workflow.nodes.filter((node) => isOurs(node.type)).map((node) => node.name);
}
