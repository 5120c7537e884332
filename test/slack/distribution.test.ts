import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LogLevel } from '@slack/bolt';
import { startEmulator } from '../../emulator';
import { signWebhook } from '../../shared/webhooks';
import { startSlackApp, type RunningSlackApp } from '../../slack-app/app';
import { configSecrets, loadConfig } from '../../slack-app/config';
import { LINK_VIEW } from '../../slack-app/messages/link-workspace';
import { freePort } from '../../slack-app/local';
import { JsonLogger } from '../../slack-app/slack/log';
import { BOT, DEFAULT_CHANNEL, startStandin, type Standin } from '../../slack-standin';
import { OAuthStandin, type OAuthWorkspace } from '../../slack-standin/oauth';
import { launchChromium, testWithChromium } from '../support/chromium';
import { eventually } from '../support/eventually';
import { content } from './harness';

/**
 * The app installed in two workspaces, over HTTP end to end: each installs through /slack/install →
 * Slack's consent page → /slack/oauth_redirect → oauth.v2.access; its bot token is stored encrypted;
 * a command before the link answers privately how to set it up; an admin links the GPU Cloud
 * organization in the /gpu setup modal (a wrong key is refused before anything is stored); then
 * /gpu in each workspace lands in that workspace, with that workspace's token; each workspace's jobs
 * report their end by webhook to a path naming the workspace, checked with its organization's
 * secret; uninstall deletes.
 */

jest.setTimeout(60_000);

const CHANNEL = DEFAULT_CHANNEL.id;
const CLIENT_ID = '1111.2222';
const CLIENT_SECRET = randomBytes(16).toString('hex');
const signingSecret = randomBytes(16).toString('hex');
const STANDIN_TEAM = 'T0STANDIN';
/** Bravo's own GPU Cloud organization, beside the emulator's first one (linked by Alpha). */
const BRAVO_ORG = { name: 'bravo-org', apiKey: `bravo-key-${randomBytes(8).toString('hex')}` };
/** Far longer than any wait below: a result that arrives in time came by webhook, not by polling. */
const POLL_INTERVAL_MS = 60_000;
const WEBHOOK_PATH = '/gpu-cloud/webhook';

let emulator: Awaited<ReturnType<typeof startEmulator>>;
let oauth: OAuthStandin;
let app: RunningSlackApp;
let origin: string;
let dbFile: string;
/** Every line the app's own logger writes, at debug level (Slack's clients log request bodies there). */
const logLines: string[] = [];
const workspaces: (OAuthWorkspace & { admin: string; member: string })[] = [];

beforeAll(async () => {
	emulator = await startEmulator({ port: 0, jobDurationMs: 300, organizations: [BRAVO_ORG] });
	for (const [id, name] of [
		['T0ALPHA', 'Alpha'],
		['T0BRAVO', 'Bravo'],
	] as const) {
		const standinToken = `xoxb-standin-${randomBytes(8).toString('hex')}`;
		const standin: Standin = await startStandin({
			botToken: standinToken,
			signingSecret,
		});
		const admin = `U0ADMIN${name.toUpperCase()}`;
		workspaces.push({
			team: { id, name },
			standin,
			standinToken,
			botToken: `xoxb-${id}-${randomBytes(12).toString('hex')}`,
			botUserId: BOT.userId,
			admins: [admin],
			admin,
			member: `U0MEMBER${name.toUpperCase()}`,
		});
	}
	oauth = await OAuthStandin.start({
		clientId: CLIENT_ID,
		clientSecret: CLIENT_SECRET,
		workspaces,
	});
	const port = await freePort();
	origin = `http://127.0.0.1:${port}`;
	const dir = await mkdtemp(join(tmpdir(), 'gpu-slack-distribution-'));
	dbFile = join(dir, 'installations.sqlite');
	const config = loadConfig({
		SLACK_SIGNING_SECRET: signingSecret,
		SLACK_CLIENT_ID: CLIENT_ID,
		SLACK_CLIENT_SECRET: CLIENT_SECRET,
		SLACK_STATE_SECRET: randomBytes(32).toString('hex'),
		SLACK_INSTALLATION_KEY: randomBytes(32).toString('hex'),
		SLACK_INSTALLATION_DB: dbFile,
		SLACK_API_URL: oauth.apiUrl,
		SLACK_PUBLIC_URL: origin,
		SLACK_STATE_FILE: join(dir, 'state.json'),
		SLACK_POLL_INTERVAL_MS: String(POLL_INTERVAL_MS),
		PORT: String(port),
		HOST: '127.0.0.1',
		GPU_CLOUD_BASE_URL: emulator.baseUrl,
		GPU_CLOUD_IMAGE_URL: emulator.imageUrl,
	});
	const logger = new JsonLogger({
		level: LogLevel.DEBUG,
		secrets: configSecrets(config),
		write: (line) => logLines.push(line),
	});
	app = await startSlackApp({
		config,
		logger,
		logLevel: LogLevel.DEBUG,
		streamIntervalMs: 200,
		slackAuthorizationUrl: oauth.authorizationUrl,
	});
	for (const workspace of workspaces) workspace.standin.setAppUrl(app.eventsUrl ?? '');
});

