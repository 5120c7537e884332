import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LogLevel } from '@slack/bolt';
import { startEmulator } from '../../emulator';
import type { Clock } from '../../shared/clock';
import { startSlackApp, type RunningSlackApp } from '../../slack-app/app';
import { configSecrets, loadConfig, type AppConfig } from '../../slack-app/config';
import { LINK_VIEW } from '../../slack-app/messages/link-workspace';
import { freePort } from '../../slack-app/local';
import { JsonLogger } from '../../slack-app/slack/log';
import { BOT, DEFAULT_CHANNEL, startStandin, type StoredMessage } from '../../slack-standin';
import type { AppLink } from '../../slack-standin/app-link';
import { OAuthStandin, type OAuthWorkspace } from '../../slack-standin/oauth';
import { TEAM } from '../../slack-standin/workspace';
import { content, type Emulator } from './harness';
import { alterSqlite } from './installation-store-cases';

/**
 * The app installed in several workspaces, end to end over loopback: the emulator with several
 * GPU Cloud organizations, one Slack stand-in per workspace behind the OAuth stand-in (consent page,
 * code exchange, each bot token working only in its own workspace), and the app in distributed mode
 * on an installation database. Workspaces install through the real OAuth flow and are linked through
 * the signed `/gpu setup` modal, as an admin would.
 */

export interface TestWorkspace extends OAuthWorkspace {
	admin: string;
	member: string;
}

export interface Organization {
	name: string;
	apiKey: string;
}

export interface WorkspacesOptions {
	teams: string[];
	/** Organizations beside the emulator's own (the first). */
	organizations?: Organization[];
	env?: Record<string, string>;
	/** PostgreSQL instead of the SQLite file. */
	databaseUrl?: string;
	jobDurationMs?: number;
	/** The app's clock (a fast one lets minutes of idleness pass in seconds). */
	clock?: Clock;
}

export const CHANNEL = DEFAULT_CHANNEL.id;

export class TestWorkspaces {
	app!: RunningSlackApp;
	config!: AppConfig;
	readonly logLines: string[] = [];
	readonly clientId = '1111.2222';
	readonly clientSecret = randomBytes(16).toString('hex');
	readonly signingSecret = randomBytes(16).toString('hex');
	private origin = '';
	private port = 0;

	private constructor(
		readonly emulator: Emulator,
		readonly oauth: OAuthStandin,
		readonly workspaces: TestWorkspace[],
		readonly dir: string,
		private readonly options: WorkspacesOptions,
	) {}

	static async start(options: WorkspacesOptions): Promise<TestWorkspaces> {
		const emulator = await startEmulator({
			port: 0,
			jobDurationMs: options.jobDurationMs ?? 300,
			organizations: options.organizations ?? [],
		});
		const signingSecret = randomBytes(16).toString('hex');
		const workspaces: TestWorkspace[] = [];
		for (const id of options.teams) {
			const standinToken = `xoxb-standin-${randomBytes(8).toString('hex')}`;
			const name = id.replace(/^T0/, '');
			workspaces.push({
				team: { id, name },
				standin: await startStandin({ botToken: standinToken, signingSecret }),
				standinToken,
				botToken: `xoxb-${id}-${randomBytes(12).toString('hex')}`,
				botUserId: BOT.userId,
				admins: [`U0ADMIN${name}`],
				admin: `U0ADMIN${name}`,
				member: `U0MEMBER${name}`,
			});
		}
		const clientSecret = randomBytes(16).toString('hex');
		const oauth = await OAuthStandin.start({ clientId: '1111.2222', clientSecret, workspaces });
		const dir = await mkdtemp(join(tmpdir(), 'gpu-slack-workspaces-'));
		const rig = new TestWorkspaces(emulator, oauth, workspaces, dir, options);
		Object.assign(rig, { signingSecret, clientSecret });
		await rig.startApp();
		return rig;
	}

