import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
	webApi,
	type AnyMiddlewareArgs,
	type App,
	type Authorize,
	type Logger,
	type Middleware,
} from '@slack/bolt';
import {
	InstallProvider,
	InvalidStateError,
	type Installation,
	type InstallURLOptions,
	type StateStore,
} from '@slack/oauth';
import { z } from 'zod/v4';
import { isRecord } from '../http/http-body';
import { submitLinkWorkspace } from '../listeners/views/link-workspace';
import { LINK_VIEW, linkModal } from '../messages/link-workspace';
import type { Container } from './container';
import { errorSummary } from '../slack/errors';
import { SecretCipher } from '../state/installations/cipher';
import {
	InstallationStore,
	UnreadableRowError,
	type WorkspaceLink,
} from '../state/installations/store';
import type { Distribution } from '../config';
import { ownOlderRecords, recoverUnfinishedWork } from './recovery';
import { TeamContainers } from './team-containers';
import {
	buildContainer,
	jobWebhookHandler,
	serviceClients,
	type OrganizationKey,
	type WorkspaceParts,
	type Workspaces,
} from './workspaces';
import type { ReadinessProbe } from '../http/health';
import { createWorkspaceWebhookRoute, type WebhookRoute } from '../requests/webhook-receiver';

/**
 * The app installed in many workspaces: Slack's OAuth install (`/slack/install` →
 * Slack's consent page → `/slack/oauth_redirect`, state checked by @slack/oauth), the
 * installations and each workspace's linked GPU Cloud organization in the InstallationStore, the
 * `/gpu setup` modal in which a workspace admin links them, and uninstall. Every other request runs
 * inside its workspace's own services (TeamContainers), whose jobs report to `webhookPath/<team id>`.
 */

/** The bot scopes of manifest.yaml, asked for at install. */
export const BOT_SCOPES = [
	'commands',
	'chat:write',
	'chat:write.public',
	'files:write',
	'files:read',
	'channels:history',
	'groups:history',
	'im:history',
	'users:read',
	'assistant:write',
];
const INSTALL_PATH = '/slack/install';
const REDIRECT_PATH = '/slack/oauth_redirect';
const SETUP_TEXT = 'setup';

export interface DistributedOptions {
	settings: Distribution;
	/** Where the consent page is (Slack's own by default). */
	authorizationUrl?: string;
}

export class Distributed implements Workspaces {
	readonly bolt: { authorize: Authorize<boolean> };
	readonly installer: InstallProvider;
	readonly routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void>;
	readonly webhookRoutes: Record<string, WebhookRoute>;
	/** Distributed, each workspace has its own token and key: the store of installations is what must answer. */
	readonly probes: ReadinessProbe[];
	private readonly teams: TeamContainers;
	/** Each workspace's job-webhook handler, found from the container its request resolves to. */
	private readonly webhooks = new WeakMap<Container, WebhookRoute>();
	private readonly logger: Logger;
	/** Ends the recovery a start began and the release of idle workspaces, when the app stops. */
	private readonly closing = new AbortController();
	private recovery: Promise<void> = Promise.resolve();