afterAll(async () => {
	await app?.idle().catch(() => undefined);
	await app?.stop();
	await oauth?.close();
	for (const workspace of workspaces) await workspace.standin.close();
	await emulator?.close();
});

/** The browser's part of the install: follows the redirects by hand, keeping the app's state cookie. */
async function install(team: string, options: { keepCookie?: boolean } = {}): Promise<Response> {
	oauth.signIn(team);
	const start = await fetch(`${origin}/slack/install`, { redirect: 'manual' });
	expect(start.status).toBe(302);
	const cookie = start.headers.get('set-cookie')?.split(';')[0] ?? '';
	expect(cookie).not.toBe('');
	const consent = await fetch(start.headers.get('location') ?? '', {
		redirect: 'manual',
	});
	expect(consent.status).toBe(302);
	const back = consent.headers.get('location') ?? '';
	expect(back.startsWith(`${origin}/slack/oauth_redirect?`)).toBe(true);
	return fetch(back, {
		headers: options.keepCookie === false ? {} : { cookie },
		redirect: 'manual',
	});
}

/** A request as the stand-in sends it, from the given workspace (its team id in place of the stand-in's). */
function fromTeam(body: string, team: string): string {
	const params = new URLSearchParams(body);
	for (const [key, value] of [...params]) params.set(key, value.replaceAll(STANDIN_TEAM, team));
	return params.toString();
}

function command(workspace: (typeof workspaces)[number], text: string, user = workspace.member) {
	const body = workspace.standin.app.slashCommandBody({
		user,
		channel: CHANNEL,
		text,
	});
	return workspace.standin.app.send(
		fromTeam(body, workspace.team.id),
		'application/x-www-form-urlencoded',
	);
}

async function submitLink(
	workspace: (typeof workspaces)[number],
	user: string,
	organization: string,
	apiKey: string,
) {
	const open = [...workspace.standin.workspace.views.values()]
		.reverse()
		.find((view) => view.view.callback_id === LINK_VIEW);
	if (!open) throw new Error('The link modal is not open.');
	const value = (text: string) => ({
		value: { type: 'plain_text_input', value: text },
	});
	const payload = {
		type: 'view_submission',
		team: { id: workspace.team.id, domain: workspace.team.name.toLowerCase() },
		user: { id: user, team_id: workspace.team.id },
		api_app_id: 'A0GPUCLOUD',
		view: {
			...open.view,
			id: open.id,
			hash: open.hash,
			team_id: workspace.team.id,
			state: {
				values: {
					organization: value(organization),
					api_key: value(apiKey),
					project: { value: { type: 'plain_text_input', value: null } },
				},
			},
		},
	};
	const reply = await workspace.standin.app.send(
		new URLSearchParams({ payload: JSON.stringify(payload) }).toString(),
		'application/x-www-form-urlencoded',
	);
	return JSON.parse(reply.body || '{}') as {
		response_action?: string;
		errors?: Record<string, string>;
	};
}

