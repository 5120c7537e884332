import { randomBytes } from 'node:crypto';
import { createManagementClient } from '../../shared/runtime';
import { isTerminalStatus } from '../../shared/schemas';
import { ACTIONS, encodeValue } from '../../slack-app/messages/actions';
import { eventually } from '../support/eventually';
import { content } from './harness';
import { alterLinkKey, swapInstallations } from './installation-store-cases';
import { CHANNEL, TestWorkspaces } from './workspaces';

/**
 * The app installed in several workspaces, attacked from inside (issue 21): workspaces install
 * through the real OAuth flow against the stand-in and link through the signed `/gpu setup` modal;
 * Alpha and Charlie link the same GPU Cloud organization, Bravo its own.
 */

jest.setTimeout(60_000);

const BRAVO_ORG = { name: 'bravo-org', apiKey: `bravo-key-${randomBytes(8).toString('hex')}` };
const BRAVO_LINK = { organization: BRAVO_ORG.name, apiKey: BRAVO_ORG.apiKey };

describe('the /gpu setup modal', () => {
	let rig: TestWorkspaces;
	beforeAll(async () => {
		rig = await TestWorkspaces.start({
			teams: ['T0ALPHA', 'T0BRAVO'],
			organizations: [BRAVO_ORG],
		});
		await rig.installAndLink('T0ALPHA', rig.emulator);
		await rig.installAndLink('T0BRAVO', BRAVO_LINK);
	});
	afterAll(() => rig.close());

	it.each([
		['a line break', `\r\n`, /line break/],
		['a line feed', `\n`, /line break/],
		['a zero-width space', '\u200b', /invisible character/],
		['a tab', '\t', /invisible character/],
		['a byte-order mark', '\ufeff', /invisible character/],
	])(
		'refuses at once a key with %s in it, naming it, and checks nothing with the service',
		async (_, character, message) => {
			const alpha = rig.workspace('T0ALPHA');
			await rig.openSetup(alpha);
			const checks = rig.emulator.requests.length;
			const key = rig.emulator.apiKey;
			const reply = await rig.submitLink(alpha, {
				organization: rig.emulator.organization,
				apiKey: `${key.slice(0, 8)}${character}${key.slice(8)}`,
			});
			// At once: the refusal is the submission's own answer, with no call to the service behind
			// it (how fast that answer is on a given machine is bench/'s question, not this test's).
			expect(reply.errors?.api_key).toMatch(message);
			expect(rig.emulator.requests.length).toBe(checks);
			expect(await rig.app.workspaces.installations?.findLink('T0ALPHA')).toMatchObject({
				organization: rig.emulator.organization,
			});
		},
	);

	it("refuses a submission whose team and the view's installation differ, and changes neither workspace's link", async () => {
		const alpha = rig.workspace('T0ALPHA');
		await rig.openSetup(alpha);
		// A Slack Connect modal: opened in Alpha's installation, submitted naming Bravo as the team.
		const reply = await rig.submitLink(
			alpha,
			{ organization: rig.emulator.organization, apiKey: rig.emulator.apiKey },
			(payload) => {
				payload.team = { id: 'T0BRAVO', domain: 'bravo' };
				payload.user = { id: alpha.admin, team_id: 'T0BRAVO' };
			},
		);
		expect(reply.response_action).toBe('errors');
		expect(reply.errors?.organization).toMatch(/workspace/);
		const store = rig.app.workspaces.installations;
		expect(await store?.findLink('T0BRAVO')).toMatchObject({ organization: BRAVO_ORG.name });
		expect(await store?.findLink('T0ALPHA')).toMatchObject({
			organization: rig.emulator.organization,
			linkedBy: alpha.admin,
		});
	});

	it("checks the admin in the view's installation and links that one", async () => {
		const bravo = rig.workspace('T0BRAVO');
		await rig.openSetup(bravo);
		// Bravo's admin, in Bravo's modal: both ids agree, the link is Bravo's.
		const reply = await rig.submitLink(bravo, {
			organization: BRAVO_ORG.name,
			apiKey: BRAVO_ORG.apiKey,
		});
		expect(reply.response_action).toBe('update');
		expect(await rig.app.workspaces.installations?.findLink('T0BRAVO')).toMatchObject({
			organization: BRAVO_ORG.name,
			linkedBy: bravo.admin,
		});
	});
});

