import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Installation } from '@slack/oauth';
import { startEmulator, type RunningEmulator } from '../../emulator';
import { SecretCipher } from '../../slack-app/state/installations/cipher';
import { InstallationStore } from '../../slack-app/state/installations/store';
import { freePort } from '../../slack-app/local';
import { BOT, startStandin, type Standin } from '../../slack-standin';
import { OAuthStandin } from '../../slack-standin/oauth';
import { TEAM } from '../../slack-standin/workspace';
import { TRANSCRIPTION_ENDPOINT } from '../../shared/schemas';
import { Replica } from '../replicas/cluster';
import { eventually } from '../support/eventually';
import { startFileHost, type FileHost } from '../support/media-server';
import { inflightKinds, inflightKindsOnceWritten } from '../support/state-file';
import { content } from './harness';

/**
 * The production entry installed in two workspaces (an installation database made beforehand, each
 * workspace linked to its own GPU Cloud organization), SIGKILLed while an image is generated in one
 * workspace and an answer streamed in the other, then started again: the image is generated again
 * and posted in its own workspace, the answer is flagged interrupted (with Regenerate) in its own,
 * and neither lands in the other workspace. A job whose create reply was lost (the app killed while
 * waiting for it) is found by one listing of its endpoint in its own workspace, taken up and posted
 * once. A state file of an older version (records without a workspace) is resumed when the app is
 * installed in exactly one workspace, and dropped with a warning otherwise.
 */

jest.setTimeout(90_000);

const signingSecret = randomBytes(16).toString('hex');
const BRAVO_ORG = { name: 'bravo-org', apiKey: `bravo-key-${randomBytes(8).toString('hex')}` };

interface Workspace {
	team: string;
	standin: Standin;
	standinToken: string;
	botToken: string;
}

let emulator: RunningEmulator;
let fileHost: FileHost;
let oauth: OAuthStandin;
const workspaces: Workspace[] = [];
let dir: string;
/** A channel per test: the stand-ins keep every message. */
let channel = '';
let tests = 0;
const running: Replica[] = [];

beforeAll(async () => {
	fileHost = await startFileHost();
	// Jobs outlast a restart: the one whose create reply was lost is still running when it is found.
	emulator = await startEmulator({
		port: 0,
		organizations: [BRAVO_ORG],
		jobDurationMs: 8000,
		mediaHosts: fileHost.mediaHosts,
	});
	for (const team of ['T0ALPHA', 'T0BRAVO']) {
		const standinToken = `xoxb-standin-${randomBytes(8).toString('hex')}`;
		workspaces.push({
			team,
			standin: await startStandin({ botToken: standinToken, signingSecret }),
			standinToken,
			botToken: `xoxb-${team}-${randomBytes(12).toString('hex')}`,
		});
	}
	oauth = await OAuthStandin.start({
		clientId: '1111.2222',
		clientSecret: randomBytes(16).toString('hex'),
		workspaces: workspaces.map((workspace) => ({
			team: { id: workspace.team, name: workspace.team },
			standin: workspace.standin,
			standinToken: workspace.standinToken,
			botToken: workspace.botToken,
			botUserId: BOT.userId,
			admins: [],
		})),
	});
});

beforeEach(async () => {
	dir = await mkdtemp(join(tmpdir(), 'gpu-slack-distributed-restart-'));
	channel = `C0DR${++tests}`;
});

afterEach(async () => {
	for (const replica of running.splice(0)) await replica.kill('SIGKILL');
	// As the emulator starts: a test that moved the faults to the workloads leaves the next one none.
	emulator.setFaults({
		latencyMs: 0,
		sequence: [],
		lateArrivalMs: undefined,
		surfaces: ['management'],
	});
	await rm(dir, { recursive: true, force: true });
});

afterAll(async () => {
	await oauth?.close();
	for (const workspace of workspaces) await workspace.standin.close();
	await emulator?.close();
	await fileHost?.close();
});

const installationKey = randomBytes(32).toString('hex');