const botParents = (workspace: (typeof workspaces)[number]) =>
	workspace.standin.workspace
		.channelMessages(CHANNEL)
		.filter((message) => message.user === BOT.userId);

test('a redirect without the state cookie of its install is refused, and stores nothing', async () => {
	const refused = await install('T0ALPHA', { keepCookie: false });
	expect(refused.status).toBe(400);
	expect(await app.workspaces.installations?.teams()).toEqual([]);
});

test('two workspaces install, link their organization and each gets its /gpu results in its own workspace', async () => {
	const installations = app.workspaces.installations;
	if (!installations) throw new Error('The app is not distributed.');
	for (const workspace of workspaces) {
		const done = await install(workspace.team.id);
		expect(done.status).toBe(200);
		expect(await done.text()).toContain('/gpu setup');
	}
	expect(
		oauth.exchanges.filter((exchange) => exchange.ok).map((exchange) => exchange.team),
	).toEqual(['T0ALPHA', 'T0BRAVO']);
	expect(await installations.teams()).toEqual(['T0ALPHA', 'T0BRAVO']);
	for (const workspace of workspaces)
		expect((await installations.findInstallation({ teamId: workspace.team.id }))?.bot?.token).toBe(
			workspace.botToken,
		);

	const [alpha, bravo] = workspaces;
	// Installed but not linked: a private answer saying how, and no job.
	await command(alpha, 'image a red fox');
	await alpha.standin.waitFor(
		() =>
			alpha.standin.workspace
				.ephemeralsFor(alpha.member)
				.find((message) => /\/gpu setup/.test(message.text ?? '')),
		10_000,
		'the setup hint',
	);
	expect(botParents(alpha)).toHaveLength(0);

	// The link modal: only an admin, and only a key the service accepts.
	await command(alpha, 'setup', alpha.admin);
	await alpha.standin.waitFor(
		() =>
			[...alpha.standin.workspace.views.values()].find(
				(view) => view.view.callback_id === LINK_VIEW,
			),
		10_000,
		'the link modal',
	);
	expect(
		(await submitLink(alpha, alpha.member, emulator.organization, emulator.apiKey)).errors
			?.organization,
	).toMatch(/admin/);
	expect(
		(await submitLink(alpha, alpha.admin, emulator.organization, 'not-the-key')).errors?.api_key,
	).toMatch(/refused/);
	expect(await installations.findLink('T0ALPHA')).toBeUndefined();
	expect(
		await submitLink(alpha, alpha.admin, emulator.organization, emulator.apiKey),
	).toMatchObject({ response_action: 'update' });
	expect(await installations.findLink('T0ALPHA')).toMatchObject({
		organization: emulator.organization,
		linkedBy: alpha.admin,
	});

	// Bravo links its own organization, with its own key: Alpha's key is not a member of it.
	await command(bravo, 'setup', bravo.admin);
	await bravo.standin.waitFor(
		() =>
			[...bravo.standin.workspace.views.values()].find(
				(view) => view.view.callback_id === LINK_VIEW,
			),
		10_000,
		'the link modal',
	);
	expect(
		(await submitLink(bravo, bravo.admin, BRAVO_ORG.name, emulator.apiKey)).errors?.api_key,
	).toMatch(/refused/);
	expect(await submitLink(bravo, bravo.admin, BRAVO_ORG.name, BRAVO_ORG.apiKey)).toMatchObject({
		response_action: 'update',
	});
	expect(await installations.findLink('T0BRAVO')).toMatchObject({
		organization: BRAVO_ORG.name,
		linkedBy: bravo.admin,
	});

	// Each workspace's command lands in its own workspace only.
	await command(alpha, 'image a red fox');
	await alpha.standin.waitFor(() => botParents(alpha)[0], 15_000, 'the parent in Alpha');
	await command(bravo, 'image a blue whale');
	await bravo.standin.waitFor(() => botParents(bravo)[0], 15_000, 'the parent in Bravo');
	await app.idle();
	const parentsText = (workspace: (typeof workspaces)[number]) =>
		botParents(workspace)
			.map((message) => message.text)
			.join(' ');
	expect(parentsText(alpha)).toMatch(/red fox/);
	expect(parentsText(alpha)).not.toMatch(/blue whale/);
	expect(parentsText(bravo)).toMatch(/blue whale/);
	expect(parentsText(bravo)).not.toMatch(/red fox/);

	// A job from each workspace is created in that workspace's organization, with its key, at the service.
	await command(alpha, 'job echo {"from": "alpha"}');
	await command(bravo, 'job echo {"from": "bravo"}');
	const inputsOf = (organization: string) =>
		emulator.jobsOf(organization).map((job) => JSON.stringify(job.input));
	await alpha.standin.waitFor(
		() => inputsOf(emulator.organization).find((input) => input.includes('alpha')),
		15_000,
		"Alpha's job",
	);
	await bravo.standin.waitFor(
		() => inputsOf(BRAVO_ORG.name).find((input) => input.includes('bravo')),
		15_000,
		"Bravo's job",
	);
	expect(inputsOf(emulator.organization).join()).not.toMatch(/bravo/);
	expect(inputsOf(BRAVO_ORG.name).join()).not.toMatch(/alpha/);
	const bravoJob = emulator
		.jobsOf(BRAVO_ORG.name)
		.find((job) => JSON.stringify(job.input).includes('bravo'));
	if (!bravoJob) throw new Error("Bravo's job is missing.");
	// Alpha's key cannot see Bravo's job: not a member of Bravo's organization, and not in its own.
	const asAlpha = (organization: string) =>
		fetch(
			`${emulator.baseUrl}/organizations/${organization}/inference-endpoints/echo/jobs/${bravoJob.id}`,
			{ headers: { 'service-api-key': emulator.apiKey } },
		);
	expect((await asAlpha(BRAVO_ORG.name)).status).toBe(403);
	expect((await asAlpha(emulator.organization)).status).toBe(404);
	await app.idle();

	// At rest: neither bot token nor the API key is in the database file (nor its write-ahead log,
	// where recent changes are while the app runs); nor in any log line.
	const raw = (
		await Promise.all(
			[dbFile, `${dbFile}-wal`].map((file) => readFile(file).catch(() => Buffer.alloc(0))),
		)
	)
		.map((bytes) => bytes.toString('latin1'))
		.join('');
	// The file read is the one the installations are in, so the absences below mean something.
	for (const workspace of workspaces) expect(raw).toContain(workspace.team.id);
	for (const secret of [
		...workspaces.map((workspace) => workspace.botToken),
		emulator.apiKey,
		BRAVO_ORG.apiKey,
		CLIENT_SECRET,
	]) {
		expect(raw).not.toContain(secret);
		expect(logLines.join('\n')).not.toContain(secret);
	}
});

