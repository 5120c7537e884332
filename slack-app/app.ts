import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { App, LogLevel, webApi, type Logger } from '@slack/bolt';
import type { Clock } from '../shared/clock';
import {
	createManagementClient,
	createWorkloadClient,
	systemClock,
	UndiciTransport,
} from '../shared/runtime';
import type { Transport } from '../shared/transport';
import { WebhookVerifier } from '../shared/webhooks';
import { configSecrets, type AppConfig } from './config';
import { Health, type ReadinessProbe } from './http/health';
import { Metrics } from './http/metrics';
import { Distributed } from './workspaces/distribution';
import { registerListeners } from './listeners';
import { JsonLogger } from './slack/log';
import { AckFirstReceiver } from './http/receiver';
import { BackgroundTasks } from './requests/background';
import { SocketReceiver } from './http/socket-receiver';
import { createContainer, type Container, type ContainerOptions } from './workspaces/container';
import { errorSummary } from './slack/errors';
import { LocalSharedState } from './state/local-state';
import { RedisSharedState, type SharedState } from './state/shared-state';
import { slackClientOptions } from './slack/slack-client';
import { recoverUnfinishedWork, takeOverStoppedReplicas } from './workspaces/recovery';
import { redisInTime } from './state/timeout';
import { StateFile } from './state/state-file';
import type { JobTracker } from './requests/job-tracker';
import {
	createWebhookHandler,
	createWorkspaceWebhookRoute,
	type WebhookRoute,
} from './requests/webhook-receiver';

export interface SlackAppOptions {
	config: AppConfig;
	logger?: Logger;
	logLevel?: LogLevel;
	clock?: Clock;
	/** How the app reaches GPU Cloud; a private keep-alive pool by default. */
	transport?: Transport;
	streamIntervalMs?: number;
	statusRefreshMs?: number;
	/** Where the OAuth consent page is: Slack's own, or a stand-in's in tests. */
	slackAuthorizationUrl?: string;
}

export interface RunningSlackApp {
	app: App;
	/** HTTP mode: where Slack's requests go (`/slack/events`). */
	eventsUrl?: string;
	/** Where the app's own routes are served (`/healthz`, `/readyz`, the job webhook), in either mode. */
	localUrl: string;
	/** Where this process listens for job webhooks (behind `publicUrl` in production; distributed, `/<team id>` follows). */
	localWebhookUrl?: string;
	/** The one workspace's services (single-workspace token mode; throws when distributed). */
	container: Container;
	/** Installed in several workspaces (SLACK_CLIENT_ID...): the installations and each workspace's services. */
	distributed?: Distributed;
	/** /healthz and /readyz, served on the app's HTTP port. */
	health: Health;
	/** Shutdown, first step: /readyz answers 503 and new Slack requests and webhooks are refused. */
	refuseNewRequests(): void;
	/** Resolves when background work and result deliveries have finished. */
	idle(): Promise<void>;
	/**
	 * For a graceful shutdown (SIGTERM), before `stop`: from now on takes no new /gpu request (each
	 * gets a private "restarting" notice), then resolves once every acknowledged request is finished
	 * or handed over (a job that exists in the service is found again after the restart) and no result
	 * is being posted. Running jobs keep running; the next start follows them.
	 */
	drain(): Promise<void>;
	stop(): Promise<void>;
}

