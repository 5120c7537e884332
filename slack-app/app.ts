import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { App, LogLevel, type CustomRoute, type Logger } from '@slack/bolt';
import type { Clock } from '../shared/clock';
import { createManagementClient, createWorkloadClient, systemClock, UndiciTransport } from '../shared/runtime';
import type { Transport } from '../shared/transport';
import { WebhookVerifier } from '../shared/webhooks';
import { configSecrets, type AppConfig } from './config';
import { Health, type ReadinessProbe } from './health';
import { registerListeners } from './listeners';
import { JsonLogger, newRequestId, withLogContext } from './log';
import { AckFirstReceiver } from './receiver';
import { BackgroundTasks } from './services/background';
import { createContainer, type Container } from './services/container';
import { errorSummary } from './services/errors';
import { RedisSharedState, within } from './services/shared-state';
import { StateStore } from './services/state-store';
import { createWebhookHandler } from './services/webhook-receiver';

export interface SlackAppOptions {
  config: AppConfig;
  logger?: Logger;
  logLevel?: LogLevel;
  clock?: Clock;
  /** How the app reaches GPU Cloud; a private keep-alive pool by default. */
  transport?: Transport;
  streamIntervalMs?: number;
  statusRefreshMs?: number;
}

export interface RunningSlackApp {
  app: App;
  /** HTTP mode: where Slack's requests go (`/slack/events`). */
  eventsUrl?: string;
  /** Where this process listens for job webhooks (behind `publicUrl` in production). */
  localWebhookUrl?: string;
  container: Container;
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

/** Slack's retry default spans ~30 minutes; a chat app should give up within seconds. */
const SLACK_RETRY = { retries: 3, factor: 2, minTimeout: 500, maxTimeout: 5000 };

/** Builds the Bolt app, connects it to Slack and GPU Cloud, resumes unfinished work and starts listening. */
export async function startSlackApp(options: SlackAppOptions): Promise<RunningSlackApp> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const ownTransport = options.transport ? undefined : new UndiciTransport();
  const transport = options.transport ?? ownTransport;
  const service = config.service;
  const management = createManagementClient({ baseUrl: service.baseUrl, organization: service.organization, apiKey: service.apiKey, transport, clock });
  const workload = (serviceUrl?: string) => (serviceUrl ? createWorkloadClient({ serviceUrl, apiKey: service.apiKey, transport, clock }) : undefined);

  // The webhook route is outside Bolt's signature check: its handler verifies webhook signatures itself.
  let webhookHandler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const serveWebhook = (req: IncomingMessage, res: ServerResponse) => (webhookHandler ? webhookHandler(req, res) : res.writeHead(503).end());
  const slack = config.slack;
  const logLevel = options.logLevel ?? config.logLevel;
  const logger = options.logger ?? new JsonLogger({ level: logLevel, secrets: configSecrets(config) });
  let draining = false;
  // Readiness probes: each dependency the app cannot work without (a `store` probe joins with shared state).
  const probes: ReadinessProbe[] = [
    { name: 'slack', check: () => app.client.auth.test() },
    { name: 'service', check: (signal) => management.endpoints.list({ page: 1, page_size: 1 }, { signal }) },
  ];
  // Several replicas agree through Redis; the start waits until it answers.
  const shared = config.redisUrl ? await RedisSharedState.connect({ url: config.redisUrl, logger }) : undefined;
  if (shared) probes.push({ name: 'store', check: () => shared.ping() });
  const health = new Health({ probes, logger });
  const healthRoutes = { '/healthz': health.healthz, '/readyz': health.readyz };
  // Failures are logged through Bolt's logger, which exists by the time any task runs.
  const background = new BackgroundTasks((message) => app.logger.error(message));
  const receiver =
    slack.mode === 'http'
      ? new AckFirstReceiver({
          signingSecret: slack.signingSecret,
          clock,
          routes: config.publicUrl ? { [config.webhookPath]: serveWebhook } : {},
          getRoutes: healthRoutes,
          afterAck: (what, task) => background.afterAck(what, task),
          firstAccepted: shared ? (signature, ttlMs) => within(shared.claimOnce(`slack-signature:${signature}`, ttlMs), REPLAY_CHECK_MS, 'Redis') : undefined,
        })
      : undefined;
  // Socket Mode serves the webhook route from Bolt's own small HTTP server.
  const customRoutes: CustomRoute[] = [
    ...(config.publicUrl ? [{ path: config.webhookPath, method: ['POST'], handler: serveWebhook }] : []),
    ...Object.entries(healthRoutes).map(([path, handler]) => ({ path, method: ['GET'], handler })),
  ];
  const app = new App({
    token: slack.botToken,
    ...(slack.mode === 'socket'
      ? { socketMode: true, appToken: slack.appToken, installerOptions: { port: slack.port }, customRoutes, processBeforeResponse: false }
      : { receiver }),
    // Bolt would otherwise call auth.test without awaiting it; init() below awaits it.
    deferInitialization: true,
    // No listener reads context.conversation; the store would look every request up for nothing.
    convoStore: false,
    logger,
    logLevel,
    clientOptions: { ...(slack.apiUrl ? { slackApiUrl: slack.apiUrl } : {}), retryConfig: SLACK_RETRY, timeout: 30_000 },
  });
  if (slack.mode === 'socket') {
    // Socket Mode has no receiver of ours: ids and the drain refusal come from a first middleware.
    // An event left unacknowledged while draining is redelivered by Slack to another connection.
    app.use(async ({ next }) => {
      if (!draining) await withLogContext({ request: newRequestId() }, next);
    });
  }
  await app.init();
  const auth = await app.client.auth.test();
  if (!auth.team_id || !auth.user_id) throw new Error('Slack did not say which workspace and bot user the token belongs to.');

