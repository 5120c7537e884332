/**
 * The Slack app at the scale of a listed app (issue 35): N workspaces installed and linked (the
 * store filled through the app's own InstallationStore), the production entry spawned in its
 * multi-workspace mode, beside a floor measured in the same run: a minimal Bolt app whose
 * @slack/oauth authorize reads the same number of installations from the same kind of SQLite file
 * (bench/workspaces-floor.ts). Measured: spawn to ready, the longest silence of `/healthz` (probed
 * every 100 ms, each probe given 1 s) while starting, RSS at ready, and the service requests a
 * restart makes with 0 and with 100 requests in flight (counted at the emulator).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { startEmulator, type RunningEmulator } from '../emulator';
import { createManagementClient } from '../shared/runtime';
import { freePort } from '../slack-app/local';
import { SecretCipher } from '../slack-app/state/installations/cipher';
import { InstallationStore } from '../slack-app/state/installations/store';
import { JobOriginSeal, JobOrigins } from '../slack-app/state/job-metadata';
import { StateFile } from '../slack-app/state/state-file';
import { installation } from '../test/slack/installation-store-cases';
import type { Figure, Scenario, ScenarioResult } from './lib';

const ROOT = join(__dirname, '..');
const FULL_SIZES = [1000, 10_000, 50_000];
const IN_FLIGHT = 100;
const PROBE_EVERY_MS = 100;
const PROBE_TIMEOUT_MS = 1000;

interface Started {
	child: ChildProcess;
	output: () => string;
	readyMs: number;
	longestSilenceMs: number;
	probesTimedOut: number;
	rssMb: number;
}

const team = (n: number) => `T${String(n).padStart(7, '0')}`;

/** Fills both stores with `size` workspaces: the app's through its own API, the floor's as plain rows. */
async function fill(dir: string, size: number, key: Buffer, emulator: RunningEmulator) {
	const store = await InstallationStore.open(
		{ sqliteFile: join(dir, 'installations.sqlite') },
		new SecretCipher(key),
	);
	const floor = new DatabaseSync(join(dir, 'floor.sqlite'));
	floor.exec(
		'PRAGMA journal_mode = WAL; CREATE TABLE installations (install_key TEXT PRIMARY KEY, installation TEXT NOT NULL)',
	);
	const insert = floor.prepare(
		'INSERT INTO installations (install_key, installation) VALUES (?, ?)',
	);
	try {
		for (let n = 0; n < size; n++) {
			const each = installation(team(n), `xoxb-${randomBytes(12).toString('hex')}`);
			await store.saveInstallation(each);
			await store.saveLink({
				teamId: team(n),
				organization: emulator.organization,
				apiKey: emulator.apiKey,
				linkedBy: 'U0ADMIN',
			});
			insert.all(team(n), JSON.stringify(each));
		}
	} finally {
		await store.close();
		floor.close();
	}
}

function rssMb(pid: number | undefined): Promise<number> {
	return readFile(`/proc/${pid}/status`, 'utf8').then(
		(status) => Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024,
	);
}

