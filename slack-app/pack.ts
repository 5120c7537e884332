import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod/v4';

/**
 * `npm run pack:slack-app [destination]`: the Slack app as one tarball that installs anywhere with
 * `npm install ./gpu-cloud-slack-app-<version>.tgz`, offline: compiled JavaScript (shared/ core
 * included), `.env.example`, the systemd unit, nginx example and dashboard of docs/deploy/, and its
 * production dependencies bundled at exactly the versions the repository's package-lock.json pins
 * (the tests ran on them). No TypeScript, no tsx, no n8n, no emulator. It compiles into a staging
 * folder, installs the dependencies there with `npm ci --omit=dev` from a shrinkwrap cut out of the
 * lockfile, removes what never runs from them (see `prune`), and packs that folder. The destination
 * folder is created when missing.
 */

const HERE = __dirname;
const ROOT = join(HERE, '..');
const WORKSPACE = 'slack-app';

const lockEntry = z.looseObject({
	dependencies: z.record(z.string(), z.string()).optional(),
	optionalDependencies: z.record(z.string(), z.string()).optional(),
	peerDependencies: z.record(z.string(), z.string()).optional(),
	peerDependenciesMeta: z
		.record(z.string(), z.looseObject({ optional: z.boolean().optional() }))
		.optional(),
});
type LockEntry = z.infer<typeof lockEntry>;
const lockfileSchema = z.looseObject({
	lockfileVersion: z.literal(3),
	packages: z.record(z.string(), lockEntry),
});
const manifestSchema = z.looseObject({
	name: z.string(),
	version: z.string(),
	dependencies: z.record(z.string(), z.string()),
});
type Lockfile = z.infer<typeof lockfileSchema>;
type Manifest = z.infer<typeof manifestSchema>;

/** Where Node finds `name` from a package installed at `from`: its own node_modules, then each parent's. */
function resolveIn(
	packages: Record<string, LockEntry>,
	from: string,
	name: string,
): string | undefined {
	for (let base = from; ; ) {
		const candidate = `${base ? `${base}/` : ''}node_modules/${name}`;
		if (packages[candidate]) return candidate;
		if (!base) return undefined;
		const cut = base.lastIndexOf('/node_modules/');
		base = cut >= 0 ? base.slice(0, cut) : '';
	}
}

/** The workspace's production dependency tree, as the root lockfile pins it, as an npm-shrinkwrap.json. */
export function shrinkwrap(
	lock: Lockfile,
	app: Manifest,
): { packages: Record<string, LockEntry> } & Record<string, unknown> {
	const { packages } = lock;
	const root = packages[WORKSPACE];
	if (!root) throw new Error(`package-lock.json has no ${WORKSPACE} workspace`);
	const placed = new Map<string, string>();
	const queue: [from: string, name: string, optional: boolean][] = Object.keys(
		app.dependencies,
	).map((name) => [WORKSPACE, name, false]);
	for (let next = queue.shift(); next; next = queue.shift()) {
		const [from, name, optional] = next;
		const location = resolveIn(packages, from, name);
		if (!location) {
			if (optional) continue;
			throw new Error(`package-lock.json does not pin ${name} (needed by ${from})`);
		}
		if (placed.has(location)) continue;
		// The workspace's own node_modules become the package's top level.
		const target = location.startsWith(`${WORKSPACE}/`)
			? location.slice(WORKSPACE.length + 1)
			: location;
		if ([...placed.values()].includes(target))
			throw new Error(`${target} is pinned twice at different versions`);
		placed.set(location, target);
		const entry = packages[location];
		for (const dep of Object.keys(entry.dependencies ?? {})) queue.push([location, dep, false]);
		for (const dep of Object.keys(entry.optionalDependencies ?? {}))
			queue.push([location, dep, true]);
		for (const dep of Object.keys(entry.peerDependencies ?? {}))
			queue.push([location, dep, entry.peerDependenciesMeta?.[dep]?.optional === true]);
	}
	const pinned = [...placed]
		.sort(([, a], [, b]) => a.localeCompare(b))
		.map(([location, target]) => {
			// In the root lockfile these flags describe the whole repository's tree, not this one.
			const { dev: _dev, devOptional: _devOptional, peer: _peer, ...entry } = packages[location];
			return [target, entry] as const;
		});
	return {
		name: app.name,
		version: app.version,
		lockfileVersion: 3,
		requires: true,
		packages: { '': root, ...Object.fromEntries(pinned) },
	};
}

export interface PackOptions {
	/** Folder the tarball is written to. */
	destination: string;
	/** Only npm's cache, never the registry (tests); by default the cache first, then the registry. */
	offline?: boolean;
}