  const state = await StateStore.open(config.stateFile, (message) => logger.warn(message));
  const container = createContainer({
    config,
    client: app.client,
    identity: { team: auth.team_id, botUserId: auth.user_id },
    management,
    images: workload(service.imageUrl),
    chat: workload(service.chatUrl),
    state,
    clock,
    logger,
    streamIntervalMs: options.streamIntervalMs,
    statusRefreshMs: options.statusRefreshMs,
    shared,
  });
  if (config.publicUrl) {
    // Read at start so a wrong key fails now; read again when the organization rotates it.
    const secret = service.webhookSecret ?? (await management.webhookSecret.get());
    const verifier = new WebhookVerifier({ secret, readSecret: () => management.webhookSecret.get(), clock });
    const firstDelivery = shared ? (id: string) => within(shared.claimOnce(`webhook:${id}`, WEBHOOK_MEMORY_MS), REPLAY_CHECK_MS, 'Redis') : undefined;
    webhookHandler = createWebhookHandler({ verifier, tracker: container.tracker, logger, firstDelivery });
  }
  registerListeners(app, container.services);
  app.error(async (error) => logger.error(`A listener failed: ${errorSummary(error)}`));

  let eventsUrl: string | undefined;
  let localWebhookUrl: string | undefined;
  if (slack.mode === 'http') {
    const server = await app.start({ port: slack.port, host: slack.host });
    const address = server.address() as AddressInfo;
    const host = slack.host === '0.0.0.0' ? '127.0.0.1' : slack.host;
    eventsUrl = `http://${host}:${address.port}/slack/events`;
    if (config.publicUrl) localWebhookUrl = `http://${host}:${address.port}${config.webhookPath}`;
  } else {
    await app.start();
  }

  await resumeUnfinishedWork(container, state, logger);
  const sweeping = new AbortController();
  if (shared) void takeOverOrphanedJobs(container, clock, config.pollIntervalMs, sweeping.signal, logger);

  return {
    app,
    eventsUrl,
    localWebhookUrl,
    container,
    health,
    refuseNewRequests: () => {
      draining = true;
      health.startDraining();
      receiver?.refuseNewRequests();
    },
    idle: async () => {
      await background.idle();
      await container.lifecycle.idle();
      await container.tracker.idle();
    },
    drain: async () => {
      const draining = container.lifecycle.drain();
      await background.idle();
      await draining;
      await container.tracker.idle();
    },
    stop: async () => {
      sweeping.abort();
      container.tracker.stop();
      await app.stop();
      await shared?.close();
      await ownTransport?.close();
    },
  };
}

/** Longest wait for Redis before a Slack request or webhook is answered 503 (both are sent again). */
const REPLAY_CHECK_MS = 2000;
/** The service retries a webhook for minutes, not days. */
const WEBHOOK_MEMORY_MS = 24 * 3600_000;

/**
 * Several replicas: every poll interval, follow the jobs no replica follows any more (their holder
 * died and its leases expired) and deliver finished ones nobody delivered.
 */
async function takeOverOrphanedJobs(container: Container, clock: Clock, intervalMs: number, signal: AbortSignal, logger: Logger): Promise<void> {
  while (!signal.aborted) {
    try {
      await clock.sleep(intervalMs, signal);
    } catch {
      return;
    }
    await withLogContext({ request: undefined, job: undefined }, async () => {
      try {
        const { watching, delivered } = await container.services.jobs.resume();
        if (watching || delivered) logger.info(`Took over ${watching} running job(s) and delivered ${delivered} from replicas that stopped.`);
      } catch (error) {
        logger.warn(`Could not look for jobs other replicas left: ${errorSummary(error)}`);
      }
    });
  }
}

/** After a restart: follow the app's unfinished jobs again, redo interrupted images, flag interrupted answers. */
async function resumeUnfinishedWork(container: Container, state: StateStore, logger: Logger): Promise<void> {
  try {
    const { watching, delivered } = await container.services.jobs.resume();
    if (watching || delivered) logger.info(`Resumed ${watching} running job(s); delivered ${delivered} finished while the app was away.`);
  } catch (error) {
    logger.warn(`Could not look for unfinished jobs: ${errorSummary(error)}`);
  }
  for (const inflight of [...state.inflight]) {
    if (inflight.kind === 'image') withLogContext({ request: inflight.ref }, () => container.services.images.resume(inflight));
    else await container.services.chat.interrupted(inflight).catch((error: unknown) => logger.warn(`Could not flag an interrupted answer: ${errorSummary(error)}`));
  }
}
