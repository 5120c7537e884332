import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { ConfigError, loadConfig, readSettings, SETTING_NAMES } from '../../slack-app/config';

/**
 * `.env.example` is the list of settings an operator reads: it must name every setting the app
 * reads (through config.ts or directly from the environment), name nothing the app ignores, and
 * show each default as the app applies it.
 */

const SLACK_APP = join(__dirname, '..', '..', 'slack-app');
const EXAMPLE = join(SLACK_APP, '.env.example');

const base = {
	SLACK_BOT_TOKEN: 'xoxb-1-settings-test',
	SLACK_SIGNING_SECRET: 'signing-secret-settings-test',
	GPU_CLOUD_BASE_URL: 'https://api.example.com/api/public',
	GPU_CLOUD_API_KEY: 'api-key-settings-test',
	GPU_CLOUD_ORGANIZATION: 'acme',
};

/** Every `NAME=value` line, commented (a default) or not (to fill in). */
async function exampleSettings(): Promise<Map<string, string>> {
	const lines = (await readFile(EXAMPLE, 'utf8')).split('\n');
	const settings = new Map<string, string>();
	for (const line of lines) {
		const match = /^#? ?([A-Z][A-Z0-9_]+)=(.*)$/.exec(line);
		if (match) settings.set(match[1], match[2]);
	}
	return settings;
}

/** Names the app's sources read from an environment object directly (`env.NAME`, `env['NAME']`). */
async function namesReadInSources(): Promise<Set<string>> {
	const names = new Set<string>();
	const files = (await readdir(SLACK_APP, { recursive: true })).filter(
		(file) => file.endsWith('.ts') && !file.includes('dist/'),
	);
	for (const file of files) {
		const source = await readFile(join(SLACK_APP, file), 'utf8');
		for (const match of source.matchAll(/\benv(?:\.|\?\.|\[['"])([A-Z][A-Z0-9_]+)/g))
			names.add(match[1]);
	}
	return names;
}

it('.env.example lists every setting the app reads, and only those', async () => {
	const documented = new Set((await exampleSettings()).keys());
	const read = new Set([...SETTING_NAMES, ...(await namesReadInSources())]);
	expect(read.size).toBeGreaterThan(25);
	expect([...read].filter((name) => !documented.has(name))).toEqual([]);
	expect([...documented].filter((name) => !read.has(name))).toEqual([]);
});

it('.env.example shows each default exactly as the app applies it', async () => {
	const defaults = [...(await exampleSettings())].filter(
		([name, value]) => value !== '' && SETTING_NAMES.includes(name),
	);
	expect(defaults.map(([name]) => name)).toEqual(
		expect.arrayContaining([
			'PORT',
			'LOG_LEVEL',
			'SLACK_SHUTDOWN_TIMEOUT_SECONDS',
			'SLACK_STATE_FILE',
		]),
	);
	const unset = loadConfig(base);
	for (const [name, value] of defaults)
		expect([name, loadConfig({ ...base, [name]: value })]).toEqual([name, unset]);
});

it('.env.example parses as an env file: the required settings are empty and reported by name', async () => {
	const parsed = parseEnv(await readFile(EXAMPLE, 'utf8'));
	expect(Object.keys(parsed).sort()).toEqual([
		'GPU_CLOUD_API_KEY',
		'GPU_CLOUD_BASE_URL',
		'GPU_CLOUD_ORGANIZATION',
		'SLACK_BOT_TOKEN',
		'SLACK_SIGNING_SECRET',
	]);
	expect(() => loadConfig(parsed)).toThrow(ConfigError);
});

describe('settings from an env file', () => {
	it('reads the file under the environment, which wins', async () => {
		const dir = await mkdtemp(join(tmpdir(), 'gpu-slack-env-'));
		const path = join(dir, '.env');
		await writeFile(
			path,
			'# comment\nPORT=4000\nLOG_LEVEL="debug"\nSLACK_ACCESS_CONTACT=the platform team # inline\n',
		);
		const settings = await readSettings({ PORT: '5000' }, { path, required: false });
		expect(settings).toMatchObject({ PORT: '5000', LOG_LEVEL: 'debug' });
		expect(loadConfig({ ...base, ...settings })).toMatchObject({
			logLevel: 'debug',
			slack: { port: 5000 },
		});
	});

	it('is optional by default, and an error naming the file when asked for', async () => {
		const missing = join(tmpdir(), 'gpu-slack-no-such-dir', '.env');
		expect(await readSettings({ PORT: '1' }, { path: missing, required: false })).toEqual({
			PORT: '1',
		});
		await expect(readSettings({}, { path: missing, required: true })).rejects.toThrow(
			`the env file ${missing} cannot be read (ENOENT)`,
		);
	});

	it('rejects a bad log level or shutdown timeout by name and rule', () => {
		expect(() =>
			loadConfig({ ...base, LOG_LEVEL: 'loud', SLACK_SHUTDOWN_TIMEOUT_SECONDS: '-1' }),
		).toThrow(
			/SLACK_SHUTDOWN_TIMEOUT_SECONDS must be a whole number from 0 to 3600\n.*LOG_LEVEL must be one of debug, info, warn, error/,
		);
	});
});

describe('the gpu-cloud-slack command', () => {
	const ROOT = join(__dirname, '..', '..');

	/** The command from source (the packed one is run by install.e2e.ts); cwd is the repository, for tsx. */
	function runCommand(
		args: string[],
	): Promise<{ code: number | null; stdout: string; stderr: string }> {
		const child = spawn(process.execPath, ['--import', 'tsx', join(SLACK_APP, 'bin.ts'), ...args], {
			cwd: ROOT,
			env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let stdout = '';
		let stderr = '';
		child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
		child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
		return new Promise((resolve) =>
			child.once('exit', (code) => resolve({ code, stdout, stderr })),
		);
	}

	it('reads the settings file it is given and names every problem, never a value', async () => {
		const dir = await mkdtemp(join(tmpdir(), 'gpu-slack-bin-'));
		const path = join(dir, 'gpu-cloud-slack.env');
		await writeFile(
			path,
			'SLACK_BOT_TOKEN=xoxp-user-token-never-shown\nGPU_CLOUD_API_KEY=api-key-never-shown\nPORT=eighty\nLOG_LEVEL=chatty\n',
		);
		const { code, stdout, stderr } = await runCommand(['--settings', path]);
		expect(code).toBe(1);
		expect(stdout).toBe('');
		expect(stderr).toContain('SLACK_BOT_TOKEN must be a bot token (it starts with "xoxb-")');
		expect(stderr).toContain('PORT must be a whole number from 0 to 65535');
		expect(stderr).toContain('LOG_LEVEL must be one of debug, info, warn, error');
		expect(stderr).not.toMatch(/never-shown|eighty|chatty/);
	}, 30_000);

	it('refuses a settings file that does not exist, and an unknown option', async () => {
		const missing = await runCommand(['--settings', '/nonexistent/gpu-cloud-slack.env']);
		expect([missing.code, missing.stderr.trim()]).toEqual([
			1,
			expect.stringContaining(
				'the env file /nonexistent/gpu-cloud-slack.env cannot be read (ENOENT)',
			),
		]);
		const unknown = await runCommand(['--verbose']);
		expect([unknown.code, unknown.stderr]).toEqual([
			1,
			expect.stringContaining("Unknown option '--verbose'"),
		]);
	}, 30_000);
});
