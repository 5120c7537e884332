import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { runOrThrow } from './processes';

/**
 * The full n8n app, installed once into a cache outside the repository (about 2.3 GB).
 * 2.8.4 is the newest n8n line that runs on Node 20. Its default `xlsx` dependency points at a
 * host outside the npm registry, so the cache's manifest pins the registry's last version instead.
 */

export const N8N_VERSION = '2.8.4';

const MANIFEST = {
  name: 'gpu-cloud-e2e-n8n',
  private: true,
  description: 'The n8n app for the end-to-end test of n8n-nodes-gpu-cloud (installed by test/e2e/run.ts)',
  dependencies: { n8n: N8N_VERSION },
  overrides: { xlsx: '0.18.5' },
};

const MARKER = '.installed';
const INSTALL_TIMEOUT_MS = 20 * 60_000;

export function cacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'gpu-cloud-e2e', `n8n-${N8N_VERSION}`);
}

/** What `npm run test:e2e` exports about this repository, which would point a child npm back at it. */
const PROJECT_SETTINGS = /^npm_(package_|lifecycle_|config_(local_prefix|prefix|global_prefix|global|workspaces?|include_workspace_root)$)/i;

/**
 * The environment for child processes: the user's npm settings (registry, cache, proxy, CA) stay,
 * settings describing this repository and Node flags of the test runner go.
 */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (PROJECT_SETTINGS.test(name) || name === 'NODE_OPTIONS' || name === 'NODE_PATH' || name === 'INIT_CWD') continue;
    env[name] = value;
  }
  return env;
}

export interface N8nInstall {
  dir: string;
  /** The n8n command line script, run with this Node. */
  bin: string;
  installedNow: boolean;
  durationMs: number;
}

export async function ensureN8n(log: (line: string) => void): Promise<N8nInstall> {
  const dir = cacheDir();
  const bin = join(dir, 'node_modules', 'n8n', 'bin', 'n8n');
  const manifest = `${JSON.stringify(MANIFEST, null, 2)}\n`;
  const marker = join(dir, MARKER);
  const ready = existsSync(bin) && existsSync(marker) && (await readFile(marker, 'utf8')) === manifest;
  if (ready) return { dir, bin, installedNow: false, durationMs: 0 };

  log(`installing n8n@${N8N_VERSION} into ${dir} (about 2.3 GB; several minutes the first time)`);
  const started = Date.now();
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), manifest);
  await runOrThrow('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: dir,
    env: cleanEnv(),
    timeoutMs: INSTALL_TIMEOUT_MS,
    logFile: join(dir, 'install.log'),
  });
  if (!existsSync(bin)) throw new Error(`npm install finished but ${bin} is missing`);
  await writeFile(marker, manifest);
  return { dir, bin, installedNow: true, durationMs: Date.now() - started };
}