/** The newest parent in a workspace once it shows its end; its job id. */
async function finishedJob(workspace: (typeof workspaces)[number], before: number) {
	const parent = await workspace.standin.waitFor(
		() => {
			const newest = botParents(workspace)[before];
			return newest && /Succeeded in/.test(content(newest)) ? newest : undefined;
		},
		// Well within the poll interval: only the webhook can have told the app this early.
		15_000,
		`the result in ${workspace.team.name}`,
	);
	const jobId = /Job `([^`]+)`/.exec(content(parent))?.[1];
	if (!jobId) throw new Error(`No job id in ${content(parent)}`);
	return jobId;
}

/** A job-completion webhook as the service signs it with an organization's secret (`id`: a repeated delivery). */
function postWebhook(path: string, jobId: string, secret: string, id?: string) {
	const job = emulator.getJob(jobId);
	if (!job) throw new Error(`The emulator has no job ${jobId}.`);
	const signed = signWebhook(
		secret,
		JSON.stringify({
			type: 'inference_endpoint.job.succeeded',
			timestamp: new Date().toISOString(),
			data: job,
		}),
		{ timestampSeconds: Date.now() / 1000, ...(id ? { id } : {}) },
	);
	return fetch(`${origin}${path}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json', ...signed.headers },
		body: signed.body,
	});
}