/** Builds the tarball; resolves with its path. */
export async function packSlackApp(options: PackOptions): Promise<string> {
	const destination = resolve(options.destination);
	await mkdir(destination, { recursive: true });
	const staging = await mkdtemp(join(tmpdir(), 'gpu-cloud-slack-pack-'));
	try {
		await run(
			process.execPath,
			[
				require.resolve('typescript/bin/tsc'),
				'-p',
				join(HERE, 'tsconfig.build.json'),
				'--outDir',
				join(staging, 'dist'),
			],
			ROOT,
		);
		const manifest = manifestSchema.parse(
			JSON.parse(await readFile(join(HERE, 'package.json'), 'utf8')),
		);
		const lock = lockfileSchema.parse(
			JSON.parse(await readFile(join(ROOT, 'package-lock.json'), 'utf8')),
		);
		await writeFile(
			join(staging, 'package.json'),
			`${JSON.stringify({ ...manifest, bundleDependencies: true }, null, 2)}\n`,
		);
		await writeFile(
			join(staging, 'npm-shrinkwrap.json'),
			`${JSON.stringify(shrinkwrap(lock, manifest), null, 2)}\n`,
		);
		await copyFile(join(HERE, '.env.example'), join(staging, '.env.example'));
		// The server has the tarball, not the repository: the files the docs install travel with it.
		await mkdir(join(staging, 'deploy'));
		for (const file of await readdir(DEPLOY_FILES))
			await copyFile(join(DEPLOY_FILES, file), join(staging, 'deploy', file));
		// No dependency of the app needs an install script; none runs.
		await run(
			'npm',
			[
				'ci',
				'--omit=dev',
				'--ignore-scripts',
				'--no-audit',
				'--no-fund',
				options.offline ? '--offline' : '--prefer-offline',
			],
			staging,
		);
		await prune(join(staging, 'node_modules'));
		const packed = z
			.array(z.object({ filename: z.string() }))
			.parse(
				JSON.parse(
					await run('npm', ['pack', '--json', '--pack-destination', destination], staging),
				),
			);
		return join(destination, packed[0].filename);
	} finally {
		await rm(staging, { recursive: true, force: true });
	}
}

/**
 * Removes from the installed dependencies what Node never loads: source maps, type declarations,
 * TypeScript sources, documents (licences stay), the dependencies' own tests, examples and CI
 * files. Package folders and their package.json stay, so npm still sees every bundled dependency installed.
 */
export async function prune(nodeModules: string): Promise<void> {
	for (const entry of await readdir(nodeModules, { recursive: true, withFileTypes: true })) {
		const path = join(entry.parentPath, entry.name);
		const unused = entry.isDirectory()
			? UNUSED_FOLDER.test(entry.name)
			: UNUSED_FILE.test(entry.name) && !LICENCE.test(entry.name);
		if (unused) await rm(path, { recursive: true, force: true });
	}
}

const UNUSED_FILE = /\.(map|d\.[cm]?ts|ts|cts|mts|md|markdown)$/i;
const LICENCE = /^(licen[cs]e|copying|notice)/i;
const UNUSED_FOLDER = /^(test|tests|__tests__|example|examples|\.github)$/;
const DEPLOY_FILES = join(ROOT, 'docs', 'deploy');

/** What an `npm run` around this script says about the repository, which must not steer npm in the staging folder. */
const REPOSITORY_NPM_VARIABLES =
	/^npm_(package_|lifecycle_|command$|config_(local_prefix|workspaces?|include_workspace_root|omit|include)$)/i;

/** Runs a command and resolves with its stdout. The user's npm settings (cache, registry) still apply. */
export async function run(command: string, args: string[], cwd: string): Promise<string> {
	const env = Object.fromEntries(
		Object.entries(process.env).filter(([name]) => !REPOSITORY_NPM_VARIABLES.test(name)),
	);
	try {
		const { stdout } = await promisify(execFile)(command, args, {
			cwd,
			env,
			maxBuffer: 64 * 1024 * 1024,
		});
		return stdout;
	} catch (error) {
		const detail =
			error && typeof error === 'object' && 'stderr' in error ? String(error.stderr) : '';
		throw new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${detail}`, { cause: error });
	}
}

if (require.main === module) {
	packSlackApp({ destination: process.argv[2] ?? '.' }).then(
		(path) => console.log(path),
		(error: unknown) => {
			console.error(error instanceof Error ? error.message : String(error));
			process.exit(1);
		},
	);
}
