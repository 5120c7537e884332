import { FastClock } from '../support/fast-clock';
import { eventually } from '../support/eventually';
import { TestWorkspaces } from './workspaces';

/**
 * Memory follows activity: a workspace idle for SLACK_WORKSPACE_IDLE_MINUTES has its services
 * (clients, timers, caches) released, and they are built again from the store on its next request.
 * The app's clock runs 20 times faster, so the idle minute passes in seconds.
 */

jest.setTimeout(60_000);

let rig: TestWorkspaces;

beforeAll(async () => {
	rig = await TestWorkspaces.start({
		teams: ['T0ALPHA'],
		env: { SLACK_WORKSPACE_IDLE_MINUTES: '1' },
		clock: new FastClock(20),
	});
	await rig.installAndLink('T0ALPHA', rig.emulator);
});

afterAll(() => rig?.close());

test("an idle workspace's services are released, and built again on its next request", async () => {
	const alpha = rig.workspace('T0ALPHA');
	await rig.finishedJob(alpha, { text: 'before the idle minute' });
	await rig.app.idle();
	await eventually(
		"the idle workspace's services released",
		async () => (await rig.app.workspaces.containers()).length === 0,
		{ timeoutMs: 30_000, intervalMs: 100 },
	);
	await rig.finishedJob(alpha, { text: 'after it' });
	expect((await rig.app.workspaces.containers()).map((container) => container.team)).toEqual([
		'T0ALPHA',
	]);
});
