import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';
import { z } from 'zod/v4';

/**
 * The part of n8n's MCP Server Trigger (and of an AI Agent's tool loop) a test needs, as a root node
 * of the test's own: it takes the tools connected to it through n8n's engine
 * (`getInputConnectionData`, where n8n-core wraps a `usableAsTool` node with createNodeAsTool),
 * lists each one's name, description and parameters as a model sees them, and calls one with the
 * arguments a model would give. The answer is the exact text n8n hands the model.
 */

const callsSchema = z.array(
	z.object({ tool: z.string().optional(), args: z.record(z.string(), z.unknown()) }),
);

/** A LangChain structured tool as n8n-core builds it (zod 3 schema of the `$fromAI` parameters). */
const toolSchema = z.looseObject({
	name: z.string(),
	description: z.string(),
	schema: z.looseObject({
		shape: z.record(z.string(), z.looseObject({ description: z.string().optional() })),
	}),
	invoke: z.custom<(args: unknown) => Promise<unknown>>((value) => typeof value === 'function'),
});

export class TestToolCaller implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Test Tool Caller',
		name: 'toolCaller',
		group: ['transform'],
		version: 1,
		description: 'Lists the connected tools and calls them as a model would',
		defaults: { name: 'Tool Caller' },
		inputs: [
			NodeConnectionTypes.Main,
			{ type: NodeConnectionTypes.AiTool, displayName: 'Tools', required: true },
		],
		outputs: [NodeConnectionTypes.Main],
		properties: [{ displayName: 'Calls', name: 'calls', type: 'json', default: '[]' }],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const supplied: unknown = await this.getInputConnectionData(NodeConnectionTypes.AiTool, 0);
		const connected: unknown[] = Array.isArray(supplied) ? supplied : [supplied];
		// Parsing copies the object; the tool's method is called on the original, its `this`.
		const tools = connected.map((original) => ({ ...toolSchema.parse(original), original }));
		const calls = callsSchema.parse(JSON.parse(String(this.getNodeParameter('calls', 0))));
		const output: INodeExecutionData[] = [];
		for (const call of calls) {
			const tool = call.tool ? tools.find(({ name }) => name === call.tool) : tools[0];
			if (!tool) throw new Error(`No tool ${call.tool ?? ''} is connected`);
			let answer: string;
			try {
				const result: unknown = await Reflect.apply(tool.invoke, tool.original, [call.args]);
				answer = typeof result === 'string' ? result : JSON.stringify(result);
			} catch (error) {
				// What the MCP Server Trigger answers for a tool that threw: its message, as text.
				answer = `Error: ${error instanceof Error ? error.message : String(error)}`;
			}
			output.push({
				json: {
					tool: tool.name,
					description: tool.description,
					parameters: Object.fromEntries(
						Object.entries(tool.schema.shape).map(([key, value]) => [key, value.description ?? '']),
					),
					answer,
				},
				pairedItem: { item: 0 },
			});
		}
		return [output];
	}
}

/**
 * The tool variant n8n derives from a `usableAsTool` node (n8n's NodeTypes.getByNameAndVersion and
 * convertNodeToAiTool, 2.41): the same node object under a description named `<name>Tool` whose
 * output is an AI tool, with the "Tool Description" parameters added.
 */
export function toolVariant(node: INodeType): INodeType {
	const base = node.description;
	const descriptionType: INodeProperties = {
		displayName: 'Tool Description',
		name: 'descriptionType',
		type: 'options',
		noDataExpression: true,
		options: [
			{ name: 'Set Automatically', value: 'auto' },
			{ name: 'Set Manually', value: 'manual' },
		],
		default: 'auto',
	};
	const toolDescription: INodeProperties = {
		displayName: 'Description',
		name: 'toolDescription',
		type: 'string',
		default: base.description,
		displayOptions: { show: { descriptionType: ['manual'] } },
	};
	const description: INodeTypeDescription = {
		...base,
		name: `${base.name}Tool`,
		displayName: `${base.displayName} Tool`,
		inputs: [],
		outputs: [NodeConnectionTypes.AiTool],
		usableAsTool: undefined,
		properties: [descriptionType, toolDescription, ...base.properties],
	};
	return Object.create(node, { description: { value: description } }) as INodeType;
}