/** Installs and links the given workspaces, as their admins would have: Alpha with the emulator's first organization, Bravo with its own. */
async function install(teams: string[]): Promise<void> {
	const store = await InstallationStore.open(
		{ sqliteFile: join(dir, 'installations.sqlite') },
		new SecretCipher(Buffer.from(installationKey, 'hex')),
	);
	try {
		for (const team of teams) {
			const workspace = workspaces.find((candidate) => candidate.team === team);
			if (!workspace) throw new Error(`No workspace ${team}`);
			await store.saveInstallation(installation(team, workspace.botToken));
			await store.saveLink({
				teamId: team,
				...(team === 'T0BRAVO'
					? { organization: BRAVO_ORG.name, apiKey: BRAVO_ORG.apiKey }
					: { organization: emulator.organization, apiKey: emulator.apiKey }),
				linkedBy: 'U0ADMIN',
			});
		}
	} finally {
		await store.close();
	}
}

function installation(team: string, token: string): Installation<'v2', false> {
	return {
		team: { id: team, name: team },
		enterprise: undefined,
		user: { id: 'U0ADMIN', token: undefined, scopes: undefined },
		bot: { token, scopes: ['commands', 'chat:write'], id: `B${team}`, userId: BOT.userId },
		appId: BOT.appId,
		tokenType: 'bot',
		isEnterpriseInstall: false,
		authVersion: 'v2',
	};
}

const stateFile = () => join(dir, 'state.json');

async function startApp(port: number, settings: Record<string, string> = {}): Promise<Replica> {
	const replica = await Replica.start(port, {
		PATH: process.env.PATH ?? '',
		HOME: process.env.HOME ?? '',
		SLACK_SIGNING_SECRET: signingSecret,
		SLACK_CLIENT_ID: '1111.2222',
		SLACK_CLIENT_SECRET: randomBytes(16).toString('hex'),
		SLACK_STATE_SECRET: randomBytes(32).toString('hex'),
		SLACK_INSTALLATION_KEY: installationKey,
		SLACK_INSTALLATION_DB: join(dir, 'installations.sqlite'),
		SLACK_API_URL: oauth.apiUrl,
		SLACK_PUBLIC_URL: `http://127.0.0.1:${port}`,
		SLACK_STATE_FILE: stateFile(),
		SLACK_POLL_INTERVAL_MS: '200',
		HOST: '127.0.0.1',
		GPU_CLOUD_BASE_URL: emulator.baseUrl,
		GPU_CLOUD_IMAGE_URL: emulator.imageUrl,
		GPU_CLOUD_CHAT_URL: emulator.chatUrl,
		LOG_LEVEL: 'info',
		...settings,
	});
	running.push(replica);
	for (const workspace of workspaces)
		workspace.standin.setAppUrl(`http://127.0.0.1:${port}/slack/events`);
	return replica;
}

/** A /gpu command from the workspace, as Slack signs it (its own team id in place of the stand-in's). */
function command(workspace: Workspace, user: string, text: string) {
	const body = new URLSearchParams(workspace.standin.app.slashCommandBody({ user, channel, text }));
	for (const [key, value] of [...body]) body.set(key, value.replaceAll(TEAM.id, workspace.team));
	return workspace.standin.app.send(body.toString(), 'application/x-www-form-urlencoded');
}

const parents = (workspace: Workspace) =>
	workspace.standin.workspace
		.channelMessages(channel)
		.filter((message) => message.user === BOT.userId);
const replies = (workspace: Workspace, ts: string) =>
	workspace.standin.workspace.replies(channel, ts);

async function waitForText(workspace: Workspace, ts: string, pattern: RegExp): Promise<void> {
	await workspace.standin.waitFor(
		() => pattern.test(content(workspace.standin.workspace.find(channel, ts))) || undefined,
		30_000,
		`the parent in ${workspace.team} to show ${pattern}`,
	);
}

