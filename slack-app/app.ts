import type { AddressInfo } from 'node:net';
import { App, LogLevel, type Logger } from '@slack/bolt';
import type { Clock } from '../shared/clock';
import { systemClock, UndiciTransport } from '../shared/runtime';
import type { Transport } from '../shared/transport';
import { configSecrets, STORAGE_LABELS, type AppConfig } from './config';
import { Health } from './http/health';
import { createIngress, type Ingress } from './http/ingress';
import { Metrics } from './http/metrics';
import { registerListeners } from './listeners';
import { BackgroundTasks } from './requests/background';
import { FileLinks, type FileRoute } from './requests/file-links';
import { StoredFiles } from './requests/stored-files';
import { ObjectStorage } from '../shared/object-storage';
import { UndiciStorageTransport } from '../shared/runtime/undici-storage-transport';
import { FILE_LINK_PATH } from './model';
import type { Container } from './workspaces/container';
import { errorSummary } from './slack/errors';
import { JsonLogger } from './slack/log';
import { slackClientOptions } from './slack/slack-client';
import { LocalSharedState } from './state/local-state';
import { RedisSharedState, type SharedState } from './state/shared-state';
import { StateFile } from './state/state-file';
import { Distributed } from './workspaces/distribution';
import { OneWorkspace } from './workspaces/one-workspace';
import { takeOverStoppedReplicas } from './workspaces/recovery';
import type { WorkspaceParts, Workspaces } from './workspaces/workspaces';

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
	/** The workspaces served: each one's services (`get(team)`), and the installations when distributed. */
	workspaces: Workspaces;
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

/**
 * Builds the Bolt app, connects it to Slack and GPU Cloud, resumes unfinished work and starts
 * listening, one step after another. Each step that opens something registers how to close it: a
 * step that fails closes what the earlier ones opened before the error reaches the caller, and
 * `stop` closes them all, the last opened first.
 */
export async function startSlackApp(options: SlackAppOptions): Promise<RunningSlackApp> {
	const opened = new Opened();
	try {
		const processWide = processParts(options, opened);
		const state = await openState(processWide);
		const shared = await connectShared(processWide, state, opened);
		// One set of options, so one budget of Slack calls per workspace for the whole process,
		// counted with the other replicas' calls when they share Redis.
		const base: ProcessParts = {
			...processWide,
			clientOptions: slackClientOptions(
				processWide.config.slack.apiUrl,
				(fetch) => processWide.metrics.slackFetch(fetch),
				processWide.clock,
				shared.callLedger,
			),
		};
		// The links find their workspace when a download comes, once the workspaces are open.
		const served: { workspaces?: Workspaces } = {};
		const { route: fileLinks, links } = shareableFiles(base, shared, (team) =>
			served.workspaces?.get(team),
		);
		const parts: Parts = { ...base, state, shared, fileLinks };
		const workspaces = await openWorkspaces(parts, options, opened);
		served.workspaces = workspaces;
		const health = readiness(parts, workspaces);
		const background = new BackgroundTasks((message) => parts.logger.error(message));
		const ingress = buildIngress(parts, workspaces, health, background, links);
		const app = await startBolt(parts, workspaces, ingress, opened);
		await workspaces.start();
		sweepStoppedReplicas(parts, workspaces, opened);
		return running({ parts, workspaces, health, background, ingress, app, opened });
	} catch (error) {
		// The step's own error is what the caller needs; one of closing is secondary to it.
		await opened.close().catch(() => undefined);
		throw error;
	}
}

type ProcessParts = Omit<WorkspaceParts, 'state' | 'shared'> & { logLevel: LogLevel };
/** What the process has before its shared state: the Slack clients' options need the state's call ledger. */
type ProcessWideParts = Omit<ProcessParts, 'clientOptions'>;
type Parts = WorkspaceParts & ProcessParts;

