import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod/v4';
import { localN8nEnv, type N8nInstall } from './install';
import { freePort } from '../../slack-app/local';
import { Service, run, runOrThrow, type RunResult } from './processes';

/**
 * One n8n instance of the full app, driven through its command line: a private user folder
 * (SQLite database, settings, community packages), loopback only, logs as JSON lines so that the
 * run data `n8n execute` prints can be told apart from everything else it logs.
 */

const CLI_TIMEOUT_MS = 120_000;
const START_TIMEOUT_MS = 240_000;
/** What `n8n start` prints once its HTTP server is up and active workflows are registered. */
const STARTED_TEXT = 'Editor is now accessible via';

const logLineSchema = z.looseObject({ level: z.string(), message: z.string() });

const binarySchema = z.looseObject({
	mimeType: z.string(),
	fileName: z.string().optional(),
	fileSize: z.string().optional(),
	id: z.string().optional(),
});
export type BinaryInfo = z.infer<typeof binarySchema>;
const itemSchema = z.looseObject({
	json: z.record(z.string(), z.unknown()),
	binary: z.record(z.string(), binarySchema).optional(),
});
const taskSchema = z.looseObject({
	startTime: z.number().optional(),
	executionStatus: z.string().optional(),
	error: z.looseObject({ message: z.string().optional() }).optional(),
	/** Outputs by connection type: `main`, or for AI sub-nodes `ai_tool`, `ai_languageModel`, ... */
	data: z.record(z.string(), z.array(z.array(itemSchema).nullable())).optional(),
});
const runSchema = z.looseObject({
	status: z.string(),
	data: z.looseObject({
		resultData: z.looseObject({
			error: z
				.looseObject({ message: z.string().optional(), description: z.string().nullish() })
				.optional(),
			runData: z.record(z.string(), z.array(taskSchema)),
		}),
	}),
});

/** One run of a node: when it started and the items of its first output, by connection type. */
export interface NodeRun {
	startTime?: number;
	outputs: Record<string, Array<Record<string, unknown>>>;
}

export interface Execution {
	status: string;
	error?: string;
	/** The JSON items each node output on its first output, by node name (last run of the node). */
	outputs: Map<string, Array<Record<string, unknown>>>;
	/** The files on those items (n8n keeps the bytes elsewhere), by node name. */
	binaries: Map<string, Array<Record<string, BinaryInfo>>>;
	/** Node errors, by node name. */
	nodeErrors: Map<string, string>;
	/** Every run of every node, in order (an AI sub-node runs once per call of the root node), by node name. */
	runs: Map<string, NodeRun[]>;
}

/** An execution's run data (as n8n stores it) in the shape the checks read. */
export function executionFromRun(data: unknown): Execution | undefined {
	const run = runSchema.safeParse(data);
	if (!run.success) return undefined;
	const outputs = new Map<string, Array<Record<string, unknown>>>();
	const binaries = new Map<string, Array<Record<string, BinaryInfo>>>();
	const nodeErrors = new Map<string, string>();
	const runs = new Map<string, NodeRun[]>();
	for (const [node, tasks] of Object.entries(run.data.data.resultData.runData)) {
		runs.set(
			node,
			tasks.map((task) => ({
				startTime: task.startTime,
				outputs: Object.fromEntries(
					Object.entries(task.data ?? {}).map(([type, outputs]) => [
						type,
						(outputs[0] ?? []).map((item) => item.json),
					]),
				),
			})),
		);
		const last = tasks.at(-1);
		const items = last?.data?.main?.[0] ?? [];
		outputs.set(
			node,
			items.map((item) => item.json),
		);
		binaries.set(
			node,
			items.map((item) => item.binary ?? {}),
		);
		if (last?.error) nodeErrors.set(node, last.error.message ?? 'error without a message');
	}
	const error = run.data.data.resultData.error;
	return {
		status: run.data.status,
		error: error ? [error.message, error.description].filter(Boolean).join(' - ') : undefined,
		outputs,
		binaries,
		nodeErrors,
		runs,
	};
}

