import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod/v4';
import type { NodeTypeInfo } from './rest';
import { CREDENTIALS, PACKAGE_PREFIX } from './workflows';

/**
 * The example workflows users copy from docs/workflows. Every one is imported into the real n8n
 * and checked against the node types (and versions) that n8n actually offers; the ones that need
 * nothing but GPU Cloud (a manual start, our nodes and n8n's offline helpers) are also run, with
 * their credentials pointed at the emulator.
 */

const nodeSchema = z.looseObject({
  name: z.string(),
  type: z.string(),
  typeVersion: z.number(),
  credentials: z.record(z.string(), z.unknown()).optional(),
});
const workflowSchema = z.looseObject({ name: z.string().optional(), nodes: z.array(nodeSchema), connections: z.record(z.string(), z.unknown()) });

export interface Example {
  file: string;
  /** The id the test imports it under. */
  id: string;
  workflow: z.infer<typeof workflowSchema>;
  /** Whether it can run here: started by hand, and nothing in it reaches beyond GPU Cloud. */
  runnable: boolean;
}

/** n8n's own nodes that neither reach the network nor need an account. */
const OFFLINE_CORE_NODES = new Set(
  ['manualTrigger', 'noOp', 'set', 'if', 'filter', 'switch', 'merge', 'splitOut', 'aggregate', 'code', 'stickyNote', 'dateTime', 'limit', 'sort', 'splitInBatches', 'renameKeys', 'itemLists'].map(
    (name) => `n8n-nodes-base.${name}`,
  ),
);

function isOurs(type: string): boolean {
  return type.startsWith(`${PACKAGE_PREFIX}.`);
}

/** Our nodes' credentials, pointed at the ones the test imported (one per workload for the workload API). */
function withEmulatorCredentials(node: z.infer<typeof nodeSchema>): z.infer<typeof nodeSchema> {
  if (!isOurs(node.type) || !node.credentials) return node;
  const credentials: Record<string, unknown> = {};
  for (const type of Object.keys(node.credentials)) {
    if (type === 'gpuCloudApi') credentials[type] = CREDENTIALS.management;
    else if (type === 'gpuCloudWorkloadApi') {
      const resource = node.parameters && typeof node.parameters === 'object' && 'resource' in node.parameters ? node.parameters.resource : undefined;
      credentials[type] = resource === 'chat' ? CREDENTIALS.chat : CREDENTIALS.image;
    } else credentials[type] = node.credentials[type];
  }
  return { ...node, credentials };
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
      throw new Error(`docs/workflows/${file} is not an n8n workflow: ${error instanceof Error ? error.message : String(error)}`);
    }
    const nodes = parsed.nodes.map(withEmulatorCredentials);
    const working = nodes.filter((node) => node.type !== 'n8n-nodes-base.stickyNote');
    const runnable =
      working.some((node) => node.type === 'n8n-nodes-base.manualTrigger') &&
      working.every((node) => OFFLINE_CORE_NODES.has(node.type) || (isOurs(node.type) && !node.type.endsWith('Trigger')));
    examples.push({ file, id: `e2eExample${index + 1}`, workflow: { ...parsed, nodes }, runnable });
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
  for (const type of offered) versions.set(type.name, [...(versions.get(type.name) ?? []), ...[type.version].flat()]);
  return example.workflow.nodes.flatMap((node) => {
    const known = versions.get(node.type);
    if (!known) return [`"${node.name}": unknown type ${node.type}`];
    return known.includes(node.typeVersion) ? [] : [`"${node.name}": ${node.type} has no version ${node.typeVersion} (offered: ${known.join(', ')})`];
  });
}

export function ourNodeNames(example: Example): string[] {
  return example.workflow.nodes.filter((node) => isOurs(node.type)).map((node) => node.name);
}