describe('installing through OAuth', () => {
	let rig: TestWorkspaces;
	beforeAll(async () => {
		rig = await TestWorkspaces.start({ teams: ['T0ALPHA', 'T0BRAVO'] });
	});
	afterAll(() => rig.close());

	it('uses a state once: the same state and its cookie with a new code from another workspace install nothing', async () => {
		const first = await rig.consent('T0ALPHA');
		const installed = await fetch(first.redirect, {
			headers: { cookie: first.cookie },
			redirect: 'manual',
		});
		expect(installed.status).toBe(200);
		// The used state taken to the consent page again, signed in to Bravo: Slack hands out a new
		// code for it, and the browser comes back with the first install's cookie.
		rig.oauth.signIn('T0BRAVO');
		const authorize = new URL(rig.oauth.authorizationUrl);
		for (const [name, value] of Object.entries({
			client_id: rig.clientId,
			scope: 'commands,chat:write',
			state: first.state,
			redirect_uri: `${rig.url}/slack/oauth_redirect`,
		}))
			authorize.searchParams.set(name, value);
		const consent = await fetch(authorize, { redirect: 'manual' });
		const again = await fetch(consent.headers.get('location') ?? '', {
			headers: { cookie: first.cookie },
			redirect: 'manual',
		});
		expect(again.status).toBe(400);
		expect(await rig.app.workspaces.installations?.teams()).toEqual(['T0ALPHA']);
		expect(rig.oauth.exchanges.map((exchange) => exchange.team)).toEqual(['T0ALPHA']);
	});

	it('installs each workspace with a state of its own', async () => {
		expect((await rig.install('T0BRAVO')).status).toBe(200);
		expect(await rig.app.workspaces.installations?.teams()).toEqual(['T0ALPHA', 'T0BRAVO']);
	});
});

