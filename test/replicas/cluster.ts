import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../slack-app/local';
import { kill } from '../reliability/slack-process';
import { appProcessEnv, Stack, type EmulatorOptions } from '../slack/harness';
import { Redis } from '../support/services';

/**
 * Several replicas of the Slack app on real parts: Debian's redis-server on a free loopback port,
 * N app processes started from the production entry (slack-app/bin.ts, through tsx) sharing it, and
 * a round-robin HTTP proxy in front of them that both Slack (the stand-in) and the service (the
 * emulator's webhooks) talk to. Used by the replica suite and the replica benchmark.
 */

const ROOT = join(__dirname, '..', '..');

/** Round robin over the replicas; a replica that refuses the connection is skipped (as a load balancer's health check would). */
export class RoundRobinProxy {
	private next = 0;
	/** Requests answered by each upstream port. */
	readonly served = new Map<number, number>();

	private constructor(
		private readonly server: Server,
		readonly url: string,
		readonly upstreams: number[],
	) {}

	static async start(port: number, upstreams: number[]): Promise<RoundRobinProxy> {
		const server = createServer();
		const proxy = new RoundRobinProxy(server, `http://127.0.0.1:${port}`, upstreams);
		server.on('request', (req: IncomingMessage, res: ServerResponse) => {
			void proxy.forward(req).then(
				({ status, headers, body }) => res.writeHead(status, headers).end(body),
				() => res.writeHead(502).end(),
			);
		});
		await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
		return proxy;
	}

	private async forward(
		req: IncomingMessage,
	): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
		const chunks: Buffer[] = [];
		for await (const chunk of req) chunks.push(chunk as Buffer);
		const body = Buffer.concat(chunks);
		const headers: Record<string, string> = {};
		for (const [name, value] of Object.entries(req.headers)) {
			if (
				typeof value === 'string' &&
				!['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive'].includes(name)
			)
				headers[name] = value;
		}
		let lastError: unknown;
		for (let tries = 0; tries < this.upstreams.length; tries++) {
			const port = this.upstreams[this.next++ % this.upstreams.length];
			try {
				const response = await fetch(`http://127.0.0.1:${port}${req.url ?? '/'}`, {
					method: req.method,
					headers,
					body: req.method === 'GET' ? undefined : body,
				});
				this.served.set(port, (this.served.get(port) ?? 0) + 1);
				return {
					status: response.status,
					headers: { 'content-type': response.headers.get('content-type') ?? 'text/plain' },
					body: Buffer.from(await response.arrayBuffer()),
				};
			} catch (error) {
				lastError = error;
			}
		}
		throw lastError;
	}

	close(): Promise<void> {
		this.server.closeAllConnections();
		return new Promise((resolve) => this.server.close(() => resolve()));
	}
}

export class Replica {
	output = '';

	private constructor(
		readonly port: number,
		readonly child: ChildProcess,
		/** What it was started with: the same again is a restart (its own state file included). */
		readonly env: Record<string, string>,
	) {}

	/** Starts the production entry point (bin.ts) and resolves once it serves. */
	static async start(port: number, env: Record<string, string>): Promise<Replica> {
		// One process (tsx as a loader, not its CLI, which would fork): SIGKILL hits the app itself.
		const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'slack-app', 'bin.ts')], {
			cwd: ROOT,
			env: { ...env, PORT: String(port) },
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		const replica = new Replica(port, child, env);
		child.stdout?.on('data', (chunk: Buffer) => (replica.output += chunk.toString()));
		child.stderr?.on('data', (chunk: Buffer) => (replica.output += chunk.toString()));
		// Up once it answers /healthz (whatever LOG_LEVEL lets it log).
		let exited: number | null | undefined;
		child.once('exit', (code) => (exited = code));
		const deadline = Date.now() + 60_000;
		for (;;) {
			if (exited !== undefined)
				throw new Error(`Replica on ${port} exited with ${exited}:\n${replica.output}`);
			if (Date.now() > deadline) {
				await replica.kill('SIGKILL');
				throw new Error(`Replica on ${port} did not start in time:\n${replica.output}`);
			}
			const up = await fetch(`http://127.0.0.1:${port}/healthz`).then(
				(response) => response.ok,
				() => false,
			);
			if (up) break;
			await new Promise((resolve) => setTimeout(resolve, 100));
		}
		return replica;
	}

	kill(signal: NodeJS.Signals): Promise<void> {
		return kill(this.child, signal);
	}
}

export interface ClusterOptions {
	replicas: number;
	/** Share state through Redis (the point); false shows what happens without. */
	redis: boolean;
	emulator?: EmulatorOptions;
	env?: Record<string, string>;
}

export class Cluster {
	private constructor(
		readonly stack: Stack,
		readonly proxy: RoundRobinProxy,
		readonly replicas: Replica[],
		readonly redis: Redis | undefined,
		private readonly dir: string,
	) {}

	static async start(options: ClusterOptions): Promise<Cluster> {
		const dir = await mkdtemp(join(tmpdir(), 'gpu-cloud-replicas-'));
		const stack = await Stack.start({ app: false, emulator: options.emulator });
		const redis = options.redis ? await Redis.start(dir, { appendOnly: true }) : undefined;
		const ports: number[] = [];
		for (let i = 0; i < options.replicas; i++) ports.push(await freePort());
		const proxy = await RoundRobinProxy.start(await freePort(), ports);
		const replicas: Replica[] = [];
		try {
			for (const [i, port] of ports.entries()) {
				const env: Record<string, string> = {
					...appProcessEnv(stack, port),
					// Each replica has its own state file, as on its own machine.
					SLACK_STATE_FILE: join(dir, `replica-${i}.json`),
					// The service reports finished jobs to the load balancer, which picks a replica.
					SLACK_PUBLIC_URL: proxy.url,
					GPU_CLOUD_WEBHOOK_SECRET: stack.emulator.webhookSecret,
					...(redis ? { REDIS_URL: redis.url } : {}),
					...options.env,
				};
				replicas.push(await Replica.start(port, env));
			}
		} catch (error) {
			await Promise.all(replicas.map((replica) => replica.kill('SIGKILL')));
			await proxy.close();
			await redis?.stop();
			await stack.close();
			throw error;
		}
		stack.standin.setAppUrl(`${proxy.url}/slack/events`);
		return new Cluster(stack, proxy, replicas, redis, dir);
	}

	async close(): Promise<void> {
		await Promise.all(this.replicas.map((replica) => replica.kill('SIGKILL')));
		await this.proxy.close();
		await this.redis?.stop();
		await this.stack.close();
		await rm(this.dir, { recursive: true, force: true });
	}
}
