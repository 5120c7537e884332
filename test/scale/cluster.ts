import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { localN8nEnv, type N8nInstall } from '../e2e/install';
import { freePort } from '../../slack-app/local';
import { Service, run, runOrThrow } from '../e2e/processes';
import type { Postgres, Redis } from '../support/services';

/**
 * n8n in queue mode on 127.0.0.1, as teams run it when one n8n is not enough: PostgreSQL and Redis
 * from Debian's packages (test/support/services.ts), each this run's own server, then one main
 * process, workers and webhook processors sharing them.
 */

const START_TIMEOUT_MS = 180_000;
const CLI_TIMEOUT_MS = 180_000;

export type Role = 'main' | 'worker' | 'webhook';

/** What each role prints once it serves. */
const READY_TEXT: Record<Role, string> = {
	main: 'Editor is now accessible via',
	worker: 'n8n worker is now ready',
	webhook: 'Webhook listener waiting for requests',
};

export interface ClusterOptions {
	install: N8nInstall;
	root: string;
	/** The unpacked package, copied where n8n's community-package installer leaves it in each process's user folder. */
	packageDir: string;
	packageName: string;
	postgres: Postgres;
	redis: Redis;
	/** The base of production webhook and resume URLs: the load balancer in front of the webhook processors. */
	webhookBaseUrl: string;
}

export interface N8nProcess {
	role: Role;
	name: string;
	port: number;
	service: Service;
}

export class QueueCluster {
	readonly processes: N8nProcess[] = [];
	private readonly encryptionKey = randomBytes(24).toString('base64');
	private count = 0;

	constructor(private readonly options: ClusterOptions) {}

	private async home(name: string): Promise<string> {
		const home = join(this.options.root, name);
		const nodes = join(home, '.n8n', 'nodes', 'node_modules');
		await mkdir(nodes, { recursive: true });
		await runOrThrow('cp', ['-R', this.options.packageDir, join(nodes, this.options.packageName)], {
			timeoutMs: 60_000,
		});
		return home;
	}

	private async env(home: string, port: number): Promise<NodeJS.ProcessEnv> {
		return {
			...(await localN8nEnv(this.options.install.node, port)),
			...this.options.postgres.env(),
			...this.options.redis.env(),
			EXECUTIONS_MODE: 'queue',
			N8N_ENCRYPTION_KEY: this.encryptionKey,
			N8N_USER_FOLDER: home,
			// Binary data where every process finds it: in the database.
			N8N_DEFAULT_BINARY_DATA_MODE: 'database',
			// Behind the suite's load balancer, webhook URLs name it rather than each process.
			N8N_WEBHOOK_URL: this.options.webhookBaseUrl,
			WEBHOOK_URL: this.options.webhookBaseUrl,
			QUEUE_HEALTH_CHECK_PORT: String(await freePort()),
		};
	}

	/** Runs an n8n command (import, publish) against the shared database, as the main process's user. */
	async cli(args: string[]): Promise<void> {
		await mkdir(join(this.options.root, 'logs'), { recursive: true });
		const home = join(this.options.root, 'main');
		await runOrThrow(this.options.install.node.binary, [this.options.install.bin, ...args], {
			cwd: this.options.root,
			env: await this.env(home, await freePort()),
			timeoutMs: CLI_TIMEOUT_MS,
			logFile: join(this.options.root, 'logs', `cli-${++this.count}.log`),
		});
	}

	async importJson(kind: 'credentials' | 'workflow', data: unknown[]): Promise<void> {
		const file = join(this.options.root, `${kind}-${++this.count}.json`);
		await writeFile(file, JSON.stringify(data, null, 2));
		await this.cli([`import:${kind}`, `--input=${file}`]);
	}

	/** Prepares the main process's user folder (the CLI uses it before the main process starts). */
	async prepareMain(): Promise<void> {
		await this.home('main');
	}

	async start(role: Role, name: string): Promise<N8nProcess> {
		const home = role === 'main' ? join(this.options.root, 'main') : await this.home(name);
		const port = await freePort();
		await mkdir(join(this.options.root, 'logs'), { recursive: true });
		const service = new Service(
			this.options.install.node.binary,
			[this.options.install.bin, role === 'main' ? 'start' : role],
			{
				cwd: this.options.root,
				env: await this.env(home, port),
				logFile: join(this.options.root, 'logs', `${name}.log`),
			},
		);
		try {
			await service.waitForOutput(READY_TEXT[role], START_TIMEOUT_MS);
		} catch (error) {
			await service.stop();
			throw new Error(
				`n8n ${role} (${name}): ${error instanceof Error ? error.message : String(error)}`,
			);
		}
		const started = { role, name, port, service };
		this.processes.push(started);
		return started;
	}

	async stop(name: string): Promise<void> {
		const index = this.processes.findIndex((entry) => entry.name === name);
		if (index < 0) return;
		await this.processes[index].service.stop();
		this.processes.splice(index, 1);
	}

	async stopAll(): Promise<void> {
		await Promise.all(this.processes.map((entry) => entry.service.stop()));
		this.processes.length = 0;
	}
}

/** Whether the machine can run the suite: the Debian packages it needs. */
export async function missingPackages(): Promise<string[]> {
	const missing: string[] = [];
	if (
		(await run('redis-server', ['--version'], { timeoutMs: 10_000 }).catch(() => undefined))
			?.code !== 0
	)
		missing.push('redis-server');
	if ((await run('psql', ['--version'], { timeoutMs: 10_000 }).catch(() => undefined))?.code !== 0)
		missing.push('postgresql');
	return missing;
}