/** Builds the Bolt app, connects it to Slack and GPU Cloud, resumes unfinished work and starts listening. */
export async function startSlackApp(options: SlackAppOptions): Promise<RunningSlackApp> {
	const { config } = options;
	const clock = options.clock ?? systemClock;
	const ownTransport = options.transport ? undefined : new UndiciTransport();
	const transport = options.transport ?? ownTransport;
	const service = config.service;
	// The probes' answers feed its availability gauge; `health` exists before the first scrape.
	const metrics: Metrics = new Metrics(() => health.readiness());
	// One organization and key for the app, or (distributed) one per workspace, linked with /gpu setup.
	const clientsFor = (link: { organization: string; apiKey: string }) => ({
		management: createManagementClient({
			baseUrl: service.baseUrl,
			organization: link.organization,
			apiKey: link.apiKey,
			transport: transport && metrics.serviceTransport(transport, link.organization),
			clock,
		}),
		workload: (serviceUrl?: string) =>
			serviceUrl
				? createWorkloadClient({ serviceUrl, apiKey: link.apiKey, transport, clock })
				: undefined,
	});
	// Distributed, there is no app-wide organization: only the workspaces' own.
	const appClients = config.distribution ? undefined : clientsFor(service);

	// The webhook route is outside Bolt's signature check: its handler verifies webhook signatures itself.
	let webhookHandler: WebhookRoute | undefined;
	const serveWebhook = (req: IncomingMessage, res: ServerResponse) =>
		webhookHandler ? webhookHandler(req, res) : res.writeHead(503).end();
	const slack = config.slack;
	const logLevel = options.logLevel ?? config.logLevel;
	const logger =
		options.logger ?? new JsonLogger({ level: logLevel, secrets: configSecrets(config) });
	// Which job each request created is kept as long as a restart may still resume the job, and a day.
	const state = await StateFile.open(config.stateFile, (message) => logger.warn(message), {
		keepCreatedMs: (config.resumeWindowHours + 24) * 3600_000,
	});
	// Several replicas agree through Redis (the start waits until it answers); one process with itself.
	const replicas = config.redisUrl !== undefined;
	const shared: SharedState = config.redisUrl
		? await RedisSharedState.connect({ url: config.redisUrl, logger, stateFile: state })
		: new LocalSharedState(state, clock);
	/** A job-webhook handler: the organization's secret (re-read when rotated), ids seen once across replicas. */
	const jobWebhookHandler = (options: {
		management: ReturnType<typeof clientsFor>['management'];
		tracker: JobTracker;
		secret?: string;
		/** Keeps one workspace's delivery ids apart from another's in Redis. */
		scope: string;
	}) =>
		createWebhookHandler({
			verifier: new WebhookVerifier({
				secret: options.secret,
				readSecret: () => options.management.webhookSecret.get(),
				clock,
			}),
			tracker: options.tracker,
			logger,
			firstDelivery: (id: string) =>
				redisInTime(shared.claimOnce(`webhook:${options.scope}${id}`, WEBHOOK_MEMORY_MS)),
		});
	/** Distributed: each workspace's own handler, found from the container its request resolves to. */
	const workspaceWebhooks = new WeakMap<Container, WebhookRoute>();
	const clientOptions = slackClientOptions(slack.apiUrl, (fetch) => metrics.slackFetch(fetch));
	const containerFor = (
		workspace: Pick<
			ContainerOptions,
			'client' | 'identity' | 'management' | 'images' | 'chat' | 'sharesJobs'
		>,
		link?: { project?: string },
	) =>
		createContainer({
			...workspace,
			// Distributed, each workspace's jobs report to a path naming it, checked with its own
			// organization's secret.
			config: link
				? {
						...config,
						webhookPath: `${config.webhookPath}/${workspace.identity.team}`,
						service: { ...service, project: link.project },
					}
				: config,
			state,
			clock,
			logger,
			streamIntervalMs: options.streamIntervalMs,
			statusRefreshMs: options.statusRefreshMs,
			shared,
			onJobPhase: metrics.jobPhase(workspace.identity.team),
		});
	const distributed = config.distribution
		? await Distributed.open({
				settings: config.distribution,
				publicUrl: config.publicUrl,
				slackApiUrl: slack.apiUrl,
				authorizationUrl: options.slackAuthorizationUrl,
				logger,
				checkLink: async (link) =>
					void (await clientsFor(link).management.endpoints.list({ page: 1, page_size: 1 })),
				build: (team, installation, link) => {
					const clients = clientsFor(link);
					const client = new webApi.WebClient(installation.bot?.token, {
						...clientOptions,
						logger,
					});
					const identity = { team, botUserId: installation.bot?.userId ?? '' };
					const container = containerFor(
						{
							client,
							identity,
							management: clients.management,
							images: clients.workload(service.imageUrl),
							chat: clients.workload(service.chatUrl),
							// Another workspace's jobs are seen here only when its admin shares them and it
							// is linked to this workspace's organization (read at each request).
							sharesJobs: async (other) => {
								const theirs = await (distributed ?? unreachable()).store
									.findLink(other)
									.catch(() => undefined);
								return theirs?.shareJobs === true && theirs.organization === link.organization;
							},
						},
						link,
					);
					if (config.publicUrl)
						workspaceWebhooks.set(
							container,
							jobWebhookHandler({
								management: clients.management,
								tracker: container.tracker,
								scope: `${team}:`,
							}),
						);
					void recoverUnfinishedWork(container, {
						state,
						shared,
						teams: () => (distributed ?? unreachable()).store.teams(),
						logger,
					});
					return container;
				},
			})
		: undefined;
	// Readiness probes: each dependency the app cannot work without. Distributed, each workspace has
	// its own token and key: the store of installations is what must answer.
	const probes: ReadinessProbe[] = appClients
		? [
				{ name: 'slack', check: () => app.client.auth.test() },
				{
					name: 'service',
					check: (signal) =>
						appClients.management.endpoints.list({ page: 1, page_size: 1 }, { signal }),
				},
			]
		: [{ name: 'installations', check: () => (distributed ?? unreachable()).store.ping() }];
	// Redis is a dependency of its own; one process's state is the process itself.
	if (replicas) probes.push({ name: 'store', check: () => shared.ping() });
	const health: Health = new Health({
		probes,
		logger,
		// A workspace whose stored row does not open is refused alone: counted, not a reason to stop serving.
		...(distributed
			? {
					counts: () => ({
						unreadable_workspaces: distributed.store.unreadableWorkspaces().length,
					}),
				}
			: {}),
	});
	const healthRoutes = {
		'/healthz': health.healthz,
		'/readyz': health.readyz,
		'/metrics': metrics.route,
	};
	// Failures are logged through Bolt's logger, which exists by the time any task runs.
	const background = new BackgroundTasks((message) => app.logger.error(message));
	const claimOnce = (key: string, ttlMs: number) => shared.claimOnce(key, ttlMs);
	const receiver =
		slack.mode === 'http'
			? new AckFirstReceiver({
					signingSecret: slack.signingSecret,
					clock,
					routes: webhookRoutes(),
					getRoutes: { ...healthRoutes, ...distributed?.routes },
					afterAck: (what, task) => background.afterAck(what, task),
					claimOnce,
					onAck: (kind, team, seconds) => metrics.acknowledged(kind, team, seconds),
				})
			: new SocketReceiver({
					appToken: slack.appToken,
					clientOptions,
					logger,
					port: slack.port,
					host: slack.host,
					routes: webhookRoutes(),
					getRoutes: healthRoutes,
					track: (what, work) => background.track(what, work),
					claimOnce,
					onAck: (kind, team, seconds) => metrics.acknowledged(kind, team, seconds),
				});
	function webhookRoutes(): Record<string, WebhookRoute> {
		if (!config.publicUrl) return {};
		if (!distributed) return { [config.webhookPath]: serveWebhook };
		const route = createWorkspaceWebhookRoute({
			basePath: config.webhookPath,
			handlerOf: async (team) => {
				const container = await distributed.workspaces.get(team);
				return container && workspaceWebhooks.get(container);
			},
			logger,
		});
		return { [`${config.webhookPath}/*`]: route };
	}
	const app = new App({
		...(distributed ? { authorize: distributed.authorize } : { token: slack.botToken }),
		receiver,
		// Bolt would otherwise call auth.test without awaiting it; init() below awaits it.
		deferInitialization: true,
		// No listener reads context.conversation; the store would look every request up for nothing.
		convoStore: false,
		logger,
		logLevel,
		clientOptions,
	});
	await app.init();
	const single = appClients ? await singleWorkspace(appClients) : undefined;
	async function singleWorkspace({
		management,
		workload,
	}: ReturnType<typeof clientsFor>): Promise<Container> {
		const auth = await app.client.auth.test();
		if (!auth.team_id || !auth.user_id)
			throw new Error('Slack did not say which workspace and bot user the token belongs to.');
		const identity = { team: auth.team_id, botUserId: auth.user_id };
		return containerFor({
			client: app.client,
			identity,
			management,
			images: workload(service.imageUrl),
			chat: workload(service.chatUrl),
		});
	}
	const containers = async () =>
		single ? [single] : ((await distributed?.workspaces.containers()) ?? []);
	if (config.publicUrl && single && appClients) {
		const { management } = appClients;
		// Read at start so a wrong key fails now; read again when the organization rotates it.
		const secret = service.webhookSecret ?? (await management.webhookSecret.get());
		webhookHandler = jobWebhookHandler({ management, tracker: single.tracker, secret, scope: '' });
	}
	distributed?.register(app);
	registerListeners(
		app,
		single ? single.services : (distributed?.workspaces.services ?? unreachable()),
	);
	app.error(async (error) => logger.error(`A listener failed: ${errorSummary(error)}`));

	// Socket Mode: resolves once connected to Slack; either way the app's routes are on PORT, HOST.
	const server = await app.start({ port: slack.port, host: slack.host });
	const address = server.address() as AddressInfo;
	const host = slack.host === '0.0.0.0' ? '127.0.0.1' : slack.host;
	const localUrl = `http://${host}:${address.port}`;
	const eventsUrl = slack.mode === 'http' ? `${localUrl}/slack/events` : undefined;
	const localWebhookUrl = config.publicUrl ? `${localUrl}${config.webhookPath}` : undefined;

	if (single)
		await recoverUnfinishedWork(single, {
			state,
			shared,
			teams: async () => [single.team],
			logger,
		});
	// Distributed: each linked workspace's services start now, and follow its unfinished jobs.
	await distributed?.startWorkspaces();
	const sweeping = new AbortController();
	// Only a replica can stop while others run on: one process finds its own work at its next start.
	if (replicas)
		void takeOverStoppedReplicas(
			containers,
			shared,
			clock,
			config.pollIntervalMs,
			sweeping.signal,
			logger,
		);

	return {
		app,
		eventsUrl,
		localUrl,
		localWebhookUrl,
		get container(): Container {
			if (!single)
				throw new Error('Installed in several workspaces: use distributed.workspaces.get(team).');
			return single;
		},
		distributed,
		health,
		refuseNewRequests: () => {
			health.startDraining();
			receiver.refuseNewRequests();
		},
		idle: async () => {
			await background.idle();
			for (const container of await containers()) {
				await container.lifecycle.idle();
				await container.tracker.idle();
			}
		},
		drain: async () => {
			const draining = (await containers()).map((container) => container.lifecycle.drain());
			await background.idle();
			await Promise.all(draining);
			for (const container of await containers()) await container.tracker.idle();
		},
		stop: async () => {
			sweeping.abort();
			for (const container of await containers()) container.tracker.stop();
			await app.stop();
			await distributed?.close();
			await shared.close();
			await ownTransport?.close();
		},
	};
}

/** The service retries a webhook for minutes, not days. */
const WEBHOOK_MEMORY_MS = 24 * 3600_000;

function unreachable(): never {
	throw new Error('Neither one workspace nor several: the configuration was not checked.');
}
