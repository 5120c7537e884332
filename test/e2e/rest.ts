import { z } from 'zod/v4';
import { executionFromRun, type Execution } from './n8n';

/**
 * The n8n server's own REST API, as its editor uses it: what the editor shows about our nodes
 * (node and credential types, icons), the credential "Test" button, the endpoint list of a
 * resource locator, and the executions list. The test sets up the instance owner and keeps the
 * session cookie; nothing here leaves 127.0.0.1.
 */

const REQUEST_TIMEOUT_MS = 30_000;
export const OWNER = {
	email: 'e2e@example.com',
	firstName: 'End',
	lastName: 'ToEnd',
	password: `E2e-${Math.random().toString(36).slice(2)}-Pw1`,
};

const envelope = <T extends z.ZodType>(data: T) => z.object({ data });

export class N8nRest {
	private constructor(
		readonly baseUrl: string,
		private readonly cookie: string,
	) {}

	/** Creates the owner account of the fresh instance and keeps its session. */
	static async setUpOwner(baseUrl: string): Promise<N8nRest> {
		const response = await fetch(`${baseUrl}/rest/owner/setup`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify(OWNER),
			signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
		});
		if (response.status !== 200)
			throw new Error(
				`owner setup: HTTP ${response.status} ${(await response.text()).slice(0, 200)}`,
			);
		const cookie = response.headers
			.getSetCookie()
			.map((header) => header.split(';')[0])
			.find((pair) => pair.startsWith('n8n-auth='));
		if (!cookie) throw new Error('owner setup: no n8n-auth cookie');
		return new N8nRest(baseUrl, cookie);
	}

	async request<T extends z.ZodType>(
		method: 'GET' | 'POST',
		path: string,
		schema: T,
		body?: unknown,
	): Promise<z.output<T>> {
		const response = await fetch(`${this.baseUrl}${path}`, {
			method,
			headers: {
				cookie: this.cookie,
				...(body === undefined ? {} : { 'content-type': 'application/json' }),
			},
			body: body === undefined ? undefined : JSON.stringify(body),
			signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
		});
		const text = await response.text();
		if (response.status !== 200)
			throw new Error(`${method} ${path}: HTTP ${response.status} ${text.slice(0, 300)}`);
		const parsed = schema.safeParse(JSON.parse(text));
		if (!parsed.success)
			throw new Error(`${method} ${path}: unexpected answer ${text.slice(0, 300)}`);
		return parsed.data;
	}

	async nodeTypes(): Promise<NodeTypeInfo[]> {
		return await this.request('GET', '/types/nodes.json', z.array(nodeTypeSchema));
	}

	async credentialTypes(): Promise<CredentialTypeInfo[]> {
		return await this.request('GET', '/types/credentials.json', z.array(credentialTypeSchema));
	}

	/**
	 * The "Test" button of a saved credential's dialog: n8n sends the credential type's test request
	 * with the values in the dialog (`data`), which may differ from the saved ones.
	 */
	async testCredential(credential: {
		id: string;
		name: string;
		type: string;
		data: Record<string, string>;
	}): Promise<{ status: string; message: string }> {
		return (
			await this.request(
				'POST',
				'/rest/credentials/test',
				envelope(z.object({ status: z.string(), message: z.string() })),
				{ credentials: credential },
			)
		).data;
	}

	/** What a resource locator's "From List" mode shows, from the node's listSearch method. */
	async resourceLocatorResults(
		body: Record<string, unknown>,
	): Promise<Array<{ name: string; value: string | number }>> {
		const results = z.object({
			results: z.array(
				z.looseObject({ name: z.string(), value: z.union([z.string(), z.number()]) }),
			),
		});
		return (
			await this.request(
				'POST',
				'/rest/dynamic-node-parameters/resource-locator-results',
				envelope(results),
				body,
			)
		).data.results;
	}

	/** The editor's "Publish": activates the workflow's current version in the running server. */
	async activate(workflowId: string): Promise<void> {
		const workflow = await this.request(
			'GET',
			`/rest/workflows/${workflowId}`,
			envelope(z.looseObject({ versionId: z.string() })),
		);
		await this.request(
			'POST',
			`/rest/workflows/${workflowId}/activate`,
			envelope(z.looseObject({ id: z.string() })),
			{ versionId: workflow.data.versionId },
		);
	}

	/** One execution with its run data, as the editor opens it. */
	async execution(id: string): Promise<Execution> {
		const answer = await this.request(
			'GET',
			`/rest/executions/${id}`,
			envelope(z.looseObject({ status: z.string(), data: z.unknown() })),
		);
		const { status, data } = answer.data;
		const execution = executionFromRun({
			status,
			data: typeof data === 'string' ? unflatten(data) : data,
		});
		if (!execution) throw new Error(`execution ${id}: run data of an unexpected shape`);
		return execution;
	}

	/** A file of an execution, as the editor's binary data view downloads it. */
	async binaryData(id: string): Promise<{ contentType: string; bytes: Buffer }> {
		const response = await fetch(
			`${this.baseUrl}/rest/binary-data?id=${encodeURIComponent(id)}&action=download`,
			{
				headers: { cookie: this.cookie },
				signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
			},
		);
		const bytes = Buffer.from(await response.arrayBuffer());
		if (response.status !== 200)
			throw new Error(
				`binary data ${id}: HTTP ${response.status} ${bytes.toString('utf8', 0, 200)}`,
			);
		return { contentType: response.headers.get('content-type') ?? '', bytes };
	}

	async executions(workflowId: string): Promise<ExecutionSummary[]> {
		const filter = encodeURIComponent(JSON.stringify({ workflowId }));
		const answer = await this.request(
			'GET',
			`/rest/executions?filter=${filter}&limit=50`,
			envelope(z.object({ results: z.array(executionSummarySchema) })),
		);
		return answer.data.results;
	}
}

