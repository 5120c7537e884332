import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';

/**
 * Child processes of the end-to-end run. Each runs in its own process group (n8n starts task
 * runners of its own) so that stopping it stops everything it started, and every group still
 * alive when this process exits is killed, whatever the reason for the exit.
 */

const liveGroups = new Set<number>();

function killGroup(pid: number, signal: NodeJS.Signals): void {
	try {
		process.kill(-pid, signal);
	} catch {
		// Already gone.
	}
}

process.on('exit', () => {
	for (const pid of liveGroups) killGroup(pid, 'SIGKILL');
});
// Interrupted runs exit through the handler above too.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
	process.once(signal, () => process.exit(130));
}

export interface RunOptions {
	cwd?: string;
	env?: NodeJS.ProcessEnv;
	/** Runs it as this user (a root CI runs nginx as nobody). */
	user?: { uid: number; gid: number };
	timeoutMs: number;
	/** Appends everything the process writes to this file (kept for diagnosis). */
	logFile?: string;
}

export interface RunResult {
	code: number | null;
	signal: NodeJS.Signals | null;
	stdout: string;
	stderr: string;
	timedOut: boolean;
	durationMs: number;
}

function track(
	child: ChildProcess,
	logFile: string | undefined,
): { stdout: () => string; stderr: () => string } {
	const out: Buffer[] = [];
	const err: Buffer[] = [];
	const log = logFile ? createWriteStream(logFile, { flags: 'a' }) : undefined;
	child.stdout?.on('data', (chunk: Buffer) => {
		out.push(chunk);
		log?.write(chunk);
	});
	child.stderr?.on('data', (chunk: Buffer) => {
		err.push(chunk);
		log?.write(chunk);
	});
	child.on('close', () => log?.end());
	return {
		stdout: () => Buffer.concat(out).toString('utf8'),
		stderr: () => Buffer.concat(err).toString('utf8'),
	};
}

/** Runs a command to its end, or kills its whole group when the time is up. */
export async function run(
	command: string,
	args: string[],
	options: RunOptions,
): Promise<RunResult> {
	const started = Date.now();
	const child = spawn(command, args, {
		cwd: options.cwd,
		env: options.env,
		detached: true,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	const output = track(child, options.logFile);
	const pid = child.pid;
	if (pid !== undefined) liveGroups.add(pid);
	let timedOut = false;
	const timer = setTimeout(() => {
		timedOut = true;
		if (pid !== undefined) killGroup(pid, 'SIGKILL');
	}, options.timeoutMs);
	try {
		const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>(
			(resolve, reject) => {
				child.once('error', reject);
				child.once('close', (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
			},
		);
		return {
			code,
			signal,
			stdout: output.stdout(),
			stderr: output.stderr(),
			timedOut,
			durationMs: Date.now() - started,
		};
	} finally {
		clearTimeout(timer);
		if (pid !== undefined) {
			// Anything the command left running in its group goes with it.
			killGroup(pid, 'SIGKILL');
			liveGroups.delete(pid);
		}
	}
}

/** The end of what a process printed, for the error that says it failed. */
function lastLines(stdout: string, stderr: string): string {
	return `${stdout}\n${stderr}`.trim().split('\n').slice(-15).join('\n');
}

/** Runs a command and throws, with the end of its output, unless it exits with 0. */
export async function runOrThrow(
	command: string,
	args: string[],
	options: RunOptions,
): Promise<RunResult> {
	const result = await run(command, args, options);
	if (result.code !== 0) {
		const why = result.timedOut
			? `timed out after ${options.timeoutMs / 1000} s`
			: `exited with ${result.code ?? result.signal}`;
		const tail = lastLines(result.stdout, result.stderr);
		throw new Error(
			`${[command, ...args].join(' ')} ${why}${options.logFile ? ` (log: ${options.logFile})` : ''}\n${tail}`,
		);
	}
	return result;
}

/** A long-running process (the n8n server), stopped with SIGTERM and then SIGKILL. */
export class Service {
	private readonly child: ChildProcess;
	private readonly output: { stdout: () => string; stderr: () => string };
	private readonly exited: Promise<void>;
	private exitCode: number | null | undefined;

	constructor(command: string, args: string[], options: Omit<RunOptions, 'timeoutMs'>) {
		this.child = spawn(command, args, {
			cwd: options.cwd,
			env: options.env,
			...options.user,
			detached: true,
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		this.output = track(this.child, options.logFile);
		if (this.child.pid !== undefined) liveGroups.add(this.child.pid);
		this.exited = new Promise((resolve) => {
			this.child.once('error', () => resolve());
			this.child.once('close', (code) => {
				this.exitCode = code;
				resolve();
			});
		});
	}

	get stdout(): string {
		return this.output.stdout();
	}

	get pid(): number | undefined {
		return this.child.pid;
	}

	get hasExited(): boolean {
		return this.exitCode !== undefined;
	}

	/** Waits until the output contains the text; fails early if the process ends first. */
	async waitForOutput(text: string, timeoutMs: number): Promise<void> {
		const deadline = Date.now() + timeoutMs;
		while (!this.output.stdout().includes(text) && !this.output.stderr().includes(text)) {
			if (this.hasExited)
				throw new Error(
					`the process exited (${this.exitCode}) before printing "${text}"\n${lastLines(this.output.stdout(), this.output.stderr())}`,
				);
			if (Date.now() > deadline)
				throw new Error(`"${text}" did not appear within ${timeoutMs / 1000} s`);
			await new Promise((resolve) => setTimeout(resolve, 200));
		}
	}

	async stop(graceMs = 10_000): Promise<void> {
		const pid = this.child.pid;
		if (pid === undefined) return;
		if (!this.hasExited) {
			killGroup(pid, 'SIGTERM');
			const timer = setTimeout(() => killGroup(pid, 'SIGKILL'), graceMs);
			await this.exited;
			clearTimeout(timer);
		}
		// Task runners and anything else n8n started in its group.
		killGroup(pid, 'SIGKILL');
		liveGroups.delete(pid);
	}
}