describe('jobs of workspaces linked to one organization', () => {
	let rig: TestWorkspaces;
	/** Anyone with the organization's key: a script, or the admin of another workspace linked to it. */
	let keyHolder: ReturnType<typeof createManagementClient>;
	beforeAll(async () => {
		rig = await TestWorkspaces.start({
			teams: ['T0ALPHA', 'T0BRAVO', 'T0CHARLIE'],
			organizations: [BRAVO_ORG],
		});
		await rig.installAndLink('T0ALPHA', rig.emulator);
		await rig.installAndLink('T0BRAVO', BRAVO_LINK);
		await rig.installAndLink('T0CHARLIE', rig.emulator);
		keyHolder = createManagementClient({
			baseUrl: rig.emulator.baseUrl,
			organization: rig.emulator.organization,
			apiKey: rig.emulator.apiKey,
		});
	});
	afterAll(() => rig.close());

	const ended = (jobId: string) =>
		eventually(
			`job ${jobId} to end`,
			async () => isTerminalStatus((await keyHolder.jobs.get('echo', jobId)).status),
			{ intervalMs: 50 },
		);
	/** The app's refusal of a job ("Ignored job <id> ..."): the sign it has looked at the job. */
	const refused = (jobId: string) =>
		eventually(`the app's refusal of job ${jobId}`, () =>
			rig.logLines.some((line) => line.includes(`Ignored job ${jobId}`)),
		);
	/** The job ended, its delivery was answered and the app refused it; then the app is idle. */
	const settled = async (jobId: string) => {
		await ended(jobId);
		await rig.emulator.deliveriesSettled();
		await refused(jobId);
		await rig.app.idle();
	};

	it("a job's seal copied onto a new job is worthless: not posted live, nor after a restart", async () => {
		const alpha = rig.workspace('T0ALPHA');
		const genuineId = await rig.finishedJob(alpha, { text: 'genuine' });
		const parent = rig.parents(alpha).at(-1);
		if (!parent) throw new Error('No parent in Alpha.');
		expect(alpha.standin.workspace.replies(CHANNEL, parent.ts)).toHaveLength(1);
		const genuine = await keyHolder.jobs.get('echo', genuineId);
		// Live: a new job with the genuine job's metadata, word for word, reporting to Alpha's webhook.
		const copied = await keyHolder.jobs.create('echo', {
			input: { text: 'FORGED by a key holder' },
			metadata: genuine.metadata,
			webhook_url: `${rig.url}${rig.config.webhookPath}/T0ALPHA`,
		});
		await settled(copied.id);
		expect(
			rig.emulator.deliveries
				.filter((delivery) => delivery.jobId === copied.id)
				.map((d) => d.status),
		).toEqual([202]);
		const thread = () =>
			alpha.standin.workspace
				.thread(CHANNEL, parent.ts)
				.map((message) => content(message))
				.join('\n');
		expect(alpha.standin.workspace.replies(CHANNEL, parent.ts)).toHaveLength(1);
		expect(thread()).not.toMatch(/FORGED/);
		expect(content(alpha.standin.workspace.find(CHANNEL, parent.ts))).toContain(genuineId);
		// At the next start: another copy, finished while the app was away.
		await rig.stopApp();
		const whileAway = await keyHolder.jobs.create('echo', {
			input: { text: 'FORGED while the app was away' },
			metadata: genuine.metadata,
		});
		await ended(whileAway.id);
		await rig.startApp();
		// The restart resumes only the requests Alpha recorded unfinished: the copy is not even looked at.
		await rig.app.idle();
		expect(alpha.standin.workspace.replies(CHANNEL, parent.ts)).toHaveLength(1);
		expect(thread()).not.toMatch(/FORGED/);
		expect(content(alpha.standin.workspace.find(CHANNEL, parent.ts))).toContain(genuineId);
		expect(rig.logLines.join('\n')).toContain(`its seal was copied from job ${genuineId}`);
	});

	it("another workspace linked to the same organization cannot read, show or cancel a workspace's job", async () => {
		const alpha = rig.workspace('T0ALPHA');
		const charlie = rig.workspace('T0CHARLIE');
		const jobId = await rig.finishedJob(alpha, { text: 'ALPHA-ONLY output' });
		await rig.command(charlie, `status ${jobId}`);
		await rig.command(charlie, `cancel ${jobId}`);
		const replies = await charlie.standin.waitFor(
			() => {
				const texts = rig.ephemeralsFor(charlie).filter((text) => text.includes(jobId));
				return texts.length >= 2 ? texts : undefined;
			},
			10_000,
			"Charlie's answers",
		);
		for (const reply of replies) {
			expect(reply).toMatch(/No job/);
			expect(reply).not.toMatch(/ALPHA-ONLY/);
		}
		// Show input, clicked in Charlie on a button naming Alpha's job.
		const before = rig.ephemeralsFor(charlie).length;
		await rig.link(charlie).click({
			user: charlie.member,
			channel: CHANNEL,
			actionId: ACTIONS.showInput,
			value: encodeValue({ endpoint: 'echo', jobId }),
		});
		const shown = await charlie.standin.waitFor(
			() => rig.ephemeralsFor(charlie)[before],
			10_000,
			'the answer to Show input',
		);
		expect(shown).toMatch(/No job/);
		expect(shown).not.toMatch(/ALPHA-ONLY/);
		// Alpha itself still sees its own job.
		await rig.command(alpha, `status ${jobId}`);
		await alpha.standin.waitFor(
			() => rig.ephemeralsFor(alpha).find((text) => text.includes('ALPHA-ONLY')),
			10_000,
			"Alpha's status of its own job",
		);
	});

	it("is seen by another workspace linked to the same organization once the creating workspace's admin turns sharing on, and never cancelled by it", async () => {
		const alpha = rig.workspace('T0ALPHA');
		const charlie = rig.workspace('T0CHARLIE');
		const jobId = await rig.finishedJob(alpha, { text: 'SHARED output' });
		const charlieSays = async (text: string) => {
			const before = rig.ephemeralsFor(charlie).length;
			await rig.command(charlie, text);
			return charlie.standin.waitFor(
				() => rig.ephemeralsFor(charlie)[before],
				10_000,
				`Charlie's answer to ${text}`,
			);
		};
		// Sharing is off by default.
		expect(await charlieSays(`status ${jobId}`)).toMatch(/No job/);
		await rig.openSetup(alpha);
		const shared = await rig.submitLink(alpha, { ...rig.emulator, shareJobs: true });
		expect(shared.response_action).toBe('update');
		expect(await rig.app.workspaces.installations?.findLink('T0ALPHA')).toMatchObject({
			shareJobs: true,
		});
		expect(await charlieSays(`status ${jobId}`)).toMatch(/SHARED output/);
		const cancel = await charlieSays(`cancel ${jobId}`);
		expect(cancel).toMatch(/another workspace/);
		// Bravo, linked to another organization, sees nothing of it.
		const bravo = rig.workspace('T0BRAVO');
		await rig.command(bravo, `status ${jobId}`);
		expect(
			await bravo.standin.waitFor(
				() => rig.ephemeralsFor(bravo).find((text) => text.includes(jobId)),
				10_000,
				"Bravo's answer",
			),
		).toMatch(/No job/);
		// Turned off again: Charlie no longer sees it.
		await rig.openSetup(alpha);
		await rig.submitLink(alpha, { ...rig.emulator, shareJobs: false });
		expect(await charlieSays(`status ${jobId}`)).toMatch(/No job/);
	});
});

