import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { freePort } from '../../slack-app/local';
import { packSlackApp, run } from '../../slack-app/pack';
import { kill } from '../reliability/slack-process';
import { appProcessEnv, CHANNEL, content, Stack, USER } from '../slack/harness';

/**
 * The deployment path of docs/slack-app.md ("Deploying"), end to end: pack the app, install the
 * tarball into an empty folder with production dependencies only (offline: everything it needs
 * is in the tarball), start its `gpu-cloud-slack` command with plain `node` against the emulator
 * and the Slack stand-in, wait for /readyz, and run a `/gpu image` that must land in its thread.
 * About 30-90 s (compile, npm ci, pack, install), so it runs as `npm run test:install` (in .ci/run),
 * not in `npm test`.
 */

/** Packages that belong to development, n8n or the emulator: none may be in a production install. */
const FORBIDDEN =
	/^(tsx|esbuild|typescript|ts-node|jest|gulp|eslint|n8n|n8n-.*|@n8n\/.*|gpu-cloud-emulator|sharp|playwright-core)$/;

/** Every package name under a node_modules tree, nested ones included. */
async function installedPackages(nodeModules: string): Promise<string[]> {
	const names: string[] = [];
	let entries: string[];
	try {
		entries = await readdir(nodeModules);
	} catch {
		return names;
	}
	for (const entry of entries.filter((name) => !name.startsWith('.'))) {
		const dirs = entry.startsWith('@')
			? (await readdir(join(nodeModules, entry))).map((name) => `${entry}/${name}`)
			: [entry];
		for (const name of dirs) {
			names.push(name);
			names.push(...(await installedPackages(join(nodeModules, name, 'node_modules'))));
		}
	}
	return names;
}

async function folderBytes(path: string): Promise<number> {
	let total = 0;
	for (const entry of await readdir(path, { recursive: true, withFileTypes: true })) {
		if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
	}
	return total;
}

async function waitForStatus(
	url: string,
	status: number,
	timeoutMs: number,
	child: ChildProcess,
	output: () => string,
): Promise<unknown> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		if (child.exitCode !== null)
			throw new Error(`The app exited with ${child.exitCode}:\n${output()}`);
		const reply = await fetch(url).catch(() => undefined);
		if (reply?.status === status) return reply.json();
		if (Date.now() > deadline)
			throw new Error(`${url} did not answer ${status} within ${timeoutMs} ms:\n${output()}`);
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
}

