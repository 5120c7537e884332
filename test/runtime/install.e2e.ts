import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
	chmod,
	copyFile,
	mkdir,
	mkdtemp,
	readdir,
	readFile,
	rm,
	stat,
	writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { startEmulator } from '../../emulator';
import { LINK_VIEW } from '../../slack-app/messages/link-workspace';
import { freePort } from '../../slack-app/local';
import { packSlackApp, run } from '../../slack-app/pack';
import { BOT, startStandin, TEAM } from '../../slack-standin';
import { OAuthStandin, type OAuthWorkspace } from '../../slack-standin/oauth';
import { kill } from '../reliability/slack-process';
import { appProcessEnv, CHANNEL, content, Stack, USER } from '../slack/harness';
import { eventually } from '../support/eventually';
import { Nginx } from '../support/services';

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

let work: string;
/** The install folder of the first test, used again by the second and third. */
let installed: string | undefined;
/** Debian's nginx of the second test, with the shipped site in front of the app's port; the third runs behind it too. */
let proxy: { nginx: Nginx; origin: string; appPort: number; accessLog: string } | undefined;

beforeAll(async () => {
	work = await mkdtemp(join(tmpdir(), 'gpu-slack-install-'));
});

afterAll(async () => {
	await proxy?.nginx.stop();
	await rm(work, { recursive: true, force: true });
});

it('installs from the packed tarball with production dependencies only, starts with node, and answers /gpu image', async () => {
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
		installed = folder;
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
					/(^|\/)(emulator|slack-standin|standin|test)(\/|\.|$)|\.ts$/.test(file) &&
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
		// Only what runs: no source maps, type declarations, documents or tests of dependencies.
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
		// SQLite is Node's own (node:sqlite): no SQLite build ships with the app.
		expect(dependencyFiles.filter((file) => /(^|\/)sql\.js(\/|$)/.test(file))).toEqual([]);
		// The sizes docs/slack-app.md states, with a little room.
		expect((await stat(tarball)).size).toBeLessThan(2.5e6);
		expect(await folderBytes(app)).toBeLessThan(11e6);
		expect(files.length).toBeLessThan(3000);

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
	}
}, 600_000);

/** The docs' copy commands of the Deploying section (`sudo cp node_modules/... /etc/...`), as [from, to]. */
async function documentedCopies(): Promise<[from: string, to: string][]> {
	const doc = await readFile(join(__dirname, '..', '..', 'docs', 'slack-app.md'), 'utf8');
	return [...doc.matchAll(/^sudo cp (node_modules\/\S+) (\/etc\/\S+)$/gm)].map(([, from, to]) => [
		from,
		to,
	]);
}

