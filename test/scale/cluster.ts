import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { localN8nEnv, type N8nInstall } from '../e2e/install';
import { Service, freePort, run, runOrThrow } from '../e2e/processes';

/**
 * n8n in queue mode on 127.0.0.1, as teams run it when one n8n is not enough: PostgreSQL and Redis
 * from Debian's packages, each started here as this run's own server (own data directory and
 * port), then one main process, workers and webhook processors sharing them.
 */

const START_TIMEOUT_MS = 180_000;
const CLI_TIMEOUT_MS = 180_000;
const PG_USER = 'n8n';
const PG_DATABASE = 'n8n';

/** Debian installs PostgreSQL's server programs under /usr/lib/postgresql/<major>/bin. */
async function postgresBin(): Promise<string> {
	const majors = (await readdir('/usr/lib/postgresql'))
		.filter((name) => /^\d+$/.test(name))
		.sort((a, b) => Number(b) - Number(a));
	if (!majors[0]) throw new Error('PostgreSQL is not installed (apt-get install postgresql)');
	return join('/usr/lib/postgresql', majors[0], 'bin');
}

/** PostgreSQL refuses to run as root: as root, its programs run as the Debian package's `postgres` user. */
function asPostgres(command: string, args: string[]): [string, string[]] {
	return process.getuid?.() === 0
		? ['runuser', ['-u', 'postgres', '--', command, ...args]]
		: [command, args];
}

export class Postgres {
	private constructor(
		readonly port: number,
		private readonly server: Service,
	) {}

	static async start(dir: string, logDir: string): Promise<Postgres> {
		const bin = await postgresBin();
		await mkdir(dir, { recursive: true });
		if (process.getuid?.() === 0) {
			const postgresUser = await runOrThrow('id', ['-u', 'postgres'], { timeoutMs: 10_000 });
			const postgresGroup = await runOrThrow('id', ['-g', 'postgres'], { timeoutMs: 10_000 });
			await chown(dir, Number(postgresUser.stdout.trim()), Number(postgresGroup.stdout.trim()));
		}
		await chmod(dir, 0o700);
		const [initdb, initArgs] = asPostgres(join(bin, 'initdb'), [
			'-D',
			dir,
			'-U',
			PG_USER,
			'--auth=trust',
			'--encoding=UTF8',
			'--no-sync',
		]);
		await runOrThrow(initdb, initArgs, {
			timeoutMs: 120_000,
			logFile: join(logDir, 'postgres-initdb.log'),
		});
		const port = await freePort();
		// fsync off: a test database, thrown away after the run.
		const [postgres, args] = asPostgres(join(bin, 'postgres'), [
			'-D',
			dir,
			'-p',
			String(port),
			'-k',
			dir,
			'-c',
			'listen_addresses=127.0.0.1',
			'-c',
			'fsync=off',
			'-c',
			'max_connections=200',
		]);
		const server = new Service(postgres, args, { logFile: join(logDir, 'postgres.log') });
		await server.waitForOutput('database system is ready to accept connections', START_TIMEOUT_MS);
		await runOrThrow(
			join(bin, 'createdb'),
			['-h', '127.0.0.1', '-p', String(port), '-U', PG_USER, PG_DATABASE],
			{ timeoutMs: 60_000 },
		);
		return new Postgres(port, server);
	}

	/** One SQL query's rows as tab-separated text. */
	async query(sql: string): Promise<string[][]> {
		const result = await runOrThrow(
			'psql',
			[
				'-h',
				'127.0.0.1',
				'-p',
				String(this.port),
				'-U',
				PG_USER,
				'-d',
				PG_DATABASE,
				'-At',
				'-F',
				'\t',
				'-c',
				sql,
			],
			{ timeoutMs: 60_000 },
		);
		return result.stdout
			.split('\n')
			.filter((line) => line !== '')
			.map((line) => line.split('\t'));
	}

	env(): Record<string, string> {
		return {
			DB_TYPE: 'postgresdb',
			DB_POSTGRESDB_HOST: '127.0.0.1',
			DB_POSTGRESDB_PORT: String(this.port),
			DB_POSTGRESDB_DATABASE: PG_DATABASE,
			DB_POSTGRESDB_USER: PG_USER,
			DB_POSTGRESDB_PASSWORD: '',
		};
	}

	async stop(): Promise<void> {
		await this.server.stop();
	}
}

export class Redis {
	private constructor(
		readonly port: number,
		private readonly server: Service,
	) {}

	static async start(dir: string, logDir: string): Promise<Redis> {
		await mkdir(dir, { recursive: true });
		const port = await freePort();
		const server = new Service(
			'redis-server',
			[
				'--port',
				String(port),
				'--bind',
				'127.0.0.1',
				'--save',
				'',
				'--appendonly',
				'no',
				'--dir',
				dir,
			],
			{
				logFile: join(logDir, 'redis.log'),
			},
		);
		await server.waitForOutput('Ready to accept connections', START_TIMEOUT_MS);
		return new Redis(port, server);
	}

	env(): Record<string, string> {
		return { QUEUE_BULL_REDIS_HOST: '127.0.0.1', QUEUE_BULL_REDIS_PORT: String(this.port) };
	}

	async stop(): Promise<void> {
		await this.server.stop();
	}
}

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
