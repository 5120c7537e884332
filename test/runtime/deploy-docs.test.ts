import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { defaultBodyLimit } from '@slack/bolt';
import { loadConfig } from '../../slack-app/config';
import { MAX_WEBHOOK_BYTES } from '../../slack-app/requests/webhook-receiver';

/**
 * docs/slack-app.md "Deploying", its systemd unit and its nginx example agree with the app: the
 * commands name the real script, package, version and command; the unit runs that command with
 * the settings file the docs create and stops more patiently than the app drains; the proxy passes
 * every path the app serves with room for the largest body each accepts. (test/runtime/install.e2e.ts, `npm run test:install`,
 * runs the documented install command itself.)
 */

const ROOT = join(__dirname, '..', '..');
const read = (path: string) => readFile(join(ROOT, path), 'utf8');
const base = {
	SLACK_BOT_TOKEN: 'xoxb-1-docs',
	SLACK_SIGNING_SECRET: 'signing-secret-docs',
	GPU_CLOUD_BASE_URL: 'https://api.example.com/api/public',
	GPU_CLOUD_API_KEY: 'api-key-docs',
	GPU_CLOUD_ORGANIZATION: 'acme',
};

async function deployingSection(): Promise<string> {
	const doc = await read('docs/slack-app.md');
	const start = doc.indexOf('\n## Deploying\n');
	expect(start).toBeGreaterThan(0);
	const end = doc.indexOf('\n## ', start + 1);
	return doc.slice(start, end < 0 ? undefined : end);
}

async function appPackage(): Promise<{
	name: string;
	version: string;
	bin: Record<string, string>;
	files: string[];
}> {
	return JSON.parse(await read('slack-app/package.json')) as {
		name: string;
		version: string;
		bin: Record<string, string>;
		files: string[];
	};
}

/** `Key=value` lines of a systemd unit (the last one wins, as in systemd for these keys). */
function unitSettings(unit: string): Map<string, string> {
	const settings = new Map<string, string>();
	for (const line of unit.split('\n')) {
		const match = /^([A-Za-z]+)=(.*)$/.exec(line);
		if (match) settings.set(match[1], match[2]);
	}
	return settings;
}

/** Megabytes in an nginx size (`4m`). */
function nginxBytes(size: string): number {
	const match = /^(\d+)([km]?)$/.exec(size);
	if (!match) throw new Error(`not an nginx size: ${size}`);
	return Number(match[1]) * (match[2] === 'm' ? 1024 * 1024 : match[2] === 'k' ? 1024 : 1);
}

