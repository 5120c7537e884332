import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { appProcessEnv, type Stack } from '../slack/harness';

/**
 * The Slack app's real entry points (`npm start` → slack-app/start.ts, the production
 * slack-app/bin.ts) as child processes, so they can be killed with SIGKILL and started again.
 */

const ROOT = join(__dirname, '..', '..');

export interface AppProcess {
	child: ChildProcess;
	/** Everything the process printed so far (stdout and stderr). */
	output(): string;
}

/** Spawns an entry point of slack-app/ with exactly `env`, collecting what it prints. */
export function spawnApp(env: Record<string, string>, entry = 'start.ts'): AppProcess {
	// One process (tsx as a loader, not its CLI, which would fork): SIGKILL hits the app itself.
	return spawnNode(['--import', 'tsx', join(ROOT, 'slack-app', entry)], env);
}

/** Runs node with `args` and exactly `env` in the repository's root, collecting what it prints. */
export function spawnNode(args: string[], env: Record<string, string>): AppProcess {
	const child = spawn(process.execPath, args, {
		cwd: ROOT,
		env,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let output = '';
	child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
	child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
	return { child, output: () => output };
}

/**
 * `npm start`'s entry against a test Stack's emulator and Slack stand-in, resolved once it says
 * where Slack requests go, or (the stack's stand-in in Socket Mode) that it is connected.
 */
export function startAppProcess(
	stack: Stack,
	port: number,
	env: Record<string, string> = {},
	timeoutMs = 30_000,
): Promise<AppProcess> {
	const app = spawnApp({ ...appProcessEnv(stack, port), ...env });
	const { child } = app;
	return new Promise((resolve, reject) => {
		const timer = setTimeout(
			() => reject(new Error(`The app did not start in time:\n${app.output()}`)),
			timeoutMs,
		);
		const check = () => {
			if (!/Slack requests go to| over Socket Mode\./.test(app.output())) return;
			clearTimeout(timer);
			child.stdout?.off('data', check);
			resolve(app);
		};
		child.stdout?.on('data', check);
		child.once('exit', (code) => {
			clearTimeout(timer);
			reject(new Error(`The app exited with ${code}:\n${app.output()}`));
		});
	});
}

/** Signals the process and resolves once it has exited; SIGKILL by default: no shutdown hook runs, nothing is flushed. */
export function kill(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
	return new Promise((resolve) => {
		if (child.exitCode !== null || child.signalCode !== null) return resolve();
		child.once('exit', () => resolve());
		child.kill(signal);
	});
}
