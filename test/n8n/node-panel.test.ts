import './env';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PackageDirectoryLoader } from 'n8n-core';
import type { INodeTypeDescription } from 'n8n-workflow';

/**
 * Where n8n's node panel shows each node, decided by the node descriptions and codex (`*.node.json`)
 * n8n's loader reads from `dist`. The rules below are the editor's own, the same in n8n 2.8.4's and
 * 2.41.3's editor bundles (n8n-io/n8n, packages/frontend/editor-ui/src/features/shared/nodeCreator/;
 * in 2.8 under src/components/Node/NodeCreator/):
 * - composables/useActionsGeneration.ts `generateMergedNodesAndActions`: the panel lists items, not
 *   node types. A trigger whose type name without "Trigger" is a node with actions (operations) is
 *   no item of its own: its actions join that node's item, which takes the trigger's description and
 *   keeps the node's name and codex. Any other trigger is an item of its own.
 * - composables/useViewStacks.ts `filterOutAiNodes`: searching at "Add first step" or "What happens
 *   next?" (no AI node on the canvas yet) leaves out every item in the "AI" category whose AI
 *   subcategories lack "Root Nodes".
 * - useViewStacks.ts `groupIfAiNodes` + nodeCreator.utils.ts `isAINode`: where AI nodes are grouped
 *   (the AI panel, or a canvas with an AI node), an AI-category item without "Agents" and without
 *   "Root Nodes" is put in a section titled "<first AI subcategory> (sub-nodes)".
 * - nodeCreator.utils.ts `subcategorizeItems`: an item in the "Core Nodes", "AI" or "Human in the
 *   loop" category is browsed under its subcategories there; any other item under "*", which the
 *   panel shows as "App Trigger Nodes" / "App Regular Nodes" (views/viewsData.ts).
 */

const ROOT = join(__dirname, '..', '..');
const AI = 'AI';
const ROOT_NODES = 'Root Nodes';
const WHITE_LISTED_CATEGORIES = ['Core Nodes', AI, 'Human in the loop'];
const APP_NODES = '*';

type Codex = NonNullable<INodeTypeDescription['codex']>;

/** One entry of the panel: its key is a node type, its codex that node's. */
interface PanelItem {
	key: string;
	description: string;
	codex: Codex;
	/** The node types whose actions the item offers (a node and the trigger merged into it). */
	nodes: string[];
}

/** Whether n8n generates actions for a node type: options of its "Operation" (per resource or not). */
function hasActions(description: INodeTypeDescription): boolean {
	return description.properties.some(
		(property) => property.name === 'operation' && (property.options?.length ?? 0) > 0,
	);
}

function panelItems(descriptions: INodeTypeDescription[]): PanelItem[] {
	const item = (description: INodeTypeDescription): PanelItem => ({
		key: description.name,
		description: description.description,
		codex: codexOf(description),
		nodes: [description.name],
	});
	const isTrigger = (description: INodeTypeDescription) => description.group.includes('trigger');
	const items = descriptions.filter((description) => !isTrigger(description)).map(item);
	for (const trigger of descriptions.filter(isTrigger)) {
		const app = items.find((candidate) => candidate.key === trigger.name.replace('Trigger', ''));
		const appNode = descriptions.find((description) => description.name === app?.key);
		if (app && appNode && hasActions(appNode)) {
			app.description = trigger.description;
			app.nodes.push(trigger.name);
		} else items.push(item(trigger));
	}
	return items;
}

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
let items: PanelItem[];

beforeAll(async () => {
	if (!existsSync(join(ROOT, 'dist', 'nodes', 'GpuCloud', 'GpuCloud.node.json')))
		throw new Error('dist is missing: run `npm run build` first');
	const loader = new PackageDirectoryLoader(ROOT);
	await loader.loadAll();
	nodes = loader.types.nodes;
	items = panelItems(nodes);
});

function codexOf(description: INodeTypeDescription): Codex {
	if (!description.codex) throw new Error(`${description.name} has no codex`);
	return description.codex;
}

function itemOf(key: string): PanelItem {
	const found = items.find((candidate) => candidate.key === key);
	if (!found) throw new Error(`no panel item ${key}`);
	return found;
}

describe("n8n's node panel", () => {
	test('lists GPU Cloud and GPU Cloud Trigger as one item, as Slack and Slack Trigger', () => {
		expect(items.map((entry) => entry.nodes)).toEqual([
			['gpuCloud', 'gpuCloudTrigger'],
			['gpuCloudChatModel'],
			['gpuCloudPollTrigger'],
		]);
		const trigger = nodes.find((description) => description.name === 'gpuCloudTrigger');
		// Search results show the merged item with the trigger's description (the e2e check reads it).
		expect(itemOf('gpuCloud').description).toBe(trigger?.description);
	});

	test("describes GPU Cloud's item by what both its actions and its trigger do", () => {
		// The item shows the trigger's description at "What happens next?" too, where a user looks for
		// the actions: a trigger-only sentence there reads as "not the node you want".
		expect(itemOf('gpuCloud').description).toMatch(/\bgenerate images\b.*\bwhen a job ends\b/);
	});

	test('finds every item by search at "Add first step" and "What happens next?"', () => {
		const hidden = items
			.filter((entry) => !keptInSearchWithoutAiNodes(entry.codex))
			.map((entry) => entry.key);
		expect(hidden).toEqual([]);
	});

	test('labels no node that takes and gives items a sub-node', () => {
		const mislabelled = nodes
			.filter((description) => JSON.stringify(description.outputs).includes('"main"'))
			.map((description) => [
				description.displayName,
				sectionWhereAiNodesAreGrouped(codexOf(description)),
			])
			.filter(([, section]) => section !== undefined);
		expect(mislabelled).toEqual([]);
	});

	test('browses GPU Cloud, which carries the trigger, among the app nodes and app triggers', () => {
		// An item in an AI subcategory is browsed only there: "App Trigger Nodes" would lack the trigger.
		expect(browsedUnder(itemOf('gpuCloud').codex)).toEqual([APP_NODES]);
	});

	test('browses GPU Cloud Poll Trigger among the app triggers', () => {
		expect(browsedUnder(itemOf('gpuCloudPollTrigger').codex)).toEqual([APP_NODES]);
	});

	test("shows the chat model under AI > Language Models > Chat Models, as n8n's own chat models", () => {
		// n8n's OpenAI and Ollama Chat Models (n8n-nodes-langchain 2.41.1) carry exactly these.
		expect(itemOf('gpuCloudChatModel').codex.subcategories).toEqual({
			AI: ['Language Models', ROOT_NODES],
			'Language Models': ['Chat Models (Recommended)'],
		});
	});
});
