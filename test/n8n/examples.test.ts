import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NodeHelpers, type INode } from 'n8n-workflow';
import { GpuCloud } from '../../nodes/GpuCloud/GpuCloud.node';

/** The example workflows in docs/workflows: every GPU Cloud node in them is one the node accepts as is. */

const DIR = join(__dirname, '..', '..', 'docs', 'workflows');
const description = new GpuCloud().description;

const examples = readdirSync(DIR)
	.filter((name) => name.endsWith('.json'))
	.map((name): [string, INode[]] => [
		name,
		JSON.parse(readFileSync(join(DIR, name), 'utf8')).nodes,
	]);

describe('Example workflows', () => {
	test('there are examples for transcription, bulk images and chat', () => {
		expect(examples.map(([name]) => name).sort()).toEqual([
			'bulk-image-generation.json',
			'chat-with-a-model.json',
			'transcribe-and-post-summary.json',
		]);
	});

	test.each(examples)(
		'%s: GPU Cloud nodes use only parameters the node has, with nothing required missing',
		(_name, nodes) => {
			const gpuNodes = nodes.filter((node) => node.type === 'n8n-nodes-gpu-cloud.gpuCloud');
			expect(gpuNodes.length).toBeGreaterThan(0);
			for (const node of gpuNodes) {
				// Parameters the node does not know, or does not show for this resource and operation, are dropped here.
				const kept = NodeHelpers.getNodeParameters(
					description.properties,
					node.parameters,
					true,
					false,
					node,
					description,
				);
				expect(kept).toMatchObject(node.parameters);
				expect(
					NodeHelpers.getNodeParametersIssues(description.properties, node, description),
				).toBeNull();
			}
		},
	);
});
