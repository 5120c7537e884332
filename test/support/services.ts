import { chmod, chown, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from '../../slack-app/local';
import { Service, runOrThrow } from '../e2e/processes';

/**
 * PostgreSQL and Redis from Debian's packages, each started as the caller's own server on 127.0.0.1
 * (own data directory and free port), for the suites that need real ones (db, replicas, scale).
 */

const START_TIMEOUT_MS = 180_000;
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

export interface RedisOptions {
	/** Where its output goes, as redis.log (appended to across restarts). */
	logDir?: string;
	/** An append-only file in its folder, so a restart keeps the data. */
	appendOnly?: boolean;
}

/** redis-server in the foreground; stopped as a service manager would (SIGTERM: it writes its file and exits). */
export class Redis {
	private server?: Service;

	private constructor(
		readonly port: number,
		private readonly dir: string,
		private readonly options: RedisOptions,
	) {}

	static async start(dir: string, options: RedisOptions = {}): Promise<Redis> {
		await mkdir(dir, { recursive: true });
		const redis = new Redis(await freePort(), dir, options);
		await redis.launch();
		return redis;
	}

	get url(): string {
		return `redis://127.0.0.1:${this.port}`;
	}

	/** n8n's queue-mode settings for it. */
	env(): Record<string, string> {
		return { QUEUE_BULL_REDIS_HOST: '127.0.0.1', QUEUE_BULL_REDIS_PORT: String(this.port) };
	}

	private async launch(): Promise<void> {
		const server = new Service(
			'redis-server',
			[
				'--port',
				String(this.port),
				'--bind',
				'127.0.0.1',
				'--dir',
				this.dir,
				'--save',
				'',
				'--appendonly',
				this.options.appendOnly ? 'yes' : 'no',
				'--protected-mode',
				'no',
			],
			{ logFile: this.options.logDir ? join(this.options.logDir, 'redis.log') : undefined },
		);
		this.server = server;
		try {
			await server.waitForOutput('Ready to accept connections', START_TIMEOUT_MS);
		} catch (error) {
			await this.stop();
			throw new Error(
				`redis-server did not start: ${error instanceof Error ? error.message : String(error)}\n${server.stdout}`,
			);
		}
	}

	async stop(): Promise<void> {
		const server = this.server;
		this.server = undefined;
		await server?.stop();
	}

	/** Starts it again on the same port with the same data. */
	async restart(): Promise<void> {
		await this.stop();
		await this.launch();
	}
}