	/** Starts the app (again, after `stopApp`: a restart on the same database, state file and port). */
	async startApp(): Promise<void> {
		if (!this.port) {
			this.port = await freePort();
			this.origin = `http://127.0.0.1:${this.port}`;
			this.config = loadConfig({
				SLACK_SIGNING_SECRET: this.signingSecret,
				SLACK_CLIENT_ID: this.clientId,
				SLACK_CLIENT_SECRET: this.clientSecret,
				SLACK_STATE_SECRET: randomBytes(32).toString('hex'),
				SLACK_INSTALLATION_KEY: randomBytes(32).toString('hex'),
				SLACK_INSTALLATION_DB: join(this.dir, 'installations.sqlite'),
				...(this.options.databaseUrl ? { DATABASE_URL: this.options.databaseUrl } : {}),
				SLACK_API_URL: this.oauth.apiUrl,
				SLACK_PUBLIC_URL: this.origin,
				SLACK_STATE_FILE: join(this.dir, 'state.json'),
				SLACK_POLL_INTERVAL_MS: '200',
				PORT: String(this.port),
				HOST: '127.0.0.1',
				GPU_CLOUD_BASE_URL: this.emulator.baseUrl,
				GPU_CLOUD_IMAGE_URL: this.emulator.imageUrl,
				...this.options.env,
			});
		}
		const logger = new JsonLogger({
			level: LogLevel.DEBUG,
			secrets: configSecrets(this.config),
			write: (line) => this.logLines.push(line),
		});
		this.app = await startSlackApp({
			config: this.config,
			logger,
			logLevel: LogLevel.DEBUG,
			streamIntervalMs: 200,
			slackAuthorizationUrl: this.oauth.authorizationUrl,
			...(this.options.clock ? { clock: this.options.clock } : {}),
		});
		for (const workspace of this.workspaces) workspace.standin.setAppUrl(this.app.eventsUrl ?? '');
	}

	async stopApp(): Promise<void> {
		await this.app.idle().catch(() => undefined);
		await this.app.stop();
	}

	/** SQL on the installation database while the app is stopped, as someone with access to it. */
	async alterDatabase(statements: string[]): Promise<void> {
		const file = this.config.distribution?.sqliteFile;
		if (!file || this.options.databaseUrl) throw new Error('Only the SQLite file is altered here.');
		await alterSqlite(file, statements);
	}

	get url(): string {
		return this.origin;
	}

	workspace(team: string): TestWorkspace {
		const found = this.workspaces.find((each) => each.team.id === team);
		if (!found) throw new Error(`No workspace ${team}.`);
		return found;
	}

	/** The browser's first two steps: the install link (state and its cookie), then the consent page. */
	async consent(team: string): Promise<{ cookie: string; redirect: string; state: string }> {
		this.oauth.signIn(team);
		const start = await fetch(`${this.origin}/slack/install`, { redirect: 'manual' });
		if (start.status !== 302) throw new Error(`The install link answered ${start.status}.`);
		const cookie = start.headers.get('set-cookie')?.split(';')[0] ?? '';
		const authorize = start.headers.get('location') ?? '';
		const consent = await fetch(authorize, { redirect: 'manual' });
		const redirect = consent.headers.get('location') ?? '';
		const state = new URL(authorize).searchParams.get('state') ?? '';
		return { cookie, redirect, state };
	}

	/** The whole install as a browser does it: the redirect back to the app carries the state cookie. */
	async install(team: string): Promise<Response> {
		const { cookie, redirect } = await this.consent(team);
		return fetch(redirect, { headers: { cookie }, redirect: 'manual' });
	}

	/** A signed request as Slack sends it from `workspace` (the stand-in's team id replaced by its own). */
	send(workspace: TestWorkspace, body: string, contentType: string) {
		return workspace.standin.app.send(this.own(workspace, body, contentType), contentType);
	}

	private own(workspace: TestWorkspace, body: string, contentType: string): string {
		const own = (text: string) => text.replaceAll(TEAM.id, workspace.team.id);
		if (contentType.includes('json')) return own(body);
		const params = new URLSearchParams(body);
		for (const [key, value] of [...params]) params.set(key, own(value));
		return params.toString();
	}

	/** The workspace's stand-in sending as Slack does from that workspace (its team id in every body). */
	link(workspace: TestWorkspace): AppLink {
		const own: AppLink = Object.create(workspace.standin.app);
		own.send = (body, contentType, overrides) =>
			workspace.standin.app.send(this.own(workspace, body, contentType), contentType, overrides);
		return own;
	}

	command(workspace: TestWorkspace, text: string, user = workspace.member, channel = CHANNEL) {
		const body = workspace.standin.app.slashCommandBody({ user, channel, text });
		return this.send(workspace, body, 'application/x-www-form-urlencoded');
	}

