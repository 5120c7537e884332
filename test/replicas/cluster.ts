import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../slack-app/local';
import { kill, spawnApp, spawnNode, type AppProcess } from '../reliability/slack-process';
import { appProcessEnv, partsEnv, Stack, type EmulatorOptions } from '../slack/harness';
import { Nginx, Redis } from '../support/services';
import { startEmulatorProcess, startStandinProcess, type EmulatorSettings } from './parts';
import { RoundRobinProxy } from './proxy';

/**
 * Several replicas of the Slack app on real parts: Debian's redis-server on a free loopback port,
 * N app processes started from the production entry (slack-app/bin.ts, through tsx) sharing it, and
 * a round-robin HTTP proxy in front of them that both Slack (the stand-in) and the service (the
 * emulator's webhooks) talk to. `Cluster` keeps the emulator, the stand-in and the proxy in this
 * process (the replica suite reads and steers them directly); `ProcessCluster` runs each in a
 * process of its own (the replica benchmark, where a thousand commands at once would saturate a
 * process shared by all three and measure it instead of the replicas).
 */

export class Replica {
	private constructor(
		readonly port: number,
		private readonly app: AppProcess,
		/** What it was started with: the same again is a restart (its own state file included). */
		readonly env: Record<string, string>,
	) {}

	get child(): ChildProcess {
		return this.app.child;
	}

	/** Everything it printed so far (stdout and stderr). */
	get output(): string {
		return this.app.output();
	}

	/**
	 * Starts the production entry point and resolves once it serves: bin.ts through tsx, or with
	 * `compiled` the build's bin (`npm run build`) under plain node, as the packed app runs it, with
	 * `compiled.nodeArgs` (e.g. `--cpu-prof`).
	 */
	static async start(
		port: number,
		env: Record<string, string>,
		compiled?: CompiledReplicas,
	): Promise<Replica> {
		const app = compiled
			? spawnCompiled({ ...env, PORT: String(port) }, compiled.nodeArgs ?? [])
			: spawnApp({ ...env, PORT: String(port) }, 'bin.ts');
		const replica = new Replica(port, app, env);
		const { child } = app;
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

/** The build's production entry, as `gpu-cloud-slack` in slack-app/package.json names it. */
export const COMPILED_BIN = join(__dirname, '..', '..', 'slack-app', 'dist', 'slack-app', 'bin.js');

export interface CompiledReplicas {
	nodeArgs?: string[];
}

function spawnCompiled(env: Record<string, string>, nodeArgs: string[]): AppProcess {
	return spawnNode([...nodeArgs, COMPILED_BIN], env);
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
		const stack = await Stack.start({
			app: false,
			emulator: options.emulator,
		});
		const redis = options.redis ? await Redis.start(dir, { appendOnly: true }) : undefined;
		const ports: number[] = [];
		for (let i = 0; i < options.replicas; i++) ports.push(await freePort());
		const proxy = await RoundRobinProxy.start(await freePort(), ports);
		let replicas: Replica[];
		try {
			replicas = await startReplicas(ports, (i, port) => ({
				...appProcessEnv(stack, port),
				...replicaEnv(i, dir, proxy.url, stack.emulator.webhookSecret, redis),
				...options.env,
			}));
		} catch (error) {
			await proxy.close();
			await redis?.stop();
			await stack.close();
			throw error;
		}
		stack.standin.setAppUrl(`${proxy.url}/slack/events`);
		return new Cluster(stack, proxy, replicas, redis, dir);
	}

	/** The replicas' own account of what happened (their last warnings and errors), for a failure's reader. */
	logWarnings(): void {
		for (const replica of this.replicas)
			console.log(
				`--- replica on ${replica.port}:\n${replica.output
					.split('\n')
					.filter((line) => /"level":"(warn|error)"/.test(line))
					.slice(-30)
					.join('\n')}`,
			);
	}

	async close(): Promise<void> {
		await Promise.all(this.replicas.map((replica) => replica.kill('SIGKILL')));
		await this.proxy.close();
		await this.redis?.stop();
		await this.stack.close();
		await rm(this.dir, { recursive: true, force: true });
	}
}

/** What each replica needs besides the service and Slack settings. */
function replicaEnv(
	index: number,
	dir: string,
	proxyUrl: string,
	webhookSecret: string,
	redis: Redis | undefined,
): Record<string, string> {
	return {
		// Each replica has its own state file, as on its own machine.
		SLACK_STATE_FILE: join(dir, `replica-${index}.json`),
		// The service reports finished jobs to the load balancer, which picks a replica.
		SLACK_PUBLIC_URL: proxyUrl,
		GPU_CLOUD_WEBHOOK_SECRET: webhookSecret,
		...(redis ? { REDIS_URL: redis.url } : {}),
	};
}

/** Starts a replica on each port, one after another; none is left running if one fails. */
async function startReplicas(
	ports: number[],
	envOf: (index: number, port: number) => Record<string, string>,
	compiled?: CompiledReplicas,
): Promise<Replica[]> {
	const replicas: Replica[] = [];
	try {
		for (const [i, port] of ports.entries())
			replicas.push(await Replica.start(port, envOf(i, port), compiled));
	} catch (error) {
		await Promise.all(replicas.map((replica) => replica.kill('SIGKILL')));
		throw error;
	}
	return replicas;
}

export interface ProcessClusterOptions {
	replicas: number;
	/** Replicas from the build under plain node (see Replica.start); through tsx when absent. */
	compiled?: CompiledReplicas;
	emulator: EmulatorSettings;
	env?: Record<string, string>;
}

/**
 * Replicas sharing Debian's redis-server, behind Debian's nginx (the load balancer of a deployment,
 * which costs the cores a tenth of what a Node proxy does), with the emulator and the Slack stand-in
 * each in a process of its own; what Slack shows is read from the stand-in's process.
 */
export class ProcessCluster {
	private constructor(
		readonly emulator: Awaited<ReturnType<typeof startEmulatorProcess>>,
		readonly standin: Awaited<ReturnType<typeof startStandinProcess>>,
		/** Debian's nginx balancing over the replicas, as a deployment's load balancer. */
		readonly proxy: { nginx: Nginx; url: string },
		readonly replicas: Replica[],
		readonly redis: Redis,
		private readonly dir: string,
	) {}