/** The logger, the clock, the GPU Cloud transport and the metrics every later step shares. */
function processParts(options: SlackAppOptions, opened: Opened): ProcessWideParts {
	const { config } = options;
	const logLevel = options.logLevel ?? config.logLevel;
	const logger =
		options.logger ?? new JsonLogger({ level: logLevel, secrets: configSecrets(config) });
	const transport = options.transport ?? opened.add(new UndiciTransport());
	const metrics = new Metrics();
	const clock = options.clock ?? systemClock;
	return {
		config,
		logger,
		logLevel,
		clock,
		transport,
		metrics,
		streamIntervalMs: options.streamIntervalMs,
		statusRefreshMs: options.statusRefreshMs,
	};
}

/** Which job each request created is kept as long as a restart may still resume the job, and a day. */
function openState({ config, logger }: ProcessWideParts): Promise<StateFile> {
	return StateFile.open(config.stateFile, (message) => logger.warn(message), {
		keepCreatedMs: (config.resumeWindowHours + 24) * 3600_000,
	});
}

/** Several replicas agree through Redis (the start waits until it answers); one process with itself. */
async function connectShared(
	{ config, logger, clock }: ProcessWideParts,
	state: StateFile,
	opened: Opened,
): Promise<SharedState> {
	return opened.add(
		config.redisUrl
			? await RedisSharedState.connect({ url: config.redisUrl, logger, stateFile: state })
			: new LocalSharedState(state, clock),
	);
}

/**
 * How files shared in Slack reach GPU Cloud: put in object storage when it is set; else, with a
 * public address, served by the app itself (`links`, whose route the ingress serves); else not at
 * all (FileTranscription says so to the person).
 */
function shareableFiles(
	{ config, clock, logger, metrics }: ProcessParts,
	shared: SharedState,
	container: (team: string) => Promise<Container | undefined> | undefined,
): { route?: FileRoute; links?: FileLinks } {
	const { publicUrl, storage } = config;
	const slackApi = config.slack.apiUrl ? new URL(config.slack.apiUrl).origin : undefined;
	const isSlackUrl = (url: string) => {
		const { origin, protocol, hostname } = new URL(url);
		return (
			origin === slackApi ||
			(protocol === 'https:' && (hostname === 'slack.com' || hostname.endsWith('.slack.com')))
		);
	};
	const source = async (team: string) => (await container(team))?.fileSource;
	if (storage) {
		const bucket = new ObjectStorage(storage, {
			transport: new UndiciStorageTransport(),
			clock,
			labels: STORAGE_LABELS,
		});
		return {
			route: new StoredFiles({ storage: bucket, ttlMs: config.fileLinkTtlMs, isSlackUrl, source }),
		};
	}
	if (!publicUrl) return {};
	const links = new FileLinks({
		store: shared,
		publicUrl,
		clock,
		ttlMs: config.fileLinkTtlMs,
		logger,
		counted: (outcome) => metrics.fileDownload(outcome),
		isSlackUrl,
		source,
	});
	return { route: links, links };
}

/** One workspace for a bot token; every workspace that installs the app with SLACK_CLIENT_ID. */
async function openWorkspaces(
	parts: WorkspaceParts,
	options: SlackAppOptions,
	opened: Opened,
): Promise<Workspaces> {
	const { distribution, slack } = parts.config;
	if (distribution)
		return opened.add(
			await Distributed.open(parts, {
				settings: distribution,
				authorizationUrl: options.slackAuthorizationUrl,
			}),
		);
	if (slack.botToken) return opened.add(await OneWorkspace.open(parts, slack.botToken));
	throw new Error(
		'Neither SLACK_BOT_TOKEN nor SLACK_CLIENT_ID is set: the configuration was not checked.',
	);
}

/** Readiness: what the workspaces need, and Redis, a dependency of its own (one process's state is the process itself). */
function readiness({ config, shared, logger, metrics }: WorkspaceParts, workspaces: Workspaces) {
	const store = config.redisUrl ? [{ name: 'store', check: () => shared.ping() }] : [];
	const health = new Health({
		probes: [...workspaces.probes, ...store],
		logger,
		counts: () => workspaces.counts(),
	});
	metrics.reportReadiness(() => health.readiness());
	metrics.reportCounts(() => workspaces.counts());
	return health;
}

