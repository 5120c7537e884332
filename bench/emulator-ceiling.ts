/**
 * The emulator's ceiling: how many simple authenticated GETs (one catalogue item) it answers per
 * second. The emulator runs in a child process so the load generator (an undici Pool here) does not
 * share its event loop; on a 2-core machine that is one core each.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';
import { DEV_API_KEY } from '../emulator';
import { median, type Scenario } from './lib';

export interface CeilingOptions {
	durationMs: number;
	concurrency: number;
}

export interface CeilingResult {
	requestsPerSecond: number;
	errors: number;
}

const WARM_UP_MS = 500;

/** Starts `emulator/cli.ts` on a free port and resolves with its management URL once it listens. */
async function startEmulatorProcess() {
	const root = join(__dirname, '..');
	const child = spawn(
		process.execPath,
		[
			join(root, 'node_modules/tsx/dist/cli.mjs'),
			join(root, 'emulator/cli.ts'),
			'--port',
			'0',
			'--rate-limit',
			'0',
		],
		{
			cwd: root,
			stdio: ['ignore', 'pipe', 'inherit'],
		},
	);
	const lines = createInterface({ input: child.stdout });
	for await (const line of lines) {
		const match = /Management API:\s+(\S+)/.exec(line);
		if (match?.[1]) {
			// Keep draining stdout so the child never blocks on a full pipe.
			lines.on('line', () => undefined);
			return { child, baseUrl: match[1] };
		}
	}
	throw new Error('The emulator process exited before printing its URL.');
}

export async function measureEmulatorCeiling(opts: CeilingOptions): Promise<CeilingResult> {
	const { child, baseUrl } = await startEmulatorProcess();
	const url = new URL(`${baseUrl}/organizations/acme/inference-endpoints/transcribe`);
	const pool = new Pool(url.origin, {
		connections: opts.concurrency,
		pipelining: 1,
		keepAliveTimeout: 10_000,
	});
	const path = url.pathname;
	const headers = { 'service-api-key': DEV_API_KEY };
	let counting = false;
	let done = 0;
	let errors = 0;
	let stopAt = 0;
	async function worker(): Promise<void> {
		while (Date.now() < stopAt) {
			try {
				const response = await pool.request({ method: 'GET', path, headers });
				await response.body.dump();
				if (!counting) continue;
				if (response.statusCode === 200) done++;
				else errors++;
			} catch {
				if (counting) errors++;
			}
		}
	}
	try {
		stopAt = Date.now() + WARM_UP_MS;
		await Promise.all(Array.from({ length: opts.concurrency }, worker));
		counting = true;
		const started = Date.now();
		stopAt = started + opts.durationMs;
		await Promise.all(Array.from({ length: opts.concurrency }, worker));
		const seconds = (Date.now() - started) / 1000;
		return { requestsPerSecond: Math.round(done / seconds), errors };
	} finally {
		await pool.close();
		child.kill('SIGTERM');
		await once(child, 'exit');
	}
}

if (require.main === module) {
	const durationMs = Number(process.env.DURATION_MS ?? 5000);
	const concurrency = Number(process.env.CONCURRENCY ?? 64);
	measureEmulatorCeiling({ durationMs, concurrency }).then(
		(result) => {
			console.log(
				`emulator ceiling: ${result.requestsPerSecond} requests/s (GET one catalogue item, ${concurrency} keep-alive connections, ${durationMs} ms), ${result.errors} errors`,
			);
		},
		(error: unknown) => {
			console.error(error);
			process.exitCode = 1;
		},
	);
}

/** Scenario 7 for `npm run bench`. */
export const emulatorCeiling: Scenario = async ({ smoke, runs }) => {
	const samples: number[] = [];
	let errors = 0;
	for (let run = 0; run < runs; run++) {
		const result = await measureEmulatorCeiling({
			durationMs: smoke ? 300 : 5000,
			concurrency: 64,
		});
		samples.push(result.requestsPerSecond);
		errors += result.errors;
	}
	return {
		title: '7. Emulator ceiling',
		description:
			'Authenticated `GET` of one catalogue item, 64 keep-alive connections from an undici Pool; the emulator runs in its own process (one core each).',
		figures: [{ name: 'emulator GETs', unit: 'requests/s', samples, better: 'higher' }],
		comparisons: [],
		checks: [
			{ label: 'emulator GETs/s', value: median(samples), unit: '/s', op: '>=', target: 10_000 },
			{ label: 'errors', value: errors, unit: '', op: '<=', target: 0 },
		],
	};
};