it('installs from the packed tarball with production dependencies only, starts with node, and answers /gpu image', async () => {
	const work = await mkdtemp(join(tmpdir(), 'gpu-slack-install-'));
	const stack = await Stack.start({ app: false });
	let child: ChildProcess | undefined;
	try {
		const packStarted = Date.now();
		// A destination that does not exist yet (it failed with ENOENT before).
		const tarball = await packSlackApp({ destination: join(work, 'new', 'folder'), offline: true });
		const packMs = Date.now() - packStarted;

		// The install command of docs/slack-app.md, as written there (without sudo), offline.
		const doc = await readFile(join(__dirname, '..', '..', 'docs', 'slack-app.md'), 'utf8');
		const documented = /^sudo npm (install .*) \/tmp\/gpu-cloud-slack\/(\S+\.tgz)$/m.exec(doc);
		expect(documented?.[2]).toBe(basename(tarball));
		const folder = join(work, 'deploy');
		await mkdir(folder);
		const installStarted = Date.now();
		await run('npm', [...(documented?.[1] ?? '').split(' '), '--offline', tarball], folder);
		const installMs = Date.now() - installStarted;
		expect(
			await run(
				process.execPath,
				[join(folder, 'node_modules', '.bin', 'gpu-cloud-slack'), '--help'],
				folder,
			),
		).toMatch(/^Usage: gpu-cloud-slack \[--settings <path>\]/);

		const packages = await installedPackages(join(folder, 'node_modules'));
		expect(packages).toEqual(
			expect.arrayContaining(['gpu-cloud-slack-app', '@slack/bolt', 'undici', 'zod']),
		);
		expect(packages.filter((name) => FORBIDDEN.test(name))).toEqual([]);
		const app = join(folder, 'node_modules', 'gpu-cloud-slack-app');
		const files = await readdir(app, { recursive: true });
		expect(
			files.filter(
				(file) =>
					/(^|\/)(emulator|standin|test)(\/|\.|$)|\.ts$/.test(file) &&
					!file.startsWith('node_modules'),
			),
		).toEqual([]);
		expect(files).toEqual(
			expect.arrayContaining([
				'.env.example',
				join('dist', 'slack-app', 'bin.js'),
				join('dist', 'shared', 'client.js'),
				// What the docs copy on the server, which has the tarball and not the repository.
				join('deploy', 'gpu-cloud-slack.service'),
				join('deploy', 'nginx.conf'),
			]),
		);
		// Only what runs: no source maps, type declarations, documents or tests of dependencies,
		// one sql.js build (it shipped 17.9 MB, 6,770 files before).
		const dependencyFiles = files.filter((file) => file.startsWith('node_modules'));
		expect(
			dependencyFiles.filter(
				(file) =>
					/\.(map|ts|md)$/.test(file) && !/(^|\/)(licen[cs]e|copying|notice)[^/]*$/i.test(file),
			),
		).toEqual([]);
		expect(dependencyFiles.filter((file) => /(^|\/)(test|tests|__tests__)$/.test(file))).toEqual(
			[],
		);
		expect(
			dependencyFiles.filter((file) => file.startsWith(join('node_modules', 'sql.js', 'dist'))),
		).toEqual(
			[
				join('node_modules', 'sql.js', 'dist'),
				join('node_modules', 'sql.js', 'dist', 'sql-wasm.js'),
				join('node_modules', 'sql.js', 'dist', 'sql-wasm.wasm'),
			].sort(),
		);
		// The sizes docs/slack-app.md states, with a little room.
		expect((await stat(tarball)).size).toBeLessThan(2.5e6);
		expect(await folderBytes(app)).toBeLessThan(11e6);
		expect(files.length).toBeLessThan(2600);

		const port = await freePort();
		const spawned = Date.now();
		// Plain node, the command npm linked, the install folder as working directory (no .env there).
		child = spawn(process.execPath, [join(folder, 'node_modules', '.bin', 'gpu-cloud-slack')], {
			cwd: folder,
			env: appProcessEnv(stack, port),
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let stdout = '';
		let stderr = '';
		child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
		child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
		const output = () => stdout + stderr;
		const base = `http://127.0.0.1:${port}`;
		expect(await waitForStatus(`${base}/readyz`, 200, 30_000, child, output)).toEqual({
			status: 'ready',
			checks: { slack: 'ok', service: 'ok' },
		});
		const readyMs = Date.now() - spawned;
		expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });

		stack.standin.setAppUrl(`${base}/slack/events`);
		expect((await stack.command('image a red fox', USER, CHANNEL)).status).toBe(200);
		const parent = await stack.waitForParent(1, CHANNEL, 15_000);
		await stack.waitForParentText(parent.ts, /Succeeded in/, 20_000, CHANNEL);
		const replies = stack.replies(parent.ts, CHANNEL);
		expect(replies.flatMap((message) => message.fileIds)).toHaveLength(1);
		expect(content(parent)).toContain('a red fox');

		child.kill('SIGTERM');
		const exitCode = await new Promise((resolve) => child?.once('exit', resolve));
		expect(exitCode).toBe(0);

		// Logs: JSON lines, the command's with its request id, no secret anywhere.
		const lines = stdout
			.trim()
			.split('\n')
			.map((line) => JSON.parse(line) as Record<string, unknown>);
		expect(
			lines.every(
				(line) =>
					typeof line.time === 'string' &&
					typeof line.level === 'string' &&
					typeof line.msg === 'string',
			),
		).toBe(true);
		expect(
			lines.find((line) => String(line.msg).startsWith('/gpu command received')),
		).toMatchObject({ request: expect.stringMatching(/^[0-9a-f]{12}$/) });
		expect(lines.map((line) => line.msg)).toEqual(
			expect.arrayContaining([expect.stringMatching(/^Ready in \d+ ms/), 'Stopped.']),
		);
		expect(stderr).toBe('');
		for (const secret of stack.secrets()) expect(output()).not.toContain(secret);

		const installBytes = await folderBytes(folder);
		const tarballBytes = (await stat(tarball)).size;
		console.log(
			`Production install: tarball ${(tarballBytes / 1e6).toFixed(1)} MB (packed in ${(packMs / 1000).toFixed(1)} s), ` +
				`installed ${(installBytes / 1e6).toFixed(1)} MB, ${new Set(packages).size} packages in ${(installMs / 1000).toFixed(1)} s; ` +
				`/readyz 200 ${readyMs} ms after spawn (the app's own "${String(lines.find((line) => String(line.msg).startsWith('Ready in'))?.msg).split(':')[0]}").`,
		);
		expect(JSON.parse(await readFile(join(app, 'package.json'), 'utf8'))).toMatchObject({
			bin: { 'gpu-cloud-slack': 'dist/slack-app/bin.js' },
		});
	} finally {
		if (child) await kill(child);
		await stack.close();
		await rm(work, { recursive: true, force: true });
	}
}, 600_000);
