import './env';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PackageDirectoryLoader } from 'n8n-core';
import type { INodeTypeDescription } from 'n8n-workflow';

/**
 * Where n8n's node panel shows each node, decided by the codex (`*.node.json`) n8n's loader reads
 * from `dist`. The rules below are the editor's own, the same in n8n 2.8.3's and 2.41.0's editor
 * bundles (n8n-io/n8n, packages/frontend/editor-ui/src/features/shared/nodeCreator/; in 2.8 under
 * src/components/Node/NodeCreator/):
 * - composables/useViewStacks.ts `filterOutAiNodes`: searching at "Add first step" or "What happens
 *   next?" (no AI node on the canvas yet) leaves out every node in the "AI" category whose AI
 *   subcategories lack "Root Nodes".
 * - useViewStacks.ts `groupIfAiNodes` + nodeCreator.utils.ts `isAINode`: where AI nodes are grouped
 *   (the AI panel, or a canvas with an AI node), an AI-category node without "Agents" and without
 *   "Root Nodes" is put in a section titled "<first AI subcategory> (sub-nodes)".
 * - nodeCreator.utils.ts `subcategorizeItems`: a node in the "Core Nodes", "AI" or "Human in the
 *   loop" category is browsed under its subcategories there; any other node under "*", which the
 *   panel shows as "App Trigger Nodes" / "App Regular Nodes" (views/viewsData.ts).
 */

const ROOT = join(__dirname, '..', '..');
const AI = 'AI';
const ROOT_NODES = 'Root Nodes';
const WHITE_LISTED_CATEGORIES = ['Core Nodes', AI, 'Human in the loop'];
const APP_NODES = '*';

type Codex = NonNullable<INodeTypeDescription['codex']>;

function keptInSearchWithoutAiNodes(codex: Codex): boolean {
	if (!codex.categories?.includes(AI)) return true;
	return codex.subcategories?.[AI]?.includes(ROOT_NODES) === true;
}

function sectionWhereAiNodesAreGrouped(codex: Codex): string | undefined {
	const aiSubcategories = codex.subcategories?.[AI] ?? [];
	const isAiNode = codex.categories?.includes(AI) === true && !aiSubcategories.includes('Agents');
	if (!isAiNode || aiSubcategories.includes(ROOT_NODES)) return undefined;
	return aiSubcategories[0] && `${aiSubcategories[0]} (sub-nodes)`;
}

function browsedUnder(codex: Codex): string[] {
	const matched = WHITE_LISTED_CATEGORIES.flatMap((category) =>
		codex.categories?.includes(category) ? (codex.subcategories?.[category] ?? []) : [],
	);
	return matched.length > 0 ? matched : [APP_NODES];
}

let nodes: INodeTypeDescription[];

beforeAll(async () => {
	if (!existsSync(join(ROOT, 'dist', 'nodes', 'GpuCloud', 'GpuCloud.node.json')))
		throw new Error('dist is missing: run `npm run build` first');
	const loader = new PackageDirectoryLoader(ROOT);
	await loader.loadAll();
	nodes = loader.types.nodes;
});

function codexOf(name: string): Codex {
	const codex = nodes.find((description) => description.name === name)?.codex;
	if (!codex) throw new Error(`${name} has no codex`);
	return codex;
}

describe("n8n's node panel", () => {
	test('finds every node by search at "Add first step" and "What happens next?"', () => {
		const hidden = nodes
			.filter((description) => !keptInSearchWithoutAiNodes(codexOf(description.name)))
			.map((description) => description.displayName);
		expect(hidden).toEqual([]);
	});

	test('labels no node that takes and gives items a sub-node', () => {
		const mislabelled = nodes
			.filter((description) => JSON.stringify(description.outputs).includes('"main"'))
			.map((description) => [
				description.displayName,
				sectionWhereAiNodesAreGrouped(codexOf(description.name)),
			])
			.filter(([, section]) => section !== undefined);
		expect(mislabelled).toEqual([]);
	});

	test('lists GPU Cloud Trigger among the app triggers, not in an AI subcategory', () => {
		expect(browsedUnder(codexOf('gpuCloudTrigger'))).toEqual([APP_NODES]);
	});

	test('shows GPU Cloud among the AI nodes as a node of its own (as n8n shows its Chat Memory Manager)', () => {
		expect(codexOf('gpuCloud').subcategories?.[AI]).toEqual(['Miscellaneous', ROOT_NODES]);
	});

	test("shows the chat model under AI > Language Models > Chat Models, as n8n's own chat models", () => {
		// n8n's OpenAI and Ollama Chat Models (n8n-nodes-langchain 2.41.1) carry exactly these.
		expect(codexOf('gpuCloudChatModel').subcategories).toEqual({
			AI: ['Language Models', ROOT_NODES],
			'Language Models': ['Chat Models (Recommended)'],
		});
	});
});
