import { randomBytes } from 'node:crypto';
import { SecretCipher } from '../../slack-app/state/installations/cipher';
import { InstallationStore } from '../../slack-app/state/installations/store';
import { eventually } from '../support/eventually';
import { installation } from './installation-store-cases';
import { TestWorkspaces } from './workspaces';

/**
 * The app installed in many workspaces, most of them idle: a start reads none of them (each
 * workspace's installation and link are read on its first request, as @slack/oauth's authorize
 * reads them), so its cost does not grow with the number installed; the services built for the
 * workspaces that made requests are kept for at most SLACK_WORKSPACES_KEPT of them.
 */

jest.setTimeout(120_000);

/** Installed and linked workspaces beside the three that make requests (enough that building each one at start shows). */
const IDLE_WORKSPACES = 1000;

let rig: TestWorkspaces;

beforeAll(async () => {
	rig = await TestWorkspaces.start({
		teams: ['T0ALPHA', 'T0BRAVO', 'T0CHARLIE'],
		env: { SLACK_WORKSPACES_KEPT: '2' },
	});
	for (const team of ['T0ALPHA', 'T0BRAVO', 'T0CHARLIE'])
		await rig.installAndLink(team, rig.emulator);
	await rig.stopApp();
	const distribution = rig.config.distribution;
	if (!distribution) throw new Error('The rig is not distributed.');
	const store = await InstallationStore.open(
		{ sqliteFile: distribution.sqliteFile },
		new SecretCipher(distribution.installationKey),
	);
	try {
		for (let n = 0; n < IDLE_WORKSPACES; n++) {
			const team = `T1IDLE${String(n).padStart(5, '0')}`;
			await store.saveInstallation(installation(team, `xoxb-${randomBytes(12).toString('hex')}`));
			await store.saveLink({
				teamId: team,
				organization: rig.emulator.organization,
				apiKey: rig.emulator.apiKey,
				linkedBy: 'U0ADMIN',
			});
		}
	} finally {
		await store.close();
	}
	await rig.startApp();
});

afterAll(() => rig?.close());

test('a start with many installed and linked workspaces builds none of them, and is ready', async () => {
	expect(await rig.app.workspaces.containers()).toHaveLength(0);
	const ready = await fetch(`${rig.url}/readyz`);
	expect(ready.status).toBe(200);
	expect(await ready.json()).toMatchObject({ status: 'ready', unreadable_workspaces: 0 });
});

test("each workspace's first request reads it; at most SLACK_WORKSPACES_KEPT workspaces are kept", async () => {
	for (const team of ['T0ALPHA', 'T0BRAVO', 'T0CHARLIE'])
		await rig.finishedJob(rig.workspace(team), { text: `${team} after the restart` });
	await rig.app.idle();
	const kept = async () =>
		(await rig.app.workspaces.containers()).map((container) => container.team).sort();
	// The two used last; the first is released once idle.
	await eventually('the first workspace released', async () => (await kept()).length === 2, {
		timeoutMs: 10_000,
		intervalMs: 50,
	});
	expect(await kept()).toEqual(['T0BRAVO', 'T0CHARLIE']);
	// Released, then asked for again: built again from the store, and it serves.
	await rig.finishedJob(rig.workspace('T0ALPHA'), { text: 'alpha again' });
});
