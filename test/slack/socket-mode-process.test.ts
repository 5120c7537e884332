import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../slack-app/local';
import { kill, spawnApp, type AppProcess } from '../reliability/slack-process';
import { eventually } from '../support/eventually';
import { appProcessEnv, content, Stack } from './harness';

/**
 * The app's entry points as processes in Socket Mode: the production command (bin.ts) against a
 * test Stack's stand-in, and `npm start` whose own stand-in delivers the page's commands over the
 * WebSocket (STANDIN_SOCKET_MODE=true).
 */

let running: AppProcess | undefined;
afterEach(async () => {
	if (running) await kill(running.child);
	running = undefined;
});

it('the production command connects over Socket Mode, runs a job from /gpu and stops on SIGTERM', async () => {
	const stack = await Stack.start({ socketMode: {}, app: false });
	try {
		const socketMode = stack.standin.socketMode;
		if (!socketMode) throw new Error('Socket Mode is off in the stand-in.');
		running = spawnApp(appProcessEnv(stack, await freePort()), 'bin.ts');
		await socketMode.waitForConnections(1, 30_000).catch((error: Error) => {
			throw new Error(`${error.message}\n${running?.output()}`);
		});
		const app = running;
		await eventually('the ready line', () => /Ready in \d+ ms: Socket Mode/.test(app.output()));
		await stack.command(
			`job ${stack.emulator.genericEndpoint} {"prompt": "hi"}`,
			'U0PROC',
			'C0PROC',
		);
		const parent = await stack.waitForParent(1, 'C0PROC', 20_000);
		await stack.waitForParentText(parent.ts, /Succeeded in/, 20_000, 'C0PROC');
		expect(content(stack.replies(parent.ts, 'C0PROC')[0])).toContain('Output');
		const { child } = running;
		const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
		child.kill('SIGTERM');
		expect(await exited).toBe(0);
		expect(socketMode.openConnections).toBe(0);
		// No secret in anything it printed.
		for (const secret of stack.secrets()) expect(running.output()).not.toContain(secret);
	} finally {
		await stack.close();
	}
}, 60_000);

it('npm start with STANDIN_SOCKET_MODE=true answers the page over the WebSocket', async () => {
	const dir = await mkdtemp(join(tmpdir(), 'gpu-slack-socket-'));
	running = spawnApp({
		PATH: process.env.PATH ?? '',
		HOME: process.env.HOME ?? '',
		SLACK_STATE_FILE: join(dir, 'state.json'),
		STANDIN_SOCKET_MODE: 'true',
	});
	const app = running;
	const pageUrl = await eventually(
		'the page address',
		() => /Open (http:\/\/\S+) and type/.exec(app.output())?.[1],
		{ timeoutMs: 45_000, intervalMs: 100 },
	);
	expect(app.output()).toContain('connected over Socket Mode');
	expect(app.output()).toContain('Slack: Socket Mode');
	const sent = await fetch(`${pageUrl}ui/command`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ text: '/gpu help' }),
	});
	expect(sent.status).toBe(200);
	const state = (await (await fetch(`${pageUrl}ui/state`)).json()) as {
		ephemerals: { text: string }[];
	};
	// The command's ack came over the WebSocket (a timeout would show an error); the help follows it.
	expect(JSON.stringify(state.ephemerals)).not.toContain('failed with the error');
	await eventually('the help', async () => {
		const now = (await (await fetch(`${pageUrl}ui/state`)).json()) as {
			ephemerals: { text: string; blocks: unknown }[];
		};
		return JSON.stringify(now.ephemerals).includes('/gpu transcribe');
	});
}, 60_000);