const secretOf = (organization: string) => {
	const secret = emulator.organizations.find((org) => org.name === organization)?.webhookSecret;
	if (!secret) throw new Error(`The emulator has no organization ${organization}.`);
	return secret;
};

test("each workspace's jobs end by a webhook to its own path, long before the poll interval", async () => {
	const [alpha, bravo] = workspaces;
	const jobs: Record<string, string> = {};
	for (const workspace of [alpha, bravo]) {
		const before = botParents(workspace).length;
		await command(workspace, `job echo {"webhook": "${workspace.team.name}"}`);
		jobs[workspace.team.id] = await finishedJob(workspace, before);
	}
	await emulator.deliveriesSettled();
	for (const [team, jobId] of Object.entries(jobs)) {
		const deliveries = emulator.deliveries.filter((delivery) => delivery.jobId === jobId);
		expect(deliveries.map(({ url, status }) => ({ url, status }))).toEqual([
			{ url: `${origin}${WEBHOOK_PATH}/${team}`, status: 202 },
		]);
	}
	// Each workspace read its own organization's secret, with its own key (200), once.
	const secretReads = (organization: string) =>
		emulator.requests
			.filter((request) =>
				request.path.endsWith(`/organizations/${organization}/webhook-secret-key`),
			)
			.map((request) => request.status);
	expect([secretReads(emulator.organization), secretReads(BRAVO_ORG.name)]).toEqual([[200], [200]]);
	// Each result once, in its own workspace.
	await app.idle();
	for (const workspace of [alpha, bravo]) {
		const parent = botParents(workspace).at(-1);
		expect(workspace.standin.workspace.replies(CHANNEL, parent?.ts ?? '')).toHaveLength(1);
	}
});

test("a webhook signed by another workspace's organization is refused 401, an unknown or malformed workspace 404", async () => {
	const alphaJob = emulator.jobsOf(emulator.organization).at(-1);
	const bravoJob = emulator.jobsOf(BRAVO_ORG.name).at(-1);
	if (!alphaJob || !bravoJob) throw new Error('Each workspace has run a job by now.');
	const alphaSecret = secretOf(emulator.organization);
	const bravoSecret = secretOf(BRAVO_ORG.name);
	// Signed by Alpha's organization, sent to Bravo's path (and the other way round).
	expect((await postWebhook(`${WEBHOOK_PATH}/T0BRAVO`, alphaJob.id, alphaSecret)).status).toBe(401);
	expect((await postWebhook(`${WEBHOOK_PATH}/T0ALPHA`, bravoJob.id, bravoSecret)).status).toBe(401);
	// Each organization's own signature on its own path is taken (a new delivery id; the result was
	// posted already), and the same delivery again is a duplicate.
	const id = `msg_${randomBytes(8).toString('hex')}`;
	expect((await postWebhook(`${WEBHOOK_PATH}/T0BRAVO`, bravoJob.id, bravoSecret, id)).status).toBe(
		202,
	);
	const repeated = await postWebhook(`${WEBHOOK_PATH}/T0BRAVO`, bravoJob.id, bravoSecret, id);
	expect({ status: repeated.status, text: await repeated.text() }).toEqual({
		status: 200,
		text: 'duplicate',
	});
	// Not installed, or not a team id at all: 404, and the service is not asked for any secret.
	const serviceCalls = emulator.requests.length;
	for (const path of [
		`${WEBHOOK_PATH}/T0NOBODY`,
		`${WEBHOOK_PATH}/t0alpha`,
		`${WEBHOOK_PATH}/T0ALPHA/more`,
		`${WEBHOOK_PATH}/${'T'.repeat(200)}`,
		`${WEBHOOK_PATH}/%2e%2e`,
		`${WEBHOOK_PATH}/`,
	])
		expect({ path, status: (await postWebhook(path, alphaJob.id, alphaSecret)).status }).toEqual({
			path,
			status: 404,
		});
	expect(emulator.requests.length).toBe(serviceCalls);
	await app.idle();
	expect(
		workspaces.map(
			(workspace) =>
				workspace.standin.workspace.replies(CHANNEL, botParents(workspace).at(-1)?.ts ?? '').length,
		),
	).toEqual([1, 1]);
});