describe('a stored row that does not open', () => {
	let rig: TestWorkspaces;
	beforeAll(async () => {
		rig = await TestWorkspaces.start({
			teams: ['T0ALPHA', 'T0BRAVO', 'T0CHARLIE', 'T0DELTA'],
			organizations: [BRAVO_ORG],
		});
		await rig.installAndLink('T0ALPHA', rig.emulator);
		await rig.installAndLink('T0BRAVO', BRAVO_LINK);
		await rig.installAndLink('T0CHARLIE', rig.emulator);
		await rig.installAndLink('T0DELTA', BRAVO_LINK);
	});
	afterAll(() => rig.close());

	it('is refused for its own workspace, which is told to reinstall; every other workspace keeps serving', async () => {
		await rig.stopApp();
		// Alpha's and Bravo's sealed installations swapped; one character of Delta's sealed key changed.
		await rig.alterDatabase([
			...swapInstallations('T0ALPHA', 'T0BRAVO'),
			...alterLinkKey('T0DELTA'),
		]);
		await rig.startApp();
		// Nothing is opened at start: a row is found when its workspace's request reads it.
		const ready = await fetch(`${rig.url}/readyz`);
		expect(ready.status).toBe(200);
		expect(await ready.json()).toMatchObject({ status: 'ready', unreadable_workspaces: 0 });

		// Charlie, untouched, serves.
		const charlie = rig.workspace('T0CHARLIE');
		await rig.finishedJob(charlie, { text: 'charlie after the restart' });
		// Alpha has no readable token: told privately, through the command's response_url, to reinstall.
		const alpha = rig.workspace('T0ALPHA');
		await rig.command(alpha, 'job echo {"text": "alpha"}');
		await alpha.standin.waitFor(
			() => rig.ephemeralsFor(alpha).find((text) => /install the app again/.test(text)),
			10_000,
			'the reinstall notice in Alpha',
		);
		// Delta's link does not open: its admin is told to link again.
		const delta = rig.workspace('T0DELTA');
		await rig.command(delta, 'job echo {"text": "delta"}');
		await delta.standin.waitFor(
			() => rig.ephemeralsFor(delta).find((text) => /\/gpu setup/.test(text)),
			10_000,
			'the link-again notice in Delta',
		);
		// Bravo's installation (Alpha's, swapped) is found when Bravo's request reads it.
		const bravo = rig.workspace('T0BRAVO');
		await rig.command(bravo, 'job echo {"text": "bravo"}');
		await bravo.standin.waitFor(
			() => rig.ephemeralsFor(bravo).find((text) => /install the app again/.test(text)),
			10_000,
			'the reinstall notice in Bravo',
		);
		const counted = await fetch(`${rig.url}/readyz`);
		expect(await counted.json()).toMatchObject({ status: 'ready', unreadable_workspaces: 3 });
		expect(await (await fetch(`${rig.url}/metrics`)).text()).toMatch(
			/gpu_cloud_slack_workspaces\{state="unreadable"\} 3/,
		);
		expect(rig.logLines.join('\n')).toMatch(/The stored installation of T0ALPHA does not open/);
		for (const line of rig.logLines)
			for (const secret of rig.secrets()) expect(line).not.toContain(secret);

		// Installed again, Alpha serves; linked again, Delta serves.
		expect((await rig.install('T0ALPHA')).status).toBe(200);
		await rig.finishedJob(alpha, { text: 'alpha reinstalled' });
		await rig.openSetup(delta);
		expect((await rig.submitLink(delta, BRAVO_LINK)).response_action).toBe('update');
		await rig.finishedJob(delta, { text: 'delta linked again' });
		const after = await fetch(`${rig.url}/readyz`);
		expect(await after.json()).toMatchObject({ unreadable_workspaces: 1 });
	});
});
