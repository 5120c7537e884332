import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kill, spawnApp } from '../reliability/slack-process';
import { eventually } from '../support/eventually';

/**
 * `npm start` with no settings at all: the emulator, the Slack stand-in and the app. The emulator
 * runs in a child process of its own (the app reaches it over HTTP only, as it does the real
 * service) and stops with the app.
 */

async function children(pid: number): Promise<number[]> {
	const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8');
	return text.trim().split(/\s+/).filter(Boolean).map(Number);
}

it('starts the emulator as a child process, serves the local page, and stops it on SIGTERM', async () => {
	const dir = await mkdtemp(join(tmpdir(), 'gpu-slack-start-'));
	const env = {
		PATH: process.env.PATH ?? '',
		HOME: process.env.HOME ?? '',
		SLACK_STATE_FILE: join(dir, 'state.json'),
	};
	const { child, output } = spawnApp(env);
	try {
		const pageUrl = await eventually(
			'npm start to get ready',
			() => {
				if (child.exitCode !== null) throw new Error(`npm start exited:\n${output()}`);
				return /Open (http:\/\/\S+) and type/.exec(output())?.[1];
			},
			{ timeoutMs: 45_000, intervalMs: 100 },
		);
		const managementUrl = /GPU Cloud: (http:\/\/[^,\s]+)/.exec(output())?.[1] ?? '';
		expect((await fetch(pageUrl)).status).toBe(200);
		// The emulator's management API answers (as GPU Cloud does without a key), not just anything.
		const unauthenticated = await fetch(`${managementUrl}/organizations/x`);
		expect(unauthenticated.status).toBe(401);
		expect(await unauthenticated.json()).toMatchObject({
			status: 401,
			detail: 'The Service-Api-Key header is missing.',
		});
		const [emulatorPid] = await children(child.pid ?? 0);
		expect(emulatorPid).toBeGreaterThan(0);

		child.kill('SIGTERM');
		await new Promise((resolve) => child.once('exit', resolve));
		await expect(fetch(managementUrl)).rejects.toThrow();
		await expect(
			readFile(`/proc/${emulatorPid}/status`, 'utf8').then((status) => /State:\s+Z/.test(status)),
		).rejects.toThrow();
	} finally {
		await kill(child);
	}
}, 60_000);