const iconSchema = z.union([z.string(), z.object({ light: z.string(), dark: z.string() })]);

const nodeTypeSchema = z.looseObject({
	name: z.string(),
	version: z.union([z.number(), z.array(z.number())]),
	iconUrl: iconSchema.optional(),
	codex: z.looseObject({ categories: z.array(z.string()).optional() }).optional(),
});
export type NodeTypeInfo = z.infer<typeof nodeTypeSchema>;

const credentialTypeSchema = z.looseObject({
	name: z.string(),
	iconUrl: iconSchema.optional(),
	supportedNodes: z.array(z.string()).optional(),
});
export type CredentialTypeInfo = z.infer<typeof credentialTypeSchema>;

const executionSummarySchema = z.looseObject({
	id: z.string(),
	workflowId: z.string(),
	mode: z.string(),
	status: z.string(),
});
export type ExecutionSummary = z.infer<typeof executionSummarySchema>;

/**
 * n8n stores run data with `flatted` (JSON that can hold repeated references): one array whose
 * first entry is the value, where every string inside an object or array is the index of the entry
 * holding it.
 */
export function unflatten(text: string): unknown {
	const table: unknown = JSON.parse(text);
	if (!Array.isArray(table)) throw new Error('not flatted data');
	const revived = new Map<number, unknown>();
	const revive = (index: number): unknown => {
		if (revived.has(index)) return revived.get(index);
		const entry: unknown = table[index];
		if (typeof entry !== 'object' || entry === null) {
			revived.set(index, entry);
			return entry;
		}
		const copy: Record<string, unknown> | unknown[] = Array.isArray(entry) ? [] : {};
		revived.set(index, copy);
		for (const [key, value] of Object.entries(entry)) {
			const resolved = typeof value === 'string' ? revive(Number(value)) : value;
			if (Array.isArray(copy)) copy[Number(key)] = resolved;
			else copy[key] = resolved;
		}
		return copy;
	};
	return revive(0);
}