/** The receiver, with the app's own routes beside Slack's: health, metrics, job webhooks, installs. */
function buildIngress(
	parts: WorkspaceParts,
	workspaces: Workspaces,
	health: Health,
	background: BackgroundTasks,
	links: FileLinks | undefined,
): Ingress {
	const { shared, metrics } = parts;
	return createIngress({
		...parts,
		slack: parts.config.slack,
		background,
		claimOnce: (key, ttlMs) => shared.claimOnce(key, ttlMs),
		routes: workspaces.webhookRoutes,
		getRoutes: {
			'/healthz': health.healthz,
			'/readyz': health.readyz,
			'/metrics': metrics.route,
			...(links ? { [`${FILE_LINK_PATH}/*`]: links.route } : {}),
			...workspaces.routes,
		},
	});
}

/** Bolt with the workspaces' authorization and the listeners; listening (or connected) when it resolves. */
async function startBolt(
	{ config, logger, logLevel, clientOptions }: Parts,
	workspaces: Workspaces,
	receiver: Ingress,
	opened: Opened,
): Promise<{ app: App; port: number }> {
	const app = new App({
		...workspaces.bolt,
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
	workspaces.register(app);
	registerListeners(app, workspaces.services);
	app.error(async (error) => logger.error(`A listener failed: ${errorSummary(error)}`));
	// A start that failed half way (the port taken after Socket Mode connected) is stopped too.
	opened.add({ close: async () => void (await app.stop()) });
	const server = await app.start({ port: config.slack.port, host: config.slack.host });
	// Stopping: the workspaces stop following jobs before Bolt stops.
	opened.add({
		close: async () => {
			for (const container of await workspaces.containers()) container.tracker.stop();
		},
	});
	return { app, port: (server.address() as AddressInfo).port };
}

/** Only a replica can stop while others run on: one process finds its own work at its next start. */
function sweepStoppedReplicas(
	{ config, shared, clock, logger }: WorkspaceParts,
	workspaces: Workspaces,
	opened: Opened,
): void {
	if (!config.redisUrl) return;
	const sweeping = new AbortController();
	opened.add({ close: async () => sweeping.abort() });
	void takeOverStoppedReplicas((team) => workspaces.get(team), {
		shared,
		clock,
		logger,
		intervalMs: config.pollIntervalMs,
		resumeWindowHours: config.resumeWindowHours,
		signal: sweeping.signal,
	});
}

function running(started: {
	parts: WorkspaceParts;
	workspaces: Workspaces;
	health: Health;
	background: BackgroundTasks;
	ingress: Ingress;
	app: { app: App; port: number };
	opened: Opened;
}): RunningSlackApp {
	const { parts, workspaces, health, background, ingress, opened } = started;
	const { slack, publicUrl, webhookPath } = parts.config;
	const host = slack.host === '0.0.0.0' ? '127.0.0.1' : slack.host;
	const localUrl = `http://${host}:${started.app.port}`;
	return {
		app: started.app.app,
		eventsUrl: ingress.path === undefined ? undefined : `${localUrl}${ingress.path}`,
		localUrl,
		localWebhookUrl: publicUrl ? `${localUrl}${webhookPath}` : undefined,
		workspaces,
		health,
		refuseNewRequests: () => {
			health.startDraining();
			ingress.refuseNewRequests();
		},
		idle: async () => {
			await workspaces.recovered();
			await background.idle();
			for (const container of await workspaces.containers()) {
				await container.lifecycle.idle();
				await container.tracker.idle();
			}
		},
		drain: async () => {
			const containers = await workspaces.containers();
			const draining = containers.map((container) => container.lifecycle.drain());
			await background.idle();
			await Promise.all(draining);
			for (const container of await workspaces.containers()) await container.tracker.idle();
		},
		stop: () => opened.close(),
	};
}

/** What the start has opened so far, closed the last first (after a failed step, or at `stop`). */
class Opened {
	private readonly closing: { close(): Promise<void> }[] = [];

	add<T extends { close(): Promise<void> }>(part: T): T {
		this.closing.push(part);
		return part;
	}

	/** Closes every part even when one fails; rejects with the first failure. */
	async close(): Promise<void> {
		const failures: unknown[] = [];
		for (let part = this.closing.pop(); part; part = this.closing.pop())
			await part.close().catch((error: unknown) => failures.push(error));
		if (failures.length) throw failures[0];
	}
}