test('after SIGKILL, each workspace gets its image again and its answer flagged interrupted, in that workspace only', async () => {
	const [alpha, bravo] = workspaces;
	await install(['T0ALPHA', 'T0BRAVO']);
	const port = await freePort();
	const first = await startApp(port);
	// Slow workloads, so the app is killed while both are under way.
	emulator.setFaults({ latencyMs: 5000, surfaces: ['image', 'chat'] });
	expect((await command(bravo, 'U0PAINT', 'image a lighthouse at dusk')).status).toBe(200);
	expect((await command(alpha, 'U0TALK', 'chat What is a spot instance?')).status).toBe(200);
	await bravo.standin.waitFor(() => parents(bravo)[0], 15_000, 'the image parent in Bravo');
	await alpha.standin.waitFor(() => parents(alpha)[0], 15_000, 'the chat parent in Alpha');
	await eventually(
		'the app to record its work in progress',
		async () => (await inflightKindsOnceWritten(stateFile())).join() === 'chat,image',
		{ timeoutMs: 15_000, intervalMs: 50 },
	);
	await first.kill('SIGKILL');
	emulator.setFaults({ latencyMs: 0 });
	expect(replies(bravo, parents(bravo)[0].ts)).toEqual([]);

	await startApp(port);
	const [image] = parents(bravo);
	const [chat] = parents(alpha);
	await waitForText(bravo, image.ts, /Succeeded in/);
	await bravo.standin.waitFor(
		() => replies(bravo, image.ts).some((message) => message.fileIds.length > 0) || undefined,
		10_000,
		'the image in Bravo',
	);
	await waitForText(alpha, chat.ts, /Interrupted/);
	const answer = replies(alpha, chat.ts).map(content).join('\n');
	expect(answer).toContain('The app restarted while answering');
	expect(answer).toContain('gpu.regenerate_chat');
	// Each in its own workspace: one parent each, the image in Bravo's organization.
	expect(parents(alpha)).toHaveLength(1);
	expect(parents(bravo)).toHaveLength(1);
	expect(replies(bravo, image.ts).flatMap((message) => message.fileIds)).toHaveLength(1);
	await noWorkUnderWay();
});