	/** Opens `/gpu setup` as the workspace's admin; resolves with the modal Slack shows. */
	async openSetup(workspace: TestWorkspace) {
		const before = workspace.standin.workspace.views.size;
		await this.command(workspace, 'setup', workspace.admin);
		return workspace.standin.waitFor(
			() =>
				[...workspace.standin.workspace.views.values()]
					.slice(before)
					.find((view) => view.view.callback_id === LINK_VIEW),
			10_000,
			'the link modal',
		);
	}

	/**
	 * Submits the open link modal; `change` alters the payload as Slack sends it (a Slack Connect
	 * modal's two team ids, for one).
	 */
	async submitLink(
		workspace: TestWorkspace,
		values: { organization: string; apiKey: string; user?: string; shareJobs?: boolean },
		change: (
			payload: Record<string, unknown> & { view: Record<string, unknown> },
		) => void = () => {},
	) {
		const open = [...workspace.standin.workspace.views.values()]
			.reverse()
			.find((view) => view.view.callback_id === LINK_VIEW);
		if (!open) throw new Error('The link modal is not open.');
		const user = values.user ?? workspace.admin;
		const value = (text: string | null) => ({ value: { type: 'plain_text_input', value: text } });
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
				app_installed_team_id: workspace.team.id,
				state: {
					values: {
						organization: value(values.organization),
						api_key: value(values.apiKey),
						project: value(null),
						share_jobs: {
							value: {
								type: 'checkboxes',
								selected_options: values.shareJobs
									? [{ value: 'share', text: { type: 'plain_text', text: 'Share' } }]
									: [],
							},
						},
					},
				},
			},
		};
		change(payload);
		const started = Date.now();
		const reply = await workspace.standin.app.send(
			new URLSearchParams({ payload: JSON.stringify(payload) }).toString(),
			'application/x-www-form-urlencoded',
		);
		return {
			status: reply.status,
			ms: Date.now() - started,
			...(JSON.parse(reply.body || '{}') as {
				response_action?: string;
				errors?: Record<string, string>;
			}),
		};
	}

	/** Install and link, as a new workspace's admin does. */
	async installAndLink(
		team: string,
		organization: { organization: string; apiKey: string },
	): Promise<void> {
		const installed = await this.install(team);
		if (installed.status !== 200)
			throw new Error(`Installing ${team} answered ${installed.status}.`);
		const workspace = this.workspace(team);
		await this.openSetup(workspace);
		const linked = await this.submitLink(workspace, organization);
		if (linked.response_action !== 'update')
			throw new Error(`Linking ${team} failed: ${JSON.stringify(linked)}`);
	}

	/** The app's top-level messages in a channel of the workspace. */
	parents(workspace: TestWorkspace, channel = CHANNEL): StoredMessage[] {
		return workspace.standin.workspace
			.channelMessages(channel)
			.filter((message) => message.user === BOT.userId);
	}

	/** Runs `/gpu job` in the workspace and waits until its parent shows the job's end; the job id. */
	async finishedJob(workspace: TestWorkspace, input: object, channel = CHANNEL): Promise<string> {
		const before = this.parents(workspace, channel).length;
		await this.command(workspace, `job echo ${JSON.stringify(input)}`, workspace.member, channel);
		const parent = await workspace.standin.waitFor(
			() => {
				const newest = this.parents(workspace, channel)[before];
				return newest && /Succeeded in/.test(content(newest)) ? newest : undefined;
			},
			15_000,
			`the job's end in ${workspace.team.id}`,
		);
		const jobId = /Job `([^`]+)`/.exec(content(parent))?.[1];
		if (!jobId) throw new Error(`No job id in ${content(parent)}`);
		return jobId;
	}

	ephemeralsFor(workspace: TestWorkspace, user = workspace.member): string[] {
		return workspace.standin.workspace
			.ephemeralsFor(user)
			.map((message) => `${message.text} ${JSON.stringify(message.blocks ?? [])}`);
	}

	/** Every secret the rig uses: none may reach Slack or a log line. */
	secrets(): string[] {
		return [
			this.clientSecret,
			this.signingSecret,
			...this.workspaces.map((workspace) => workspace.botToken),
			...this.emulator.organizations.map((organization) => organization.apiKey),
		];
	}

	async close(): Promise<void> {
		await this.app?.idle().catch(() => undefined);
		await this.app?.stop().catch(() => undefined);
		await this.oauth.close();
		for (const workspace of this.workspaces) await workspace.standin.close();
		await this.emulator.close();
	}
}
