import { access, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod/v4';
import { cleanEnv } from '../e2e/install';
import { manualInstall, PACKAGE_NAME } from '../e2e/manual-install';
import { runOrThrow } from '../e2e/processes';

/**
 * The README's manual install of the n8n package ("an n8n without access to npm"), exactly as
 * written, into an empty home with an empty npm cache and no registry: it must succeed and add the
 * package alone to `~/.n8n/nodes` (npm 7+ installs peer dependencies, so `n8n-workflow` and its
 * 160-odd dependencies, `isolated-vm` among them, came along and failed offline with ENOTCACHED).
 * `npm run test:e2e` then loads a package installed this way in both n8n versions.
 */

const REPO = resolve(__dirname, '..', '..');

it('the README manual install, offline with an empty npm cache, adds only the package to ~/.n8n/nodes', async () => {
	const work = await mkdtemp(join(tmpdir(), 'gpu-cloud-manual-install-'));
	try {
		// The README's first line in this repository (npm ci is what CI has just run).
		const env = cleanEnv();
		await runOrThrow('npm', ['run', 'build'], { cwd: REPO, env, timeoutMs: 300_000 });
		await runOrThrow('npm', ['pack', '--pack-destination', work, '--loglevel=error'], {
			cwd: REPO,
			env,
			timeoutMs: 120_000,
		});
		const tarball = (await readdir(work)).find((file) => file.endsWith('.tgz'));
		expect(tarball).toBeDefined();

		const home = join(work, 'home');
		const { installed } = await manualInstall({
			readme: await readFile(join(REPO, 'README.md'), 'utf8'),
			tarball: join(work, String(tarball)),
			home,
		});
		expect(installed).toEqual([PACKAGE_NAME]);

		// What n8n loads: the files package.json names for nodes and credentials.
		const installedDir = join(home, '.n8n', 'nodes', 'node_modules', PACKAGE_NAME);
		const manifest = z
			.object({ n8n: z.object({ nodes: z.array(z.string()), credentials: z.array(z.string()) }) })
			.parse(JSON.parse(await readFile(join(installedDir, 'package.json'), 'utf8')));
		for (const file of [...manifest.n8n.nodes, ...manifest.n8n.credentials])
			await access(join(installedDir, file));
	} finally {
		await rm(work, { recursive: true, force: true });
	}
}, 300_000);