it('documents the commands that exist: the pack script, the tarball, the install and the command', async () => {
	const section = await deployingSection();
	const pkg = await appPackage();
	const [command] = Object.keys(pkg.bin);
	const scripts = (JSON.parse(await read('package.json')) as { scripts: Record<string, string> })
		.scripts;
	expect(scripts['pack:slack-app']).toBe('tsx slack-app/pack.ts');
	expect(section).toContain('npm run pack:slack-app -- /tmp/gpu-cloud-slack');
	expect(section).toContain(
		`sudo npm install --omit=dev --no-audit --no-fund /tmp/gpu-cloud-slack/${pkg.name}-${pkg.version}.tgz`,
	);
	expect(section).toContain(`node_modules/.bin/${command} --help`);
	expect(pkg.files).toContain('.env.example');
	expect(section).toContain(`node_modules/${pkg.name}/.env.example /etc/gpu-cloud-slack/env`);
	expect(section).toContain(`\`${command} [--settings <path>]\``);
	// The server has the tarball, not this repository: what the docs copy comes from the install.
	expect(pkg.files).toContain('deploy');
	for (const file of ['gpu-cloud-slack.service', 'nginx.conf'])
		expect(section).toContain(`sudo cp node_modules/${pkg.name}/deploy/${file} /etc/`);
	expect(section).not.toMatch(/cp docs\//);
});

it('ships a systemd unit that runs the installed command with the documented settings file and outlasts the drain', async () => {
	const section = await deployingSection();
	const unit = await read('docs/deploy/gpu-cloud-slack.service');
	const settings = unitSettings(unit);
	const [command] = Object.keys((await appPackage()).bin);
	expect(settings.get('ExecStart')).toBe(
		`/usr/bin/node /opt/gpu-cloud-slack/node_modules/.bin/${command}`,
	);
	expect(section).toContain('cd /opt/gpu-cloud-slack');
	expect(settings.get('EnvironmentFile')).toBe('/etc/gpu-cloud-slack/env');
	expect(settings.get('KillSignal')).toBe('SIGTERM');
	const drainSeconds = loadConfig(base).shutdownTimeoutMs / 1000;
	expect(Number(settings.get('TimeoutStopSec'))).toBeGreaterThanOrEqual(drainSeconds + 5);
	// The state file lives in the folder systemd creates for the service, which the docs name.
	const stateFolder = `/var/lib/${settings.get('StateDirectory')}`;
	expect(settings.get('Environment')).toBe(`SLACK_STATE_FILE=${stateFolder}/state.json`);
	expect(settings.get('WorkingDirectory')).toBe(stateFolder);
	expect(section).toContain(`\`${stateFolder}\``);
	expect(settings.get('Restart')).toBe('on-failure');
	expect(settings.get('DynamicUser')).toBe('yes');
});

/** The nginx `location` block that serves `path`: an exact match first, else the longest prefix. */
function nginxLocation(nginx: string, path: string): string | undefined {
	const blocks = [...nginx.matchAll(/location (=\s)?\s*(\S+) \{([^}]*)\}/g)].map(
		([, exact, location, body]) => ({ exact: Boolean(exact), location, body }),
	);
	const exact = blocks.find((block) => block.exact && block.location === path);
	if (exact) return exact.body;
	return blocks
		.filter((block) => !block.exact && path.startsWith(block.location) && block.location !== '/')
		.sort((a, b) => b.location.length - a.location.length)[0]?.body;
}

it('shows a reverse proxy that passes every path the app serves, in either mode, with room for the largest body of each', async () => {
	const section = await deployingSection();
	const nginx = await read('docs/deploy/nginx.conf');
	const webhookPath = loadConfig({
		...base,
		SLACK_PUBLIC_URL: 'https://gpu-bot.example.com',
	}).webhookPath;
	const routes: [method: string, path: string, documented: string, largestBody: number][] = [
		['POST', '/slack/events', '/slack/events', defaultBodyLimit],
		['POST', webhookPath, webhookPath, MAX_WEBHOOK_BYTES],
		// Installed in several workspaces: each workspace's webhooks, the install link, the OAuth redirect.
		['POST', `${webhookPath}/T0123ABCD`, `${webhookPath}/<team id>`, MAX_WEBHOOK_BYTES],
		['GET', '/slack/install', '/slack/install', 0],
		['GET', '/slack/oauth_redirect', '/slack/oauth_redirect', 0],
		['GET', '/healthz', '/healthz', 0],
		['GET', '/readyz', '/readyz', 0],
		['GET', '/metrics', '/metrics', 0],
	];
	for (const [method, path, documented, largestBody] of routes) {
		const block = nginxLocation(nginx, path);
		expect([path, block !== undefined]).toEqual([path, true]);
		expect(block).toContain('proxy_pass http://gpu_cloud_slack;');
		expect(block).toMatch(/proxy_read_timeout \d+s;/);
		if (largestBody > 0) {
			expect(
				nginxBytes(/client_max_body_size (\w+);/.exec(block ?? '')?.[1] ?? ''),
			).toBeGreaterThanOrEqual(largestBody);
			expect(section).toContain(`${largestBody / (1024 * 1024)} MB`);
		}
		expect(section).toContain(`\`${method} ${documented}\``);
	}
	expect(nginx).toMatch(/location \/ \{\s*return 404;\s*\}/);
	// Monitoring routes answer private addresses only.
	for (const path of ['/healthz', '/readyz', '/metrics'])
		expect(nginxLocation(nginx, path)).toMatch(/allow 127\.0\.0\.1;[\s\S]*deny all;/);
});

it('keeps the state folder and local settings out of git', async () => {
	const ignored = (await read('.gitignore')).split('\n');
	const stateFile = loadConfig(base).stateFile;
	expect(ignored).toContain(`${stateFile.split('/')[0]}/`);
	expect(ignored).toContain('.env');
});