test("a create whose reply was lost is found by one listing of its endpoint in its workspace's organization, taken up and posted once", async () => {
	const [alpha, bravo] = workspaces;
	await install(['T0ALPHA', 'T0BRAVO']);
	const port = await freePort();
	// Completion by webhook alone: no poll lists the endpoint after the restart.
	const byWebhook = { SLACK_POLL_INTERVAL_MS: '600000' };
	const first = await startApp(port, byWebhook);
	// The service makes the job; its reply never comes back, and the app is killed waiting for it.
	emulator.setFaults({ sequence: ['hang'], lateArrivalMs: 0 });
	const made = emulator.jobsOf(BRAVO_ORG.name).length;
	expect(
		(await command(bravo, 'U0SCRIBE', 'transcribe https://files.example/lost-reply.mp3')).status,
	).toBe(200);
	await eventually('the job to be made', () => emulator.jobsOf(BRAVO_ORG.name).length > made, {
		timeoutMs: 15_000,
	});
	await first.kill('SIGKILL');
	const [parent] = parents(bravo);
	expect(content(parent)).not.toMatch(/Job `/);

	emulator.resetLogs();
	const second = await startApp(port, byWebhook);
	await logged(second, /Resumed 1 running job/);
	await waitForText(bravo, parent.ts, /Succeeded in/);
	await bravo.standin.waitFor(
		() => replies(bravo, parent.ts).length > 0 || undefined,
		10_000,
		'the result in Bravo',
	);
	const listings = emulator.requests
		.filter((request) => request.method === 'GET' && /\/jobs$/.test(request.path))
		.map((request) => request.path);
	expect(listings).toEqual([
		expect.stringMatching(
			new RegExp(`/${BRAVO_ORG.name}/inference-endpoints/${TRANSCRIPTION_ENDPOINT}/jobs$`),
		),
	]);
	// Nothing asked of Alpha's organization, nothing posted in Alpha; one parent and one result in Bravo.
	expect(
		emulator.requests.filter((request) => request.path.includes(`/${emulator.organization}/`)),
	).toEqual([]);
	expect(parents(alpha)).toEqual([]);
	expect(parents(bravo)).toHaveLength(1);
	expect(replies(bravo, parent.ts)).toHaveLength(1);
	expect(emulator.jobsOf(BRAVO_ORG.name)).toHaveLength(made + 1);
});

/** The state file is the app's record of work under way: empty once all of it is done or dropped. */
const noWorkUnderWay = () =>
	eventually(
		'no work left under way',
		async () => (await inflightKinds(stateFile())).length === 0,
		{ timeoutMs: 15_000, intervalMs: 50 },
	);

/** Resolves once the app's output has a line matching `pattern` (read from its pipe as it comes). */
const logged = (app: Replica, pattern: RegExp) =>
	eventually(`the app to log ${pattern}`, () => pattern.test(app.output), { timeoutMs: 10_000 });

/** An image request (or a chat answer) in flight as an older version recorded it: no workspace. */
async function olderStateFile(threadTs: string, kind: 'image' | 'chat' = 'image'): Promise<void> {
	await writeFile(
		stateFile(),
		JSON.stringify({
			version: 1,
			endpoints: [],
			posted: [],
			inflight: [
				{
					ref: '5b7c7d2e-0000-4000-8000-00000000a11e',
					kind,
					channel,
					threadTs,
					messageTs: threadTs,
					user: 'U0OLD',
					startedAt: Date.now() - 1000,
					...(kind === 'image'
						? { image: { prompt: 'an old lighthouse', count: 1 } }
						: { prompt: 'an old question' }),
				},
			],
		}),
	);
}

/** A parent the app posted before its restart, in the workspace's stand-in. */
async function parentIn(workspace: Workspace): Promise<string> {
	const response = await fetch(`${workspace.standin.apiUrl}chat.postMessage`, {
		method: 'POST',
		headers: {
			authorization: `Bearer ${workspace.standinToken}`,
			'content-type': 'application/json; charset=utf-8',
		},
		body: JSON.stringify({ channel, text: 'an old lighthouse' }),
	});
	const posted = (await response.json()) as { ok: boolean; ts?: string };
	if (!posted.ok || !posted.ts) throw new Error('The stand-in did not take the parent.');
	return posted.ts;
}

test('records of an older version (no workspace) are resumed when the app is installed in one workspace', async () => {
	const [alpha] = workspaces;
	await install(['T0ALPHA']);
	const threadTs = await parentIn(alpha);
	await olderStateFile(threadTs);
	await startApp(await freePort());
	await waitForText(alpha, threadTs, /Succeeded in/);
	expect(replies(alpha, threadTs).flatMap((message) => message.fileIds)).toHaveLength(1);
});

test('records of an older version (no workspace) are dropped with a warning when installed in several', async () => {
	const [alpha, bravo] = workspaces;
	await install(['T0ALPHA', 'T0BRAVO']);
	const threadTs = await parentIn(alpha);
	await olderStateFile(threadTs);
	const app = await startApp(await freePort());
	await noWorkUnderWay();
	// The warning is written before the record goes; its line may still be on its way from the process.
	await logged(app, /1 image or answer cut short .* dropped/);
	expect(replies(alpha, threadTs)).toEqual([]);
	expect(parents(bravo)).toEqual([]);
});

test('an image cut short whose workload was turned off since fails in its thread and is forgotten', async () => {
	const [alpha] = workspaces;
	await install(['T0ALPHA']);
	const threadTs = await parentIn(alpha);
	await olderStateFile(threadTs);
	await startApp(await freePort(), { GPU_CLOUD_IMAGE_URL: '' });
	await waitForText(alpha, threadTs, /Failed/);
	await alpha.standin.waitFor(
		() =>
			replies(alpha, threadTs).find((message) => /Image generation is off/.test(content(message))),
		10_000,
		'the failure in the thread',
	);
	await noWorkUnderWay();
});

test('an answer cut short in a channel Slack no longer lets the app see is forgotten, not tried for ever', async () => {
	const [alpha] = workspaces;
	await install(['T0ALPHA']);
	const threadTs = await parentIn(alpha);
	await olderStateFile(threadTs, 'chat');
	// The app was removed from the channel while it was away.
	alpha.standin.api.refuse('conversations.replies', 'channel_not_found', 100);
	alpha.standin.api.refuse('chat.postMessage', 'channel_not_found', 100);
	const app = await startApp(await freePort());
	try {
		await noWorkUnderWay();
		await logged(app, /Could not flag an interrupted answer/);
	} finally {
		alpha.standin.api.refuse('conversations.replies', 'channel_not_found', 0);
		alpha.standin.api.refuse('chat.postMessage', 'channel_not_found', 0);
	}
});