/** An Events API delivery from a workspace, as Slack signs and sends it. */
function sendEvent(workspace: (typeof workspaces)[number], event: Record<string, unknown>) {
	const body = {
		token: 'standin-verification-token',
		team_id: workspace.team.id,
		api_app_id: 'A0GPUCLOUD',
		event: { ...event, event_ts: String(Date.now() / 1000) },
		type: 'event_callback',
		event_id: `Ev${randomBytes(6).toString('hex')}`,
		event_time: Math.floor(Date.now() / 1000),
		authorizations: [
			{
				team_id: workspace.team.id,
				user_id: BOT.userId,
				is_bot: true,
				is_enterprise_install: false,
			},
		],
	};
	return workspace.standin.app.send(JSON.stringify(body), 'application/json');
}

test('app_uninstalled deletes the workspace installation and link; the other workspace keeps working', async () => {
	const installations = app.workspaces.installations;
	if (!installations) throw new Error('The app is not distributed.');
	const [alpha, bravo] = workspaces;
	// Slack has revoked the token by then; handling it needs only the store.
	expect((await sendEvent(alpha, { type: 'app_uninstalled' })).status).toBe(200);
	await eventually(
		'one workspace left in the store',
		async () => (await installations.teams()).length === 1,
		{ intervalMs: 50 },
	);
	expect(await installations.teams()).toEqual(['T0BRAVO']);
	expect(await installations.findLink('T0ALPHA')).toBeUndefined();
	// Its jobs' webhooks are no longer taken.
	const alphaJob = emulator.jobsOf(emulator.organization).at(-1);
	expect(
		(
			await postWebhook(
				`${WEBHOOK_PATH}/T0ALPHA`,
				alphaJob?.id ?? '',
				secretOf(emulator.organization),
			)
		).status,
	).toBe(404);
	await command(bravo, 'image a green owl');
	await bravo.standin.waitFor(
		() => botParents(bravo).find((message) => /green owl/.test(message.text ?? '')),
		15_000,
		'the next parent in Bravo',
	);
});

test('tokens_revoked deletes the workspace only when its bot token is revoked', async () => {
	const installations = app.workspaces.installations;
	if (!installations) throw new Error('The app is not distributed.');
	const [, bravo] = workspaces;
	expect(
		(await sendEvent(bravo, { type: 'tokens_revoked', tokens: { oauth: ['U0SOMEONE'] } })).status,
	).toBe(200);
	await app.idle();
	expect(await installations.teams()).toEqual(['T0BRAVO']);
	expect(
		(await sendEvent(bravo, { type: 'tokens_revoked', tokens: { bot: [BOT.userId] } })).status,
	).toBe(200);
	await eventually(
		'no workspace left in the store',
		async () => (await installations.teams()).length === 0,
		{ intervalMs: 50 },
	);
	expect(await installations.findLink('T0BRAVO')).toBeUndefined();
});

testWithChromium(
	'a person installs the app from the install link in a browser (Chromium), state cookie and all',
	async () => {
		const installations = app.workspaces.installations;
		if (!installations) throw new Error('The app is not distributed.');
		const browser = await launchChromium();
		try {
			oauth.signIn('T0ALPHA');
			const page = await browser.newPage();
			await page.goto(`${origin}/slack/install`);
			await page
				.getByRole('heading', { name: 'GPU Cloud is installed' })
				.waitFor({ timeout: 15_000 });
			expect(page.url().startsWith(`${origin}/slack/oauth_redirect?`)).toBe(true);
			expect(await page.textContent('body')).toContain('/gpu setup');
			expect(await installations.teams()).toEqual(['T0ALPHA']);
			// The same redirect again (browser back, a shared link): the state was used, nothing changes.
			await page.reload();
			await page.getByRole('heading', { name: 'Installation failed' }).waitFor({ timeout: 15_000 });
		} finally {
			await browser.close();
		}
	},
	60_000,
);
