import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { eventually } from '../support/eventually';
import { descendants } from '../support/proc';

/**
 * `npm start` stopped the way a process manager stops it: a signal to the npm process only. Every
 * process it started (the app, the emulator's process) must be gone once npm has exited. Before,
 * npm passed SIGTERM to `sh -c`, which did not pass it on, and six processes kept running.
 */

jest.setTimeout(120_000);

const ROOT = join(__dirname, '..', '..');

function alive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
	it(`stops every process it started on ${signal} to npm`, async () => {
		const env = Object.fromEntries(
			Object.entries(process.env).filter(([name]) => !/^(SLACK_|GPU_CLOUD_|PORT$|npm_)/.test(name)),
		);
		// Its own process group, as under a process manager: the test signals npm alone.
		const npm = spawn('npm', ['start'], {
			cwd: ROOT,
			env,
			stdio: ['ignore', 'pipe', 'pipe'],
			detached: true,
		});
		let output = '';
		npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
		npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
		const pid = npm.pid ?? 0;
		let started: number[] = [];
		try {
			await eventually('npm start to print its page', () => output.includes('Open http'), {
				timeoutMs: 90_000,
				intervalMs: 200,
			});
			started = await descendants(pid);
			// The app and the emulator's process at least.
			expect(started.length).toBeGreaterThanOrEqual(2);
			npm.kill(signal);
			await eventually('npm to exit', () => npm.exitCode !== null || npm.signalCode !== null, {
				timeoutMs: 30_000,
				intervalMs: 100,
			});
			await eventually(
				'every process npm start started to exit',
				() => started.every((child) => !alive(child)),
				{ timeoutMs: 30_000, intervalMs: 100 },
			).catch(() => undefined);
			expect(started.filter(alive)).toEqual([]);
		} finally {
			for (const child of [pid, ...started].filter(alive)) process.kill(child, 'SIGKILL');
		}
	});
}