	static async start(options: ProcessClusterOptions): Promise<ProcessCluster> {
		const dir = await mkdtemp(join(tmpdir(), 'gpu-cloud-replicas-'));
		const stops: Array<() => Promise<void>> = [() => rm(dir, { recursive: true, force: true })];
		const undo = () => Promise.all(stops.map((stop) => stop().catch(() => undefined)));
		try {
			// Started together, each a process of its own; all settle before any failure is thrown, so
			// that `undo` stops every part that did start.
			const stoppable = <T>(part: Promise<T>, stop: (started: T) => Promise<void>) =>
				part.then((started) => {
					stops.push(() => stop(started));
					return started;
				});
			const starting = [
				stoppable(startEmulatorProcess(options.emulator), (started) => started.part.stop()),
				stoppable(startStandinProcess(), (started) => started.part.stop()),
				stoppable(Redis.start(dir, { appendOnly: true }), (started) => started.stop()),
			] as const;
			await Promise.allSettled(starting);
			const [emulator, standin, redis] = await Promise.all(starting);
			const ports: number[] = [];
			for (let i = 0; i < options.replicas; i++) ports.push(await freePort());
			const proxyPort = await freePort();
			const proxy = {
				nginx: await Nginx.balance(join(dir, 'nginx'), proxyPort, ports),
				url: `http://127.0.0.1:${proxyPort}`,
			};
			stops.push(() => proxy.nginx.stop());
			const { service } = emulator;
			const { slack } = standin;
			const replicas = await startReplicas(
				ports,
				(i, port) => ({
					...partsEnv({ service, slack }, port),
					...replicaEnv(i, dir, proxy.url, service.webhookSecret, redis),
					...options.env,
				}),
				options.compiled,
			);
			await standin.setAppUrl(`${proxy.url}/slack/events`);
			return new ProcessCluster(emulator, standin, proxy, replicas, redis, dir);
		} catch (error) {
			await undo();
			throw error;
		}
	}

	async close(): Promise<void> {
		await Promise.all(this.replicas.map((replica) => replica.kill('SIGKILL')));
		await this.proxy.nginx.stop();
		await this.redis.stop();
		await this.standin.part.stop();
		await this.emulator.part.stop();
		await rm(this.dir, { recursive: true, force: true });
	}
}
