import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv, type NodeInstall } from './install';
import { run } from './processes';

/**
 * The README's manual install ("an n8n without access to npm"), run exactly as written: the lines
 * of its `sh` block after the one that packs this repository, with only the tarball's placeholder
 * path replaced, under a HOME of the caller's choosing (so `~/.n8n/nodes` is a test n8n's folder),
 * with an empty npm cache and no registry (npm offline, its registry a closed loopback port).
 */

const HEADING = '**Manual install into `~/.n8n/nodes`**';
const PLACEHOLDER = '/path/to/n8n-nodes-gpu-cloud-<version>.tgz';
export const PACKAGE_NAME = 'n8n-nodes-gpu-cloud';
/** Nothing listens on port 1 of the loopback: a request that escapes `offline` fails at once. */
const NO_REGISTRY = 'http://127.0.0.1:1/';
const INSTALL_TIMEOUT_MS = 180_000;

/** The commands the README gives for a machine with n8n (the pack line runs in the repository). */
export function manualInstallCommands(readme: string): string[] {
	const start = readme.indexOf(HEADING);
	if (start < 0) throw new Error(`README.md has no section ${HEADING}`);
	const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(start));
	if (!block) throw new Error(`README.md: no sh block after ${HEADING}`);
	const lines = block[1]
		.split('\n')
		.map((line) => line.replace(/\s+#.*$/, '').trim())
		.filter((line) => line !== '' && !line.startsWith('#'));
	const packLine = lines.findIndex((line) => line.includes('npm pack'));
	if (packLine !== 0) throw new Error(`README.md: the manual install does not start with npm pack`);
	const commands = lines.slice(1);
	if (!commands.some((line) => line.includes(PLACEHOLDER)))
		throw new Error(`README.md: the manual install never installs ${PLACEHOLDER}`);
	return commands;
}

export interface ManualInstallResult {
	/** Every package under `<home>/.n8n/nodes/node_modules`, nested ones included. */
	installed: string[];
	durationMs: number;
}

/** Every package name under a node_modules tree, nested ones included. */
export async function packagesUnder(nodeModules: string): Promise<string[]> {
	let entries: string[];
	try {
		entries = await readdir(nodeModules);
	} catch {
		return [];
	}
	const names: string[] = [];
	for (const entry of entries.filter((name) => !name.startsWith('.'))) {
		const dirs = entry.startsWith('@')
			? (await readdir(join(nodeModules, entry))).map((name) => `${entry}/${name}`)
			: [entry];
		for (const name of dirs) {
			names.push(name, ...(await packagesUnder(join(nodeModules, name, 'node_modules'))));
		}
	}
	return names;
}

/**
 * Runs the README's manual install of `tarball` with `home` as HOME, offline with an empty npm
 * cache; throws with npm's output when a command fails. `node` puts that Node first on PATH (npm
 * then runs on it, as on a machine with only that n8n's Node).
 */
export async function manualInstall(options: {
	readme: string;
	tarball: string;
	home: string;
	node?: NodeInstall;
	logFile?: string;
}): Promise<ManualInstallResult> {
	const commands = manualInstallCommands(options.readme);
	const cache = await mkdtemp(join(tmpdir(), 'gpu-cloud-npm-cache-'));
	await mkdir(options.home, { recursive: true });
	try {
		const env: NodeJS.ProcessEnv = {
			...cleanEnv(options.node),
			HOME: options.home,
			npm_config_cache: cache,
			npm_config_offline: 'true',
			npm_config_registry: NO_REGISTRY,
		};
		// Settings of the caller's npm (a registry mirror, a cache) would not exist on that machine.
		for (const name of Object.keys(env))
			if (/^npm_config_/i.test(name) && !/^npm_config_(cache|offline|registry)$/.test(name))
				delete env[name];
		const script = [
			'set -e',
			...commands.map((line) => line.replaceAll(PLACEHOLDER, options.tarball)),
		];
		const result = await run('sh', ['-c', script.join('\n')], {
			cwd: options.home,
			env,
			timeoutMs: INSTALL_TIMEOUT_MS,
			logFile: options.logFile,
		});
		if (result.code !== 0)
			throw new Error(
				`the README's manual install ${result.timedOut ? 'timed out' : `exited with ${result.code ?? result.signal}`}:\n${`${result.stdout}\n${result.stderr}`
					.trim()
					.split('\n')
					.slice(-12)
					.join('\n')}`,
			);
		const installed = await packagesUnder(join(options.home, '.n8n', 'nodes', 'node_modules'));
		return { installed, durationMs: result.durationMs };
	} finally {
		await rm(cache, { recursive: true, force: true });
	}
}
