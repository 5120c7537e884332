import { startEmulator } from '../../emulator';
import { freePort, localSlackCredentials } from '../../slack-app/local';
import { startStandin, type Standin } from '../../slack-standin';
import { eventually } from '../support/eventually';
import { kill, spawnApp, type AppProcess } from '../reliability/slack-process';
import { partsEnv } from '../slack/harness';

/**
 * One workspace, Slack unreachable at start (docs/slack-app.md, "Health"): the production command
 * stays up, answers /healthz 200 and /readyz 503 naming `slack`, says why at the default log level,
 * and starts by itself once Slack answers; a token Slack refuses stops the start with exit 1 and
 * the setting named. (It exited 1 on "fetch failed", the cause only at debug level.)
 */

jest.setTimeout(60_000);

let emulator: Awaited<ReturnType<typeof startEmulator>>;
const running: AppProcess[] = [];
const standins: Standin[] = [];

beforeAll(async () => {
	emulator = await startEmulator({ port: 0 });
});

afterAll(async () => {
	for (const app of running) await kill(app.child);
	for (const standin of standins) await standin.close();
	await emulator.close();
});

async function get(url: string): Promise<{ status: number; body: unknown } | undefined> {
	const reply = await fetch(url).catch(() => undefined);
	return reply && { status: reply.status, body: await reply.json().catch(() => undefined) };
}

function exitCode(app: AppProcess): Promise<number | null> {
	return app.child.exitCode !== null
		? Promise.resolve(app.child.exitCode)
		: new Promise((resolve) => app.child.once('exit', resolve));
}

it('waits for Slack with /readyz 503 and the cause in the log, then starts by itself', async () => {
	const slackPort = await freePort();
	const port = await freePort();
	const credentials = localSlackCredentials();
	const slack = { ...credentials, apiUrl: `http://127.0.0.1:${slackPort}/api/` };
	const app = spawnApp({ ...partsEnv({ service: emulator, slack }, port) }, 'bin.ts');
	running.push(app);
	const base = `http://127.0.0.1:${port}`;
	await eventually('/healthz 200', async () => (await get(`${base}/healthz`))?.status === 200, {
		timeoutMs: 30_000,
		intervalMs: 100,
	});
	expect(await get(`${base}/readyz`)).toEqual({
		status: 503,
		body: { status: 'not ready', checks: { slack: 'failing' } },
	});
	expect(app.child.exitCode).toBeNull();
	// The reason at the default level (info): the connection refusal, not only "fetch failed".
	const warning = app
		.output()
		.split('\n')
		.filter((line) => line.startsWith('{'))
		.map((line) => JSON.parse(line) as { level: string; msg: string })
		.find((line) => line.msg.startsWith('Slack cannot be reached'));
	expect(warning).toMatchObject({ level: 'warn', msg: expect.stringContaining('ECONNREFUSED') });

	standins.push(await startStandin({ ...credentials, port: slackPort }));
	await eventually('/readyz 200', async () => (await get(`${base}/readyz`))?.status === 200, {
		timeoutMs: 40_000,
		intervalMs: 200,
	});
	expect(await get(`${base}/readyz`)).toEqual({
		status: 200,
		body: { status: 'ready', checks: { slack: 'ok', service: 'ok' } },
	});
	app.child.kill('SIGTERM');
	expect(await exitCode(app)).toBe(0);
	for (const secret of [credentials.botToken, credentials.signingSecret, emulator.apiKey])
		expect(app.output()).not.toContain(secret);
});

it('stops with exit 1 and the setting named when Slack refuses the token', async () => {
	const credentials = localSlackCredentials();
	const standin = await startStandin(credentials);
	standins.push(standin);
	const slack = { ...credentials, botToken: 'xoxb-not-this-one', apiUrl: standin.apiUrl };
	const app = spawnApp({ ...partsEnv({ service: emulator, slack }, await freePort()) }, 'bin.ts');
	running.push(app);
	expect(await exitCode(app)).toBe(1);
	expect(app.output()).toContain('SLACK_BOT_TOKEN: Slack refused it (invalid_auth)');
	expect(app.output()).not.toContain('xoxb-not-this-one');
});