it('serves a multi-workspace install behind the shipped nginx.conf: OAuth install, /gpu setup, a job reported by webhook, /metrics; the shipped systemd unit verifies', async () => {
	if (!installed) throw new Error('The install of the first test is missing.');
	const folder = installed;
	const etc = join(work, 'etc');
	// The docs' copies, into the test's own /etc.
	const copies = await documentedCopies();
	expect(copies.map(([from]) => basename(from))).toEqual(['gpu-cloud-slack.service', 'nginx.conf']);
	for (const [from, to] of copies) {
		// `cp file dir/` keeps the file's name.
		const target = join(etc, to.slice('/etc/'.length), to.endsWith('/') ? basename(from) : '');
		await mkdir(dirname(target), { recursive: true });
		await copyFile(join(folder, from), target);
	}
	const unit = join(etc, 'systemd', 'system', 'gpu-cloud-slack.service');
	// systemd's own check of the unit as shipped (Debian's systemd-analyze): silent when valid.
	expect(await run('systemd-analyze', ['verify', unit], work)).toBe('');

	const appPort = await freePort();
	const proxyPort = await freePort();
	const origin = `http://127.0.0.1:${proxyPort}`;
	// Only the lines the docs tell the operator to change (marked `# yours`); TLS is left to a real
	// certificate: the test's clients speak plain HTTP to nginx on loopback.
	const nginxDir = join(work, 'nginx');
	await mkdir(nginxDir, { recursive: true });
	await run(
		'openssl',
		[
			'req',
			'-x509',
			'-newkey',
			'rsa:2048',
			'-nodes',
			'-days',
			'1',
			'-subj',
			'/CN=127.0.0.1',
			'-keyout',
			join(nginxDir, 'key.pem'),
			'-out',
			join(nginxDir, 'cert.pem'),
		],
		work,
	);
	await chmod(join(nginxDir, 'key.pem'), 0o644);
	const site = join(etc, 'nginx', 'conf.d', 'gpu-cloud-slack.conf');
	const shipped = await readFile(site, 'utf8');
	const changes: [RegExp, string][] = [
		[/^(\s*)server \S+; # yours$/m, `$1server 127.0.0.1:${appPort};`],
		[/^(\s*)listen .*; # yours$/m, `$1listen 127.0.0.1:${proxyPort};`],
		[/^(\s*)server_name .*; # yours$/m, '$1server_name 127.0.0.1;'],
		[/^(\s*)ssl_certificate .*; # yours$/m, `$1ssl_certificate ${join(nginxDir, 'cert.pem')};`],
		[
			/^(\s*)ssl_certificate_key .*; # yours$/m,
			`$1ssl_certificate_key ${join(nginxDir, 'key.pem')};`,
		],
	];
	let rewritten = shipped;
	for (const [line, replacement] of changes) {
		expect([String(line), line.test(rewritten)]).toEqual([String(line), true]);
		rewritten = rewritten.replace(line, replacement);
	}
	expect(rewritten.match(/# yours$/gm)).toBeNull();
	await writeFile(site, rewritten);
	await chmod(etc, 0o755);

	const emulator = await startEmulator({ port: 0, jobDurationMs: 500 });
	const signingSecret = randomBytes(16).toString('hex');
	const standinToken = `xoxb-standin-${randomBytes(8).toString('hex')}`;
	const standin = await startStandin({ botToken: standinToken, signingSecret });
	const admin = 'U0ADMIN';
	const workspace: OAuthWorkspace = {
		team: { id: TEAM.id, name: TEAM.name },
		standin,
		standinToken,
		botToken: `xoxb-${TEAM.id}-${randomBytes(12).toString('hex')}`,
		botUserId: BOT.userId,
		admins: [admin],
	};
	const clientSecret = randomBytes(16).toString('hex');
	const oauth = await OAuthStandin.start({
		clientId: '1111.2222',
		clientSecret,
		workspaces: [workspace],
	});
	let child: ChildProcess | undefined;
	try {
		proxy = {
			nginx: await Nginx.start(
				nginxDir,
				[`access_log ${join(nginxDir, 'access.log')};`, `include ${site};`],
				proxyPort,
			),
			origin,
			appPort,
			accessLog: join(nginxDir, 'access.log'),
		};
		const settings = {
			PATH: process.env.PATH ?? '',
			HOST: '127.0.0.1',
			PORT: String(appPort),
			SLACK_SIGNING_SECRET: signingSecret,
			SLACK_CLIENT_ID: '1111.2222',
			SLACK_CLIENT_SECRET: clientSecret,
			SLACK_STATE_SECRET: randomBytes(32).toString('hex'),
			SLACK_INSTALLATION_KEY: randomBytes(32).toString('hex'),
			SLACK_INSTALLATION_DB: join(work, 'installations.sqlite'),
			SLACK_STATE_FILE: join(work, 'state.json'),
			SLACK_API_URL: oauth.apiUrl,
			SLACK_PUBLIC_URL: origin,
			// Far longer than the waits below: a result in time came by the job's webhook.
			SLACK_POLL_INTERVAL_MS: '120000',
			GPU_CLOUD_BASE_URL: emulator.baseUrl,
			GPU_CLOUD_IMAGE_URL: emulator.imageUrl,
		};
		child = spawn(process.execPath, [join(folder, 'node_modules', '.bin', 'gpu-cloud-slack')], {
			cwd: folder,
			env: settings,
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let output = '';
		child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
		child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
		// Through nginx: readiness (from loopback, which the example allows), then the browser's install.
		expect(await waitForStatus(`${origin}/readyz`, 200, 30_000, child, () => output)).toEqual({
			status: 'ready',
			checks: { installations: 'ok' },
			unreadable_workspaces: 0,
		});
		oauth.signIn(TEAM.id);
		const start = await fetch(`${origin}/slack/install`, { redirect: 'manual' });
		expect(start.status).toBe(302);
		const cookie = start.headers.get('set-cookie')?.split(';')[0] ?? '';
		// Slack's consent page is the stand-in's: same query, its address.
		const consentUrl = new URL(start.headers.get('location') ?? '');
		expect(consentUrl.searchParams.get('redirect_uri')).toBe(`${origin}/slack/oauth_redirect`);
		const consent = await fetch(`${oauth.authorizationUrl}${consentUrl.search}`, {
			redirect: 'manual',
		});
		const back = consent.headers.get('location') ?? '';
		expect(back.startsWith(`${origin}/slack/oauth_redirect?`)).toBe(true);
		const done = await fetch(back, { headers: { cookie }, redirect: 'manual' });
		expect(done.status).toBe(200);
		expect(await done.text()).toContain('/gpu setup');

		// Slack's requests reach the app through nginx too.
		standin.setAppUrl(`${origin}/slack/events`);
		expect(
			(await standin.app.slashCommand({ user: admin, channel: CHANNEL, text: 'setup' })).status,
		).toBe(200);
		const view = await standin.waitFor(
			() =>
				[...standin.workspace.views.values()].find((open) => open.view.callback_id === LINK_VIEW),
			15_000,
			'the link modal',
		);
		const value = (text: string | null) => ({ value: { type: 'plain_text_input', value: text } });
		const submitted = await standin.app.send(
			new URLSearchParams({
				payload: JSON.stringify({
					type: 'view_submission',
					team: { id: TEAM.id, domain: TEAM.domain },
					user: { id: admin, team_id: TEAM.id },
					api_app_id: 'A0GPUCLOUD',
					view: {
						...view.view,
						id: view.id,
						hash: view.hash,
						team_id: TEAM.id,
						state: {
							values: {
								organization: value(emulator.organization),
								api_key: value(emulator.apiKey),
								project: value(null),
							},
						},
					},
				}),
			}).toString(),
			'application/x-www-form-urlencoded',
		);
		expect(submitted.status).toBe(200);
		expect(JSON.parse(submitted.body || '{}')).not.toHaveProperty('errors');

		// A job, its end reported by the service's webhook to /gpu-cloud/webhook/<team id> through nginx.
		expect(
			(
				await standin.app.slashCommand({
					user: USER,
					channel: CHANNEL,
					text: 'job echo {"text":"through nginx"}',
				})
			).status,
		).toBe(200);
		const parent = await standin.waitFor(
			() =>
				standin.workspace.channelMessages(CHANNEL).find((message) => message.user === BOT.userId),
			15_000,
			'the parent message',
		);
		await standin.waitFor(
			() =>
				/Succeeded/.test(
					content(
						standin.workspace.channelMessages(CHANNEL).find((message) => message.ts === parent.ts),
					),
				),
			30_000,
			'the job to succeed',
		);
		const access = await readFile(join(nginxDir, 'access.log'), 'utf8');
		expect(access).toMatch(new RegExp(`"POST /gpu-cloud/webhook/${TEAM.id} HTTP/1.1" 202 `));
		for (const path of ['/slack/install', '/slack/oauth_redirect', '/slack/events'])
			expect([path, access.includes(`${path}`)]).toEqual([path, true]);

		const metrics = await fetch(`${origin}/metrics`);
		expect(metrics.status).toBe(200);
		const text = await metrics.text();
		expect(text).toMatch(
			new RegExp(`^gpu_cloud_slack_requests_total\\{kind="/gpu",team="${TEAM.id}"\\} 2$`, 'm'),
		);
		expect(text).toMatch(/^gpu_cloud_slack_dependency_up\{dependency="installations"\} 1$/m);

		child.kill('SIGTERM');
		expect(await new Promise((resolve) => child?.once('exit', resolve))).toBe(0);
		for (const secret of [
			signingSecret,
			clientSecret,
			workspace.botToken,
			emulator.apiKey,
			settings.SLACK_INSTALLATION_KEY,
		])
			expect(output).not.toContain(secret);
	} finally {
		if (child) await kill(child);
		await oauth.close();
		await standin.close();
		await emulator.close();
	}
}, 180_000);

/** Sets `name` in a copy of .env.example: its line (commented out or empty) becomes `name=value`. */
function setSetting(settings: string, name: string, value: string): string {
	const line = new RegExp(`^(# )?${name}=.*$`, 'm');
	// Every setting the operator fills in is listed in the example, once.
	expect([name, settings.match(new RegExp(line, 'gm'))?.length]).toEqual([name, 1]);
	return settings.replace(line, `${name}=${value}`);
}

/** Runs the installed command in `folder` with `env` until it exits; its exit code and everything it printed. */
async function runToExit(
	folder: string,
	args: string[],
	env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
	const child = spawn(
		process.execPath,
		[join(folder, 'node_modules', '.bin', 'gpu-cloud-slack'), ...args],
		{ cwd: folder, env, stdio: ['ignore', 'pipe', 'pipe'] },
	);
	let output = '';
	child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
	child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
	const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
	return { code, output };
}

it('runs the same install in Socket Mode behind the same nginx: several workspaces refused as the docs say, one workspace from the settings file, a command over the WebSocket, its job reported by webhook, /metrics', async () => {
	if (!installed || !proxy)
		throw new Error('The install and the nginx of the tests before are missing.');
	const folder = installed;
	const { origin, appPort, accessLog } = proxy;
	// Slack's own timings; the app runs in a child process from the tarball's install.
	const stack = await Stack.start({ socketMode: {}, app: false, emulator: { jobDurationMs: 500 } });
	const socketMode = stack.standin.socketMode;
	if (!socketMode || !stack.credentials.appToken)
		throw new Error('Socket Mode is off in the stand-in.');
	const appToken = stack.credentials.appToken;
	let child: ChildProcess | undefined;
	try {
		// "Installing in several workspaces", step 2: "HTTP mode only". The OAuth settings with an
		// app-level token stop the start, naming why, before anything is opened.
		const doc = await readFile(join(__dirname, '..', '..', 'docs', 'slack-app.md'), 'utf8');
		const several = doc.slice(doc.indexOf('\n## Installing in several workspaces\n'));
		expect(several.slice(0, several.indexOf('\n## ', 1))).toContain(
			'(the app sends it as the `redirect_uri`). HTTP mode only.',
		);
		const refused = await runToExit(folder, [], {
			PATH: process.env.PATH ?? '',
			SLACK_APP_TOKEN: appToken,
			SLACK_API_URL: stack.standin.apiUrl,
			SLACK_SIGNING_SECRET: stack.credentials.signingSecret,
			SLACK_CLIENT_ID: '1111.2222',
			SLACK_CLIENT_SECRET: randomBytes(16).toString('hex'),
			SLACK_STATE_SECRET: randomBytes(32).toString('hex'),
			SLACK_INSTALLATION_KEY: randomBytes(32).toString('hex'),
			SLACK_INSTALLATION_DB: join(work, 'socket-installations.sqlite'),
			SLACK_PUBLIC_URL: origin,
			GPU_CLOUD_BASE_URL: stack.emulator.baseUrl,
		});
		expect(refused.code).toBe(1);
		expect(refused.output).toContain(
			'SLACK_APP_TOKEN must be unset when SLACK_CLIENT_ID is set (installing in several workspaces needs HTTP mode for its OAuth redirect)',
		);
		expect(socketMode.opens).toEqual([]);
		expect(refused.output).not.toContain(appToken);

		// One workspace: "Deploying" step 3, the example copied readable by its owner only and filled
		// in as "Install in a workspace" and "Settings" say for Socket Mode: the bot token, the
		// app-level token, no signing secret (HTTP mode only) and so the app secret, the service,
		// and the proxy's address so that jobs report their end by webhook through it.
		const envFile = join(work, 'etc', 'gpu-cloud-slack', 'env');
		await mkdir(dirname(envFile), { recursive: true });
		await copyFile(join(folder, 'node_modules', 'gpu-cloud-slack-app', '.env.example'), envFile);
		await chmod(envFile, 0o600);
		const appSecret = randomBytes(32).toString('hex');
		const values: [string, string][] = [
			['SLACK_BOT_TOKEN', stack.credentials.botToken],
			['SLACK_APP_TOKEN', appToken],
			['SLACK_APP_SECRET', appSecret],
			['SLACK_API_URL', stack.standin.apiUrl],
			['GPU_CLOUD_BASE_URL', stack.emulator.baseUrl],
			['GPU_CLOUD_API_KEY', stack.emulator.apiKey],
			['GPU_CLOUD_ORGANIZATION', stack.emulator.organization],
			['HOST', '127.0.0.1'],
			['PORT', String(appPort)],
			['SLACK_PUBLIC_URL', origin],
			// Far longer than the waits below: a result in time came by the job's webhook.
			['SLACK_POLL_INTERVAL_MS', '120000'],
		];
		let settings = await readFile(envFile, 'utf8');
		// The example says what PORT serves in Socket Mode as the docs' Settings table does: the job
		// webhook this test reaches through nginx, and the health routes.
		expect(settings).toContain(
			"In Socket Mode the same\n# without /slack/events: Slack's requests come over the WebSocket.",
		);
		for (const [name, value] of values) settings = setSetting(settings, name, value);
		expect(settings).toMatch(/^SLACK_SIGNING_SECRET=$/m);
		await writeFile(envFile, settings);

		const accessBefore = (await readFile(accessLog, 'utf8')).length;
		// As the unit runs it: the command, its settings file, the state file in its own folder.
		child = spawn(
			process.execPath,
			[join(folder, 'node_modules', '.bin', 'gpu-cloud-slack'), '--settings', envFile],
			{
				cwd: folder,
				env: { PATH: process.env.PATH ?? '', SLACK_STATE_FILE: join(work, 'socket-state.json') },
				stdio: ['ignore', 'pipe', 'pipe'],
			},
		);
		let output = '';
		child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
		child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
		await socketMode.waitForConnections(1, 30_000).catch((error: Error) => {
			throw new Error(`${error.message}\n${output}`);
		});
		expect(socketMode.opens).toEqual([{}]);
		expect(await waitForStatus(`${origin}/readyz`, 200, 30_000, child, () => output)).toEqual({
			status: 'ready',
			checks: { slack: 'ok', service: 'ok' },
		});
		expect(output).toMatch(/"msg":"Ready in \d+ ms: Socket Mode/);

		// No Request URL: the command comes as an envelope over the app's WebSocket.
		const reply = await stack.command('job echo {"text":"over the socket"}', USER, CHANNEL);
		expect(reply).toEqual({ status: 200, body: '' });
		expect(socketMode.sent.filter((sent) => sent.type === 'slash_commands')).toEqual([
			expect.objectContaining({ acked: true }),
		]);
		const parent = await stack.waitForParent(1, CHANNEL, 15_000);
		expect(content(parent)).toContain(`<@${USER}> ran a job on \`echo\``);
		await stack.waitForParentText(parent.ts, /Succeeded in/, 30_000, CHANNEL);
		expect(content(stack.replies(parent.ts, CHANNEL)[0])).toContain('over the socket');

		// The job's end came by the service's webhook to the one-workspace path, through nginx; no
		// Slack request did.
		const access = (await readFile(accessLog, 'utf8')).slice(accessBefore);
		expect(access).toMatch(/"POST \/gpu-cloud\/webhook HTTP\/1.1" 202 /);
		expect(access).not.toContain('/slack/');

		// The scrape through nginx: the command's envelope counted as a request of its workspace, the
		// job's phases, Slack's calls, both dependencies up.
		const text = await eventually(
			'the job delivered in /metrics',
			async () => {
				const scraped = await fetch(`${origin}/metrics`);
				expect(scraped.status).toBe(200);
				const body = await scraped.text();
				return (
					/^gpu_cloud_slack_job_phase_changes_total\{phase="delivered",.*\} 1$/m.test(body) && body
				);
			},
			{ timeoutMs: 10_000, intervalMs: 200 },
		);
		expect(text).toMatch(
			new RegExp(`^gpu_cloud_slack_requests_total\\{kind="/gpu",team="${TEAM.id}"\\} 1$`, 'm'),
		);
		expect(text).toMatch(/^gpu_cloud_slack_ack_duration_seconds_count\{kind="\/gpu"\} 1$/m);
		expect(text).toMatch(
			new RegExp(
				`^gpu_cloud_slack_job_phase_changes_total\\{phase="delivering",status="succeeded",team="${TEAM.id}"\\} 1$`,
				'm',
			),
		);
		expect(text).toMatch(
			/^gpu_cloud_slack_slack_api_calls_total\{method="chat.postMessage"\} \d+$/m,
		);
		expect(text).toMatch(/^gpu_cloud_slack_dependency_up\{dependency="slack"\} 1$/m);
		expect(text).toMatch(/^gpu_cloud_slack_dependency_up\{dependency="service"\} 1$/m);

		child.kill('SIGTERM');
		expect(await new Promise((resolve) => child?.once('exit', resolve))).toBe(0);
		expect(socketMode.openConnections).toBe(0);
		for (const secret of [...stack.secrets(), appSecret]) expect(output).not.toContain(secret);
	} finally {
		if (child) await kill(child);
		await stack.close();
	}
}, 180_000);
