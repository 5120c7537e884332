import { chmod, chown, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { descendants } from './proc';
import { freePort } from '../../slack-app/local';
import { Service, runOrThrow } from '../e2e/processes';

const ROOT = join(__dirname, '..', '..');

/**
 * PostgreSQL, Redis and nginx from Debian's packages, each started as the caller's own server on 127.0.0.1
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

/**
 * Debian's nginx in the foreground with its own configuration in `dir`, as the caller's user (as
 * root, the CI's user, as nobody: `dir` is then opened to all).
 */
export class Nginx {
	private constructor(
		private readonly server: Service,
		readonly dir: string,
	) {}

	get accessLog(): string {
		return join(this.dir, 'access.log');
	}

	/** `http` holds the lines of the http block; resolves once `port` answers HTTP. */
	static async start(dir: string, http: string[], port: number): Promise<Nginx> {
		await mkdir(dir, { recursive: true });
		await writeFile(
			join(dir, 'nginx.conf'),
			[
				'daemon off;',
				'worker_processes 1;',
				`pid ${dir}/nginx.pid;`,
				`error_log ${dir}/error.log;`,
				'events { worker_connections 4096; }',
				'worker_rlimit_nofile 10000;',
				'http {',
				...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(
					(kind) => `    ${kind}_temp_path ${dir}/${kind};`,
				),
				...http.map((line) => `    ${line}`),
				'}',
				'',
			].join('\n'),
		);
		const asRoot = process.getuid?.() === 0;
		await chmod(dir, 0o777);
		// As nobody it must also pass through the folder holding its own (a temporary folder is 0700).
		if (asRoot) await chmod(dirname(dir), 0o755);
		const server = new Service(
			'/usr/sbin/nginx',
			['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')],
			{ user: asRoot ? { uid: 65534, gid: 65534 } : undefined },
		);
		const nginx = new Nginx(server, dir);
		const deadline = Date.now() + 10_000;
		while (
			!(await fetch(`http://127.0.0.1:${port}/`).then(
				() => true,
				() => false,
			))
		) {
			if (server.hasExited || Date.now() > deadline) {
				await server.stop();
				throw new Error(
					`nginx did not start: ${server.stdout}${await readFile(join(dir, 'error.log'), 'utf8').catch((error: unknown) => String(error))}`,
				);
			}
			await new Promise((resolve) => setTimeout(resolve, 100));
		}
		return nginx;
	}

	/**
	 * Round robin over `upstreams` on 127.0.0.1, as a load balancer in front of replicas: as many
	 * kept-alive connections to them as the shipped nginx.conf keeps, and a replica that refuses the
	 * connection skipped for the next. One worker process, so that it takes one share of the cores it
	 * shares with what it balances.
	 */
	static async balance(dir: string, port: number, upstreams: number[]): Promise<Nginx> {
		const shipped = await readFile(join(ROOT, 'docs', 'deploy', 'nginx.conf'), 'utf8');
		const keepalive = /^\s*keepalive (\d+);/m.exec(shipped)?.[1];
		if (!keepalive) throw new Error('docs/deploy/nginx.conf has no upstream keepalive');
		return await Nginx.start(
			dir,
			[
				"log_format served '$upstream_addr';",
				`access_log ${dir}/access.log served;`,
				'upstream replicas {',
				// Never marked down: each request tries the next replica when one refuses it.
				...upstreams.map((upstream) => `    server 127.0.0.1:${upstream} max_fails=0;`),
				`    keepalive ${keepalive};`,
				'}',
				'server {',
				`    listen 127.0.0.1:${port} backlog=4096;`,
				'    location / {',
				'        proxy_pass http://replicas;',
				'        proxy_http_version 1.1;',
				'        proxy_set_header Connection "";',
				'        proxy_set_header Host $host;',
				'        proxy_next_upstream error timeout;',
				'    }',
				'}',
			],
			port,
		);
	}

	/** Its processes: the master and the workers it started (whose CPU time is their own). */
	async pids(): Promise<number[]> {
		const master = this.server.pid;
		if (master === undefined) return [];
		return [master, ...(await descendants(master))];
	}

	/** Requests a balancer passed to each upstream port, from its access log. */
	async served(): Promise<Map<number, number>> {
		const counts = new Map<number, number>();
		for (const line of (await readFile(this.accessLog, 'utf8')).split('\n')) {
			// A request tried on several upstreams lists each; the last one answered it.
			const port = Number(/:(\d+)$/.exec(line.trim())?.[1]);
			if (port) counts.set(port, (counts.get(port) ?? 0) + 1);
		}
		return counts;
	}

	async stop(): Promise<void> {
		await this.server.stop();
	}
}