/** The run data `n8n execute` logs, from its JSON log lines (the last one that is run data). */
export function parseExecution(stdout: string): Execution | undefined {
	let found: Execution | undefined;
	for (const line of stdout.split('\n')) {
		if (!line.startsWith('{')) continue;
		let entry: unknown;
		try {
			entry = JSON.parse(line);
		} catch {
			continue;
		}
		const log = logLineSchema.safeParse(entry);
		if (!log.success || !log.data.message.startsWith('{')) continue;
		try {
			found = executionFromRun(JSON.parse(log.data.message)) ?? found;
		} catch {
			// Some other JSON-looking message.
		}
	}
	return found;
}

export interface N8nOptions {
	install: N8nInstall;
	/** A fresh directory for this instance: user folder, inputs and logs. */
	root: string;
}

export class N8n {
	readonly port: Promise<number>;
	readonly userFolder: string;
	readonly logDir: string;
	private commands = 0;

	constructor(private readonly options: N8nOptions) {
		this.port = freePort();
		this.userFolder = join(options.root, 'home');
		this.logDir = join(options.root, 'logs');
	}

	async baseUrl(): Promise<string> {
		return `http://127.0.0.1:${await this.port}`;
	}

	private async env(extra: Record<string, string>): Promise<NodeJS.ProcessEnv> {
		return {
			...(await localN8nEnv(this.options.install.node, await this.port)),
			N8N_USER_FOLDER: this.userFolder,
			...extra,
		};
	}

	private logFile(name: string): string {
		this.commands += 1;
		return join(
			this.logDir,
			`${String(this.commands).padStart(2, '0')}-${name.replace(/[^a-z0-9-]+/gi, '-')}.log`,
		);
	}

	async cli(args: string[], extraEnv: Record<string, string> = {}): Promise<RunResult> {
		await mkdir(this.logDir, { recursive: true });
		return await run(this.options.install.node.binary, [this.options.install.bin, ...args], {
			cwd: this.options.root,
			env: await this.env(extraEnv),
			timeoutMs: CLI_TIMEOUT_MS,
			logFile: this.logFile(args.join(' ')),
		});
	}

	private async cliOrThrow(args: string[]): Promise<RunResult> {
		await mkdir(this.logDir, { recursive: true });
		return await runOrThrow(this.options.install.node.binary, [this.options.install.bin, ...args], {
			cwd: this.options.root,
			env: await this.env({}),
			timeoutMs: CLI_TIMEOUT_MS,
			logFile: this.logFile(args.join(' ')),
		});
	}

	/** Imports credentials given with plaintext data (n8n encrypts them on import). */
	async importCredentials(credentials: unknown[]): Promise<void> {
		const file = join(this.options.root, 'credentials.json');
		await writeFile(file, JSON.stringify(credentials, null, 2));
		await this.cliOrThrow(['import:credentials', `--input=${file}`]);
	}

	/** Imports workflows; n8n imports every workflow inactive. */
	async importWorkflows(workflows: unknown[], fileName = 'workflows.json'): Promise<void> {
		const file = join(this.options.root, fileName);
		await writeFile(file, JSON.stringify(workflows, null, 2));
		await this.cliOrThrow(['import:workflow', `--input=${file}`]);
	}

	/** `n8n execute --id` and its run data; `env` adds settings for this one run. */
	async execute(workflowId: string, env: Record<string, string> = {}): Promise<Execution> {
		const result = await this.cli(['execute', `--id=${workflowId}`, '--rawOutput'], env);
		const execution = parseExecution(result.stdout);
		if (!execution) {
			const why = result.timedOut ? 'timed out' : `exited with ${result.code ?? result.signal}`;
			const tail = `${result.stdout}\n${result.stderr}`.trim().split('\n').slice(-8).join('\n');
			throw new Error(`n8n execute --id=${workflowId} ${why} without printing run data\n${tail}`);
		}
		return execution;
	}

	/** `n8n start`, resolved once the server is up with its active workflows registered; `env` adds settings. */
	async start(env: Record<string, string> = {}): Promise<Service> {
		await mkdir(this.logDir, { recursive: true });
		const server = new Service(
			this.options.install.node.binary,
			[this.options.install.bin, 'start'],
			{
				cwd: this.options.root,
				env: await this.env(env),
				logFile: this.logFile('start'),
			},
		);
		try {
			await server.waitForOutput(STARTED_TEXT, START_TIMEOUT_MS);
		} catch (error) {
			await server.stop();
			throw new Error(`n8n start: ${error instanceof Error ? error.message : String(error)}`);
		}
		return server;
	}
}
