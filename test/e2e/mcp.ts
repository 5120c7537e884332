/**
 * The GPU Cloud node behind n8n's MCP Server Trigger, reached with the official MCP client
 * (`@modelcontextprotocol/sdk`) over streamable HTTP, as Claude, ChatGPT or an IDE reach it: the
 * tools are listed with their descriptions and the parameters the model fills, each is called, and
 * what it answers is measured (docs/benchmarks.md, "Tool answers for a model").
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { z } from 'zod/v4';
import { TOOL_ANSWER_MAX_BYTES, TOOL_DESCRIPTIONS, TOOL_PARAMETER_RULES } from '../../shared';
import { GPU_CLOUD_TOOLS as MCP_TOOLS, MCP_PATH, toolName } from './workflows';

interface McpCheckKit {
	check: (name: string, body: () => Promise<void>) => Promise<void>;
	expect: (condition: unknown, message: string) => asserts condition;
	log: (line: string) => void;
}

const textContent = z.object({
	content: z.array(z.object({ type: z.literal('text'), text: z.string() })).length(1),
});

/** What a tool call answered: its one text content, its size and its JSON (one item, unwrapped). */
interface ToolReply {
	text: string;
	bytes: number;
	answer: Record<string, unknown>;
}

const oneItem = z.union([
	z.tuple([z.record(z.string(), z.unknown())]),
	z.record(z.string(), z.unknown()),
]);

/**
 * The MCP checks: list the tools, call each one as an MCP client would, and hand back the measured
 * size of each answer (bytes of the text content the client receives).
 */