	private constructor(
		readonly installations: InstallationStore,
		private readonly parts: WorkspaceParts,
		options: DistributedOptions,
	) {
		const { config, logger } = parts;
		const { settings } = options;
		const store = installations;
		this.logger = logger;
		this.bolt = { authorize: this.authorize };
		this.probes = [{ name: 'installations', check: () => store.ping() }];
		this.installer = new InstallProvider({
			clientId: settings.clientId,
			clientSecret: settings.clientSecret,
			stateStore: singleUseStates(store, settings.stateSecret),
			installationStore: store.forSlack(),
			directInstall: true,
			logger,
			...(options.authorizationUrl ? { authorizationUrl: options.authorizationUrl } : {}),
			clientOptions: config.slack.apiUrl ? { slackApiUrl: config.slack.apiUrl } : {},
		});
		// Where Slack sends the browser back; without a public URL, the app's configured Redirect URL.
		const installOptions: InstallURLOptions = {
			scopes: BOT_SCOPES,
			...(config.publicUrl ? { redirectUri: `${config.publicUrl}${REDIRECT_PATH}` } : {}),
		};
		const guarded =
			(what: string, handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>) =>
			(req: IncomingMessage, res: ServerResponse) => {
				handle(req, res).catch((error: unknown) => {
					logger.error(`${what} failed: ${errorSummary(error)}`);
					if (!res.headersSent)
						res
							.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
							.end('The installation failed; try again.');
				});
			};
		this.routes = {
			[INSTALL_PATH]: guarded('An install request', (req, res) =>
				this.installer.handleInstallPath(req, res, undefined, installOptions),
			),
			[REDIRECT_PATH]: guarded('An OAuth redirect', (req, res) =>
				this.installer.handleCallback(
					req,
					res,
					{
						success: (installation, _options, _req, response) => {
							const team = installation.team?.id ?? installation.enterprise?.id ?? 'the workspace';
							logger.info(`Installed in ${team}.`);
							void this.teams.forget(team);
							page(
								response,
								200,
								'GPU Cloud is installed',
								`GPU Cloud for Slack is installed. Next, a workspace admin types <code>/gpu setup</code> in Slack to link your GPU Cloud organization.`,
							);
						},
						failure: (error, _options, _req, response) => {
							logger.warn(`An installation did not complete: ${error.code ?? 'unknown error'}`);
							page(
								response,
								400,
								'Installation failed',
								'The installation did not complete (it was cancelled, took too long or was opened twice). Start again from the install link.',
							);
						},
					},
					installOptions,
				),
			),
		};
		this.teams = new TeamContainers({
			build: async (team) => {
				const installation = await store.findInstallation({ teamId: team });
				const link = installation ? await store.findLink(team) : undefined;
				return installation && link ? this.build(team, installation, link) : undefined;
			},
			capacity: settings.keptWorkspaces,
			idleMs: settings.idleReleaseMs,
			clock: parts.clock,
		});
		void this.releaseWhileOpen(Math.min(60_000, Math.max(1000, settings.idleReleaseMs / 4)));
		this.services = this.teams.services;
		this.webhookRoutes = config.publicUrl
			? {
					[`${config.webhookPath}/*`]: createWorkspaceWebhookRoute({
						basePath: config.webhookPath,
						handlerOf: async (team) => {
							const container = await this.teams.get(team);
							return container && this.webhooks.get(container);
						},
						logger,
					}),
				}
			: {};
	}

	readonly services: Workspaces['services'];

	static async open(parts: WorkspaceParts, options: DistributedOptions): Promise<Distributed> {
		const { logger } = parts;
		const { settings } = options;
		// Opening reads no workspace's row: each is read (and a broken one found) on its first request.
		const store = await InstallationStore.open(
			{ databaseUrl: settings.databaseUrl, sqliteFile: settings.sqliteFile },
			new SecretCipher(settings.installationKey, settings.previousKeys),
			undefined,
			(error) =>
				logger.warn(
					`Could not seal the stored secrets again with the current key: ${errorSummary(error)}`,
				),
		);
		return new Distributed(store, parts, options);
	}

	/** A workspace whose stored row does not open is refused alone: counted, not a reason to stop serving. */
	counts(): Record<string, number> {
		return { unreadable_workspaces: this.installations.unreadableWorkspaces().length };
	}

	get(team: string): Promise<Container | undefined> {
		return this.teams.get(team);
	}

	containers(): Promise<Container[]> {
		return this.teams.containers();
	}

	/**
	 * At start, in the background: the workspaces with work recorded in the resume window resume it,
	 * one after another; a workspace with nothing recorded costs nothing and is built on its first
	 * request. One that cannot be built stops only itself.
	 */
	async start(): Promise<void> {
		this.recovery = this.recover().catch((error: unknown) =>
			this.logger.error(`Could not resume unfinished work: ${errorSummary(error)}`),
		);
	}

	recovered(): Promise<void> {
		return this.recovery;
	}

	/** Releases idle workspaces (and those beyond the bound) every `intervalMs`, a few times per idle period. */
	private async releaseWhileOpen(intervalMs: number): Promise<void> {
		const { clock } = this.parts;
		while (!this.closing.signal.aborted) {
			try {
				await clock.sleep(intervalMs, this.closing.signal);
			} catch {
				return;
			}
			await this.teams.release();
		}
	}

