import { content } from './harness';
import { TestWorkspaces, type TestWorkspace } from './workspaces';

/**
 * A restart costs what was under way, not what was ever done: the app installed in two workspaces,
 * each with jobs that ended, restarted with nothing in flight, then with three jobs running. The
 * restart's requests to the service are counted at the emulator: none for the first, one read per
 * running job (no listing of any endpoint) for the second, and each resumed job is delivered in its
 * own thread.
 */

jest.setTimeout(120_000);

let rig: TestWorkspaces;

beforeAll(async () => {
	rig = await TestWorkspaces.start({
		teams: ['T0ALPHA', 'T0BRAVO'],
		// Completion arrives by webhook; no poll falls inside the counted restart.
		env: { SLACK_POLL_INTERVAL_MS: '600000' },
	});
	for (const team of ['T0ALPHA', 'T0BRAVO']) await rig.installAndLink(team, rig.emulator);
});

afterAll(() => rig?.close());

/** Restarts the app; resolves with the service requests it made until its recovery ended. */
async function restart(): Promise<{ method: string; path: string }[]> {
	await rig.stopApp();
	rig.emulator.resetLogs();
	await rig.startApp();
	await rig.app.workspaces.recovered();
	return rig.emulator.requests.map(({ method, path }) => ({ method, path }));
}

/** Starts a job on the slow endpoint; resolves with its id once its parent names it (created and recorded). */
async function runningJob(workspace: TestWorkspace, text: string): Promise<string> {
	const before = rig.parents(workspace).length;
	await rig.command(workspace, `job batch-echo {"text": "${text}"}`);
	const parent = await workspace.standin.waitFor(
		() => {
			const newest = rig.parents(workspace)[before];
			return newest && /Job `[^`]+`/.test(content(newest)) ? newest : undefined;
		},
		15_000,
		`the running job's parent in ${workspace.team.id}`,
	);
	const id = /Job `([^`]+)`/.exec(content(parent))?.[1];
	if (!id) throw new Error('No job id in the parent.');
	return id;
}

test('a restart with nothing in flight sends the service nothing, however many jobs ended before', async () => {
	await rig.finishedJob(rig.workspace('T0ALPHA'), { text: 'alpha, finished' });
	await rig.finishedJob(rig.workspace('T0BRAVO'), { text: 'bravo, finished' });
	await rig.app.idle();
	expect(await restart()).toEqual([]);
});

test('a restart with jobs in flight reads each of them once, lists no endpoint, and delivers each in its thread', async () => {
	const alpha = rig.workspace('T0ALPHA');
	const bravo = rig.workspace('T0BRAVO');
	const jobs = [
		await runningJob(alpha, 'alpha one'),
		await runningJob(alpha, 'alpha two'),
		await runningJob(bravo, 'bravo one'),
	];
	const requests = await restart();
	expect(
		requests.filter((request) => request.method === 'GET' && /\/jobs$/.test(request.path)),
	).toEqual([]);
	expect(
		requests.map((request) => `${request.method} ${request.path.replace(/.*\/jobs\//, '')}`).sort(),
	).toEqual(jobs.map((id) => `GET ${id}`).sort());
	for (const [workspace, count] of [
		[alpha, 2],
		[bravo, 1],
	] as const)
		await workspace.standin.waitFor(
			() =>
				rig.parents(workspace).filter((parent) => /Succeeded in/.test(content(parent))).length >=
					count + 1 || undefined,
			30_000,
			`the resumed jobs' ends in ${workspace.team.id}`,
		);
});
