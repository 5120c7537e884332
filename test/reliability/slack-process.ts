import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { appProcessEnv, type Stack } from '../slack/harness';

/**
 * The Slack app's real entry point (`npm start` → slack-app/start.ts) as a child process against a
 * test Stack's emulator and Slack stand-in, so it can be killed with SIGKILL and started again.
 */

const ROOT = join(__dirname, '..', '..');

export interface AppProcess {
	child: ChildProcess;
	/** Everything the process printed so far (stdout and stderr). */
	output(): string;
}

export function startAppProcess(
	stack: Stack,
	port: number,
	env: Record<string, string> = {},
): Promise<AppProcess> {
	const childEnv: Record<string, string> = {
		...appProcessEnv(stack, port),
		...env,
	};
	// One process (tsx as a loader, not its CLI, which would fork): SIGKILL hits the app itself.
	const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'slack-app', 'start.ts')], {
		cwd: ROOT,
		env: childEnv,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let output = '';
	child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
	child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
	return new Promise((resolve, reject) => {
		const timer = setTimeout(
			() => reject(new Error(`The app did not start in time:\n${output}`)),
			30_000,
		);
		const check = () => {
			if (!output.includes('Slack requests go to')) return;
			clearTimeout(timer);
			child.stdout?.off('data', check);
			resolve({ child, output: () => output });
		};
		child.stdout?.on('data', check);
		child.once('exit', (code) => {
			clearTimeout(timer);
			reject(new Error(`The app exited with ${code}:\n${output}`));
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