/** Spawns `args` and probes /healthz until `ready` says so; the longest gap between answers. */
async function startAndProbe(
	args: string[],
	env: Record<string, string>,
	port: number,
	ready: () => Promise<boolean>,
): Promise<Started> {
	const spawned = Date.now();
	const child = spawn(process.execPath, args, {
		cwd: ROOT,
		env,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let output = '';
	child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
	child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
	let lastAnswer: number | undefined;
	let longestSilenceMs = 0;
	let probesTimedOut = 0;
	for (;;) {
		if (child.exitCode !== null) throw new Error(`It exited:\n${output}`);
		if (Date.now() - spawned > 30 * 60_000) throw new Error('Not ready after 30 minutes.');
		const probed = Date.now();
		const answered = await fetch(`http://127.0.0.1:${port}/healthz`, {
			signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
		}).then(
			(response) => response.ok,
			(error: unknown) => {
				if (error instanceof Error && error.name === 'TimeoutError') probesTimedOut++;
				return false;
			},
		);
		if (answered) {
			const now = Date.now();
			if (lastAnswer !== undefined) longestSilenceMs = Math.max(longestSilenceMs, now - lastAnswer);
			lastAnswer = now;
			if (await ready()) break;
		} else if (lastAnswer !== undefined)
			longestSilenceMs = Math.max(longestSilenceMs, Date.now() - lastAnswer);
		await new Promise((resolve) =>
			setTimeout(resolve, Math.max(0, PROBE_EVERY_MS - (Date.now() - probed))),
		);
	}
	return {
		child,
		output: () => output,
		readyMs: Date.now() - spawned,
		longestSilenceMs,
		probesTimedOut,
		rssMb: await rssMb(child.pid),
	};
}

async function stop(child: ChildProcess): Promise<void> {
	if (child.exitCode !== null) return;
	const exited = new Promise((resolve) => child.once('exit', resolve));
	child.kill('SIGKILL');
	await exited;
}

/** Records `count` requests under way, each with a running job, as the app records them. */
async function inFlight(
	stateFile: string,
	count: number,
	appSecret: string,
	emulator: RunningEmulator,
) {
	const state = await StateFile.open(stateFile, () => undefined);
	const management = createManagementClient({
		baseUrl: emulator.baseUrl,
		organization: emulator.organization,
		apiKey: emulator.apiKey,
	});
	for (let n = 0; n < count; n++) {
		const origins = new JobOrigins(new JobOriginSeal(appSecret, team(n), () => undefined), state);
		const requestId = randomUUID();
		const metadata = await origins.metadata(
			{
				team: team(n),
				thread: { channel: 'C0BENCH', threadTs: `1700000000.${1000 + n}` },
				user: 'U0BENCH',
				kind: 'job',
			},
			requestId,
			emulator.slowEndpoint,
		);
		const job = await management.jobs.create(emulator.slowEndpoint, {
			input: { text: `in flight ${n}` },
			metadata,
		});
		await origins.created(job);
	}
}

export const slackWorkspaces: Scenario = async ({ smoke }) => {
	const sizes = smoke
		? [1000]
		: (process.env.BENCH_WORKSPACES?.split(',').map(Number) ?? FULL_SIZES);
	const figures: Figure[] = [];
	const figure = (name: string, unit: string, value: number, better: Figure['better'] = 'lower') =>
		figures.push({ name, unit, samples: [value], better });
	const notes: string[] = [];
	const checks: ScenarioResult['checks'] = [];
	// Jobs run for the whole measurement: a restart finds them running.
	const emulator = await startEmulator({ port: 0, jobDurationMs: 60_000 });
	try {
		for (const size of sizes) {
			const dir = await mkdtemp(join(tmpdir(), 'bench-workspaces-'));
			try {
				const key = randomBytes(32);
				const filled = Date.now();
				await fill(dir, size, key, emulator);
				notes.push(
					`${size.toLocaleString('en-US')} workspaces filled through the store API in ${((Date.now() - filled) / 1000).toFixed(1)} s.`,
				);
				const signingSecret = randomBytes(16).toString('hex');
				const appSecret = randomBytes(32).toString('hex');

				const floorPort = await freePort();
				const floor = await startAndProbe(
					['--import', 'tsx', join(ROOT, 'bench', 'workspaces-floor.ts')],
					{
						PATH: process.env.PATH ?? '',
						FLOOR_DB: join(dir, 'floor.sqlite'),
						SLACK_SIGNING_SECRET: signingSecret,
						SLACK_API_URL: 'http://127.0.0.1:9/api/',
						PORT: String(floorPort),
					},
					floorPort,
					async () => true,
				);
				await stop(floor.child);

				const appPort = await freePort();
				const appEnv = {
					PATH: process.env.PATH ?? '',
					HOME: process.env.HOME ?? '',
					SLACK_SIGNING_SECRET: signingSecret,
					SLACK_APP_SECRET: appSecret,
					SLACK_CLIENT_ID: '1111.2222',
					SLACK_CLIENT_SECRET: randomBytes(16).toString('hex'),
					SLACK_STATE_SECRET: randomBytes(32).toString('hex'),
					SLACK_INSTALLATION_KEY: key.toString('hex'),
					SLACK_INSTALLATION_DB: join(dir, 'installations.sqlite'),
					SLACK_STATE_FILE: join(dir, 'state.json'),
					SLACK_API_URL: 'http://127.0.0.1:9/api/',
					// Completion by webhook (none comes here): following a resumed job polls only every 10 minutes,
					// so the requests counted are the restart's own.
					SLACK_PUBLIC_URL: `http://127.0.0.1:${appPort}`,
					SLACK_POLL_INTERVAL_MS: '600000',
					GPU_CLOUD_BASE_URL: emulator.baseUrl,
					HOST: '127.0.0.1',
					PORT: String(appPort),
					LOG_LEVEL: 'info',
				};
				const startApp = () =>
					startAndProbe(
						['--import', 'tsx', join(ROOT, 'slack-app', 'bin.ts')],
						appEnv,
						appPort,
						async () =>
							(await fetch(`http://127.0.0.1:${appPort}/readyz`).catch(() => undefined))?.status ===
							200,
					);

				// A restart with nothing in flight: the requests it sends the service in the next seconds.
				emulator.resetLogs();
				const idle = await startApp();
				await new Promise((resolve) => setTimeout(resolve, 3000));
				const idleRequests = emulator.requests.length;
				await stop(idle.child);

				await inFlight(join(dir, 'state.json'), IN_FLIGHT, appSecret, emulator);
				emulator.resetLogs();
				const busy = await startApp();
				const resumedBy = Date.now() + 120_000;
				while (!/Resumed \d+ running job/.test(busy.output()) && Date.now() < resumedBy)
					await new Promise((resolve) => setTimeout(resolve, 100));
				const busyRequests = emulator.requests.filter((request) => request.method === 'GET').length;
				const listings = emulator.requests.filter((request) => /\/jobs$/.test(request.path)).length;
				await stop(busy.child);

				const n = size.toLocaleString('en-US');
				figure(`app: spawn to ready, ${n} workspaces`, 'ms', idle.readyMs);
				figure(`floor: spawn to ready, ${n} workspaces`, 'ms', floor.readyMs);
				figure(`app: RSS at ready, ${n} workspaces`, 'MB', idle.rssMb);
				figure(`floor: RSS at ready, ${n} workspaces`, 'MB', floor.rssMb);
				figure(
					`app: longest /healthz silence while starting, ${n} workspaces`,
					'ms',
					idle.longestSilenceMs,
				);
				figure(
					`app: restart service requests, 0 in flight, ${n} workspaces`,
					'requests',
					idleRequests,
				);
				figure(
					`app: restart service requests, ${IN_FLIGHT} in flight, ${n} workspaces`,
					'requests',
					busyRequests,
				);
				checks.push(
					{
						label: `/healthz probes timed out while starting (${n})`,
						value: idle.probesTimedOut + busy.probesTimedOut,
						unit: 'probes',
						op: '<=',
						target: 0,
					},
					{
						label: `restart service requests, 0 in flight (${n})`,
						value: idleRequests,
						unit: 'requests',
						op: '<=',
						target: 0,
					},
					{
						label: `restart service requests, ${IN_FLIGHT} in flight (${n})`,
						value: busyRequests,
						unit: 'requests',
						op: '<=',
						target: IN_FLIGHT,
					},
					{
						label: `endpoint listings at that restart (${n})`,
						value: listings,
						unit: 'requests',
						op: '<=',
						target: 0,
					},
				);
			} finally {
				await rm(dir, { recursive: true, force: true });
			}
		}
	} finally {
		await emulator.close();
	}
	const largest = sizes.at(-1)?.toLocaleString('en-US') ?? '';
	return {
		title: '13. Slack app at many workspaces',
		description:
			"The production entry in its multi-workspace mode on a SQLite store of N installed and linked workspaces (filled through the app's InstallationStore), beside the floor measured in the same run: a minimal Bolt app whose @slack/oauth authorize reads installations from the same kind of SQLite file. `/healthz` is probed every 100 ms (1 s allowed per probe) from spawn to ready; a restart's service requests are counted at the emulator, with nothing in flight and with 100 requests recorded under way (their jobs running). One run per size, whatever `--runs` says (a size takes minutes). `npm run bench -- slack-workspaces` (`BENCH_WORKSPACES=1000,10000` for fewer sizes).",
		figures,
		comparisons: [
			{
				subject: `app: spawn to ready, ${largest} workspaces`,
				baseline: `floor: spawn to ready, ${largest} workspaces`,
				target: { op: '<=', value: 3 },
			},
			{
				subject: `app: RSS at ready, ${largest} workspaces`,
				baseline: `floor: RSS at ready, ${largest} workspaces`,
				target: { op: '<=', value: 2 },
			},
		],
		checks,
		notes: [
			...notes,
			'Not measured yet: RSS after 5,000 distinct workspaces each ran one command, and the parent latency of 20 commands sent at readiness (they need a Slack stand-in answering thousands of bot tokens).',
		],
	};
};