	private async recover(): Promise<void> {
		const { state, shared, logger, clock, config } = this.parts;
		// Whether the app serves one workspace or several is all an older state file needs.
		await ownOlderRecords(state, () => this.installations.teams(2), logger);
		await recoverUnfinishedWork((team) => this.teams.get(team), {
			shared,
			logger,
			since: clock.now() - config.resumeWindowHours * 3600_000,
			signal: this.closing.signal,
		});
	}

	/** A workspace's services, from its installation (its bot token) and its link (its organization and key). */
	private build(team: string, installation: Installation, link: WorkspaceLink): Container {
		const { parts } = this;
		const { config } = parts;
		const clients = serviceClients(parts, link);
		const container = buildContainer(parts, {
			client: new webApi.WebClient(installation.bot?.token, {
				...parts.clientOptions,
				logger: parts.logger,
			}),
			identity: { team, botUserId: installation.bot?.userId ?? '' },
			clients,
			// Each workspace's jobs report to a path naming it, checked with its own organization's secret.
			config: {
				...config,
				webhookPath: `${config.webhookPath}/${team}`,
				service: { ...config.service, project: link.project },
			},
			// Another workspace's jobs are seen here only when its admin shares them and it is linked
			// to this workspace's organization (read at each request).
			sharesJobs: async (other) => {
				const theirs = await this.installations.findLink(other).catch(() => undefined);
				return theirs?.shareJobs === true && theirs.organization === link.organization;
			},
		});
		if (config.publicUrl)
			this.webhooks.set(
				container,
				jobWebhookHandler(parts, {
					management: clients.management,
					tracker: container.tracker,
					scope: `${team}:`,
				}),
			);
		return container;
	}

	/** Resolves when the service accepts the key for the organization; rejects with the service's error. */
	private async checkLink(link: OrganizationKey): Promise<void> {
		await serviceClients(this.parts, link).management.endpoints.list({ page: 1, page_size: 1 });
	}

	/**
	 * Bolt's authorize: each request's bot token from its workspace's installation. When the stored
	 * installation does not open, the app has no token to answer with; a command or a click still
	 * carries a response_url, through which the person is told to reinstall.
	 */
	readonly authorize: Authorize<boolean> = async (source, body) => {
		try {
			return await this.installer.authorize(source);
		} catch (error) {
			const team = source.teamId ?? source.enterpriseId;
			if (team && this.installations.unreadableWorkspaces().includes(team)) {
				this.logger.warn(new UnreadableRowError(team, 'installation').message);
				await tellPrivately(
					body,
					'GPU Cloud cannot read what it stored about this workspace (it was altered): a workspace admin must install the app again from its install link, then link the organization with `/gpu setup`.',
				);
			}
			throw error;
		}
	};

	/** Uninstall, the link modal, and the middleware that runs each request in its workspace. */
	register(app: App): void {
		const forgetWorkspace = async (team: string | undefined, why: string) => {
			if (!team) return;
			await this.installations.deleteWorkspace(team);
			await this.teams.forget(team);
			this.logger.info(`${why}: deleted the installation and GPU Cloud link of ${team}.`);
		};
		app.event('app_uninstalled', async ({ context }) =>
			forgetWorkspace(context.teamId, 'Uninstalled'),
		);
		app.event('tokens_revoked', async ({ event, context }) => {
			// Only a revoked bot token leaves the app without access; a revoked user token changes nothing here.
			if ((event.tokens.bot ?? []).length > 0)
				await forgetWorkspace(context.teamId, 'Bot token revoked');
		});
		app.view(
			LINK_VIEW,
			submitLinkWorkspace({
				checkLink: (link) => this.checkLink(link),
				saveLink: async (link) => {
					await this.installations.saveLink(link);
					// The workspace's services are built again, with the new link.
					await this.teams.forget(link.teamId);
				},
				logger: this.logger,
			}),
		);
		app.use(this.middleware);
	}