export async function mcpChecks(
	base: string,
	kit: McpCheckKit,
	catalogueSize: number,
): Promise<void> {
	const { check, log } = kit;
	const expect: McpCheckKit['expect'] = kit.expect;
	const client = new Client({ name: 'gpu-cloud-e2e', version: '1.0.0' });
	const sizes: Record<string, number> = {};

	const call = async (node: string, args: Record<string, unknown>): Promise<ToolReply> => {
		const raw = await client.callTool({ name: toolName(node), arguments: args });
		const result = textContent.safeParse(raw);
		expect(result.success, `${node} answered ${String(JSON.stringify(raw)).slice(0, 300)}`);
		const [{ text }] = result.data.content;
		let parsed: unknown;
		try {
			parsed = JSON.parse(text);
		} catch {
			parsed = text;
		}
		const item = oneItem.safeParse(parsed);
		expect(item.success, `${node} answered text that is not one JSON item: ${text.slice(0, 300)}`);
		const answer = Array.isArray(item.data) ? item.data[0] : item.data;
		return { text, bytes: Buffer.byteLength(text), answer };
	};

	await check('n8n start: an MCP client connects to the MCP Server Trigger', async () => {
		await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp/${MCP_PATH}`)));
	});

	await check(
		'n8n start: MCP: the GPU Cloud tools are listed with their descriptions and the parameters the model fills',
		async () => {
			const { tools } = await client.listTools();
			const byTool = new Map(tools.map((entry) => [entry.name, entry]));
			const expected: Array<[string, string, string[]]> = [
				[MCP_TOOLS.listEndpoints, TOOL_DESCRIPTIONS.listEndpoints, []],
				[MCP_TOOLS.getEndpoint, TOOL_DESCRIPTIONS.getEndpoint, ['endpointName']],
				[MCP_TOOLS.runJob, TOOL_DESCRIPTIONS.runJob, ['text']],
				[MCP_TOOLS.getJob, TOOL_DESCRIPTIONS.getJob, ['jobId']],
				[MCP_TOOLS.generateImage, TOOL_DESCRIPTIONS.generateImage, ['Prompt', 'Width']],
			];
			expect(
				tools.length === expected.length,
				`listed ${tools.map((entry) => entry.name).join(', ')}`,
			);
			for (const [node, description, parameters] of expected) {
				const listed = byTool.get(toolName(node));
				expect(listed, `${toolName(node)} is not listed: ${[...byTool.keys()].join(', ')}`);
				expect(
					listed.description === description,
					`${listed.name}'s description: ${listed.description}`,
				);
				const properties = Object.keys(listed.inputSchema.properties ?? {}).sort();
				expect(
					JSON.stringify(properties) === JSON.stringify([...parameters].sort()),
					`${listed.name} takes ${properties.join(', ')}, expected ${parameters.join(', ')}`,
				);
			}
			const prompt = z
				.object({ description: z.string() })
				.safeParse(byTool.get(toolName(MCP_TOOLS.generateImage))?.inputSchema.properties?.Prompt);
			expect(
				prompt.data?.description === TOOL_PARAMETER_RULES.prompt,
				`the Prompt parameter's description: ${JSON.stringify(prompt.data)}`,
			);
		},
	);

	await check('n8n start: MCP: the catalogue, compact, within its budget', async () => {
		const reply = await call(MCP_TOOLS.listEndpoints, {});
		const endpoints = z.array(z.object({ name: z.string() })).safeParse(reply.answer.endpoints);
		expect(
			reply.answer.total === catalogueSize && endpoints.data?.length === catalogueSize,
			`the catalogue answer: ${reply.text.slice(0, 300)}`,
		);
		expect(
			!reply.text.includes('"input_schema":') && !reply.text.includes('"readme":'),
			'the catalogue answer carries whole schemas or readmes',
		);
		expect(reply.bytes <= TOOL_ANSWER_MAX_BYTES, `${reply.bytes} bytes`);
		sizes.catalogue = reply.bytes;
	});

	await check('n8n start: MCP: one endpoint in full, by the name the model gives', async () => {
		const reply = await call(MCP_TOOLS.getEndpoint, { endpointName: 'transcribe' });
		expect(
			reply.answer.name === 'transcribe' &&
				typeof reply.answer.inputSchema === 'object' &&
				reply.answer.inputSchema !== null,
			`the endpoint answer: ${reply.text.slice(0, 300)}`,
		);
		expect(reply.bytes <= TOOL_ANSWER_MAX_BYTES, `${reply.bytes} bytes`);
		sizes.endpoint = reply.bytes;
	});

	await check(
		'n8n start: MCP: a name that breaks the rule comes back as one sentence the model can act on',
		async () => {
			const reply = await call(MCP_TOOLS.getEndpoint, { endpointName: 'Not A Name!' });
			const error = reply.answer.error;
			expect(
				typeof error === 'string' &&
					error.includes('must be 2-63 lower-case letters') &&
					error.includes('call again') &&
					!error.includes('\n'),
				`the answer: ${reply.text.slice(0, 300)}`,
			);
		},
	);

	let jobId = '';
	await check('n8n start: MCP: a job run and waited for, then read back by its id', async () => {
		const text = `mcp-${randomUUID().slice(0, 8)}`;
		const run = await call(MCP_TOOLS.runJob, { text });
		expect(
			run.answer.status === 'succeeded' &&
				typeof run.answer.id === 'string' &&
				JSON.stringify(run.answer.output).includes(text) &&
				!('input' in run.answer),
			`the job answer: ${run.text.slice(0, 300)}`,
		);
		jobId = String(run.answer.id);
		sizes.job = run.bytes;
		const read = await call(MCP_TOOLS.getJob, { jobId });
		expect(
			read.answer.id === jobId && read.answer.status === 'succeeded',
			`the Job > Get answer: ${read.text.slice(0, 300)}`,
		);
	});

	await check(
		'n8n start: MCP: an image generated and linked through object storage; the link opens that image',
		async () => {
			const reply = await call(MCP_TOOLS.generateImage, {
				Prompt: 'A lighthouse on a cliff at dawn, watercolor',
				Width: 640,
			});
			const images = z
				.array(
					z.looseObject({
						width: z.number(),
						height: z.number(),
						bytes: z.number(),
						url: z.string(),
						expiresAt: z.string(),
					}),
				)
				.safeParse(reply.answer.images);
			const image = images.data?.[0];
			expect(
				reply.answer.imageCount === 1 &&
					reply.answer.delivered === true &&
					image?.width === 640 &&
					image.height === 512,
				`the image answer: ${reply.text.slice(0, 400)}`,
			);
			// What the person's browser does with the link: no header, the image's bytes.
			const opened = await fetch(image.url);
			const bytes = Buffer.from(await opened.arrayBuffer());
			expect(
				opened.status === 200 &&
					bytes.length === image.bytes &&
					bytes.subarray(1, 4).toString('latin1') === 'PNG',
				`the link answered HTTP ${opened.status} with ${bytes.length} bytes, expected a ${image.bytes}-byte PNG`,
			);
			sizes.image = reply.bytes;
		},
	);

	await client.close().catch(() => undefined);
	log(`MCP tool answers (bytes the client received): ${JSON.stringify(sizes)}`);
}
