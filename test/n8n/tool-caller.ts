import {
	NodeConnectionTypes,
	type EngineRequest,
	type EngineResponse,
	type IDataObject,
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
 *
 * Two routes, as in n8n 2.41: "direct" invokes the tool object, as the MCP Server Trigger does
 * (n8n-core's makeHandleToolInvocation runs the node in a supply-data context); "engine" asks the
 * engine to run the tool node and resumes with its output, as the AI Agent v3 does (an engine
 * request: the node runs in an ordinary execute context, its items' JSON becomes the answer).
 */

const callsSchema = z.array(
	z.object({
		tool: z.string().optional(),
		// A model's arguments: a JSON object, as n8n types a tool's input.
		args: z.custom<IDataObject>(
			(value) => typeof value === 'object' && value !== null && !Array.isArray(value),
		),
	}),
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
		properties: [
			{ displayName: 'Calls', name: 'calls', type: 'json', default: '[]' },
			{ displayName: 'Route', name: 'route', type: 'string', default: 'direct' },
		],
	};

	async execute(
		this: IExecuteFunctions,
		response?: EngineResponse,
	): Promise<INodeExecutionData[][] | EngineRequest> {
		const supplied: unknown = await this.getInputConnectionData(NodeConnectionTypes.AiTool, 0);
		const connected: unknown[] = Array.isArray(supplied) ? supplied : [supplied];
		// Parsing copies the object; the tool's method is called on the original, its `this`.
		const tools = connected.map((original) => ({ ...toolSchema.parse(original), original }));
		const calls = callsSchema.parse(JSON.parse(String(this.getNodeParameter('calls', 0))));
		if (this.getNodeParameter('route', 0) === 'engine') return engineRoute(tools, calls, response);
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
			output.push({ json: { ...described(tool), answer }, pairedItem: { item: 0 } });
		}
		return [output];
	}
}

type ConnectedTool = z.infer<typeof toolSchema>;

/** What the model is told about a tool: its name, description and each parameter's description. */
function described(tool: ConnectedTool) {
	return {
		tool: tool.name,
		description: tool.description,
		parameters: Object.fromEntries(
			Object.entries(tool.schema.shape).map(([key, value]) => [key, value.description ?? '']),
		),
	};
}

/** The tool node a tool comes from (n8n-core sets it in the tool's metadata). */
const sourceSchema = z.looseObject({ metadata: z.looseObject({ sourceNodeName: z.string() }) });

/**
 * The AI Agent v3's route: the first run asks the engine to run the tool node once per call; the
 * engine runs it and runs this node again with the results, whose items' JSON the agent passes to
 * the model as the answer (ToolsAgent V3, n8n-nodes-langchain 2.41).
 */
function engineRoute(
	tools: Array<ConnectedTool & { original: unknown }>,
	calls: z.infer<typeof callsSchema>,
	response: EngineResponse | undefined,
): INodeExecutionData[][] | EngineRequest {
	const toolOf = (name?: string) => {
		const tool = name ? tools.find((entry) => entry.name === name) : tools[0];
		if (!tool) throw new Error(`No tool ${name ?? ''} is connected`);
		return tool;
	};
	// The engine passes an empty response on the first run, the results when it resumes the node.
	if (!response?.actionResponses.length)
		return {
			actions: calls.map((call, index) => ({
				actionType: 'ExecutionNodeAction',
				nodeName: sourceSchema.parse(toolOf(call.tool).original).metadata.sourceNodeName,
				input: call.args,
				type: NodeConnectionTypes.AiTool,
				id: `call_${index}`,
				metadata: { itemIndex: 0 },
			})),
			metadata: {},
		};
	const output = response.actionResponses.map(({ action, data }) => {
		const call = calls[Number(action.id.replace('call_', ''))];
		const items = data.data?.[NodeConnectionTypes.AiTool]?.[0] ?? [];
		return {
			json: {
				...described(toolOf(call?.tool)),
				answer: JSON.stringify(items.map((item) => item.json)),
			},
			pairedItem: { item: 0 },
		};
	});
	return [output];
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