	/** Runs each request inside its workspace's services; `/gpu setup` and unlinked workspaces are answered here. */
	private readonly middleware: Middleware<AnyMiddlewareArgs> = async (args) => {
		const { body, context, next } = args;
		const team = context.teamId ?? context.enterpriseId;
		const record = body as unknown as Record<string, unknown>;
		const command = typeof record.command === 'string' ? record : undefined;
		// The uninstall events and the link modal need no workspace services.
		if (
			!team ||
			(record.type === 'view_submission' &&
				isRecord(record.view) &&
				record.view.callback_id === LINK_VIEW)
		)
			return next();
		if (
			record.type === 'event_callback' &&
			isRecord(record.event) &&
			(record.event.type === 'app_uninstalled' || record.event.type === 'tokens_revoked')
		)
			return next();
		if (
			command &&
			String(command.text ?? '')
				.trim()
				.toLowerCase() === SETUP_TEXT &&
			typeof command.trigger_id === 'string'
		) {
			await args.client.views.open({ trigger_id: command.trigger_id, view: linkModal() });
			return;
		}
		let container: Container | undefined;
		try {
			container = await this.teams.get(team);
		} catch (error) {
			if (!(error instanceof UnreadableRowError)) throw error;
			this.logger.warn(error.message);
			if (command && 'respond' in args)
				await args.respond({
					response_type: 'ephemeral',
					text: 'GPU Cloud cannot read the organization link of this workspace (it was altered). A workspace admin types `/gpu setup` and links the organization again.',
				});
			return;
		}
		if (!container) {
			if (command && 'respond' in args) {
				await args.respond({
					response_type: 'ephemeral',
					text: 'GPU Cloud is not linked to this workspace yet. A workspace admin types `/gpu setup` and enters the organization and its API key.',
				});
			} else {
				this.logger.info(
					`Ignored a ${String(record.type)} request from ${team}: no GPU Cloud organization is linked.`,
				);
			}
			return;
		}
		await this.teams.run(container, next);
	};

	async close(): Promise<void> {
		this.closing.abort();
		for (const container of await this.teams.containers()) container.tracker.stop();
		await this.installations.close();
	}
}

/** How long an install link's state stays usable, as @slack/oauth's own cookie lasts. */
const STATE_LIFETIME_MS = 10 * 60_000;

/**
 * OAuth states kept in the installation store (so every replica sees them), each usable once: a
 * random value, stored only as its HMAC under SLACK_STATE_SECRET, that a redirect spends when it
 * arrives. @slack/oauth's default store only checks a state's
 * signature and age, so a used state and its cookie installed again for ten minutes.
 */
function singleUseStates(store: InstallationStore, stateSecret: string): StateStore {
	const hash = (state: string) => createHmac('sha256', stateSecret).update(state).digest('hex');
	return {
		generateStateParam: async (installOptions, now) => {
			const state = randomBytes(32).toString('base64url');
			await store.saveOAuthState(
				hash(state),
				JSON.stringify(installOptions),
				new Date(now.getTime() + STATE_LIFETIME_MS),
			);
			return state;
		},
		verifyStateParam: async (_now, state) => {
			const options = await store.takeOAuthState(hash(state));
			if (options === undefined)
				throw new InvalidStateError('The state was used already, has expired or was never issued.');
			return installOptionsSchema.parse(JSON.parse(options)) as InstallURLOptions;
		},
	};
}

/** What a stored state keeps: the options its install link was made with. */
const installOptionsSchema = z.looseObject({
	scopes: z.union([z.string(), z.array(z.string())]),
	redirectUri: z.string().optional(),
});

/** A private answer through the request's response_url, which needs no token; nothing when it has none. */
async function tellPrivately(body: unknown, text: string): Promise<void> {
	const record = isRecord(body) ? body : {};
	const url = typeof record.response_url === 'string' ? record.response_url : undefined;
	if (!url?.startsWith('http')) return;
	await fetch(url, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ response_type: 'ephemeral', text }),
		signal: AbortSignal.timeout(3000),
	}).catch(() => undefined);
}

function page(res: ServerResponse, status: number, title: string, body: string): void {
	res.writeHead(status, {
		'content-type': 'text/html; charset=utf-8',
		'cache-control': 'no-store',
	});
	res.end(
		`<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${body}</p></body></html>`,
	);
}
