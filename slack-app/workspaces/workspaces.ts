import type { IncomingMessage, ServerResponse } from 'node:http';
import type { App, AppOptions, Logger, webApi } from '@slack/bolt';
import type { Clock } from '../../shared/clock';
import { createManagementClient, createWorkloadClient } from '../../shared/runtime';
import type { Transport } from '../../shared/transport';
import { WebhookVerifier } from '../../shared/webhooks';
import type { AppConfig } from '../config';
import type { AppServices } from '../features';
import type { ReadinessProbe } from '../http/health';
import type { Metrics } from '../http/metrics';
import type { FileRoute } from '../requests/file-links';
import type { JobTracker } from '../requests/job-tracker';
import { createWebhookHandler, type WebhookRoute } from '../requests/webhook-receiver';
import type { InstallationStore } from '../state/installations/store';
import type { SharedState } from '../state/shared-state';
import type { StateFile } from '../state/state-file';
import { redisInTime } from '../state/timeout';
import { createContainer, type Container, type ContainerOptions } from './container';

/**
 * The workspaces the app serves, whatever their number: one (a bot token, the app-wide GPU Cloud
 * organization; `OneWorkspace`) or every workspace that installs it (OAuth, each linked to its own
 * organization with `/gpu setup`; `Distributed`). The composition in app.ts asks this seam, never
 * which of the two it is.
 */
export interface Workspaces {
	/** How Bolt finds a request's bot token: the one token, or each workspace's installation. */
	readonly bolt: Pick<AppOptions, 'token' | 'authorize'>;
	/** What the listeners see: the services of the workspace whose request is running. */
	readonly services: AppServices;
	/** Where job webhooks arrive (none without SLACK_PUBLIC_URL); each handler verifies signatures itself. */
	readonly webhookRoutes: Record<string, WebhookRoute>;
	/** GET routes beside the health routes (the OAuth install and redirect). */
	readonly routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void>;
	/** What must answer for the app to do its work (`/readyz`). */
	readonly probes: ReadinessProbe[];
	/** The installations, when workspaces install the app (tests and tools read them). */
	readonly installations?: InstallationStore;
	/** Numbers `/readyz` reports beside the checks. */
	counts(): Record<string, number>;
	/** A workspace's services; undefined when the app does not serve it (not installed or not linked). */
	get(team: string): Promise<Container | undefined>;
	/** Every workspace's services kept now (for idle, drain and stop). */
	containers(): Promise<Container[]>;
	/** Adds what this kind of workspaces answers itself (install events, the link modal) before the listeners. */
	register(app: App): void;
	/** Once Bolt listens: each workspace's services start and resume their unfinished work. */
	start(): Promise<void>;
	/** Resolves when the recovery a start began (possibly in the background) has ended. */
	recovered(): Promise<void>;
	/** Stops following jobs and closes what the workspaces opened. */
	close(): Promise<void>;
}

/** What every workspace's services are built from: the app's settings and its process-wide parts. */
export interface WorkspaceParts {
	config: AppConfig;
	state: StateFile;
	shared: SharedState;
	clock: Clock;
	logger: Logger;
	transport: Transport | undefined;
	metrics: Metrics;
	/** Slack Web API client options (the API URL, the metrics' fetch). */
	clientOptions: webApi.WebClientOptions;
	streamIntervalMs?: number;
	statusRefreshMs?: number;
	/** How files shared in Slack reach GPU Cloud (object storage, or the app's links); unset without either. */
	fileLinks?: FileRoute;
}

/** A GPU Cloud organization and its key: the app's own, or (distributed) a workspace's link. */
export interface OrganizationKey {
	organization: string;
	apiKey: string;
	project?: string;
}

/** The service's clients for one organization. */
export function serviceClients(parts: WorkspaceParts, link: OrganizationKey) {
	const { config, transport, metrics, clock } = parts;
	const workload = (serviceUrl?: string) =>
		serviceUrl
			? createWorkloadClient({ serviceUrl, apiKey: link.apiKey, transport, clock })
			: undefined;
	return {
		management: createManagementClient({
			baseUrl: config.service.baseUrl,
			organization: link.organization,
			apiKey: link.apiKey,
			transport: transport && metrics.serviceTransport(transport, link.organization),
			clock,
		}),
		images: workload(config.service.imageUrl),
		chat: workload(config.service.chatUrl),
	};
}

export type ServiceClients = ReturnType<typeof serviceClients>;

/** One workspace's services, acting for `identity` with `clients`, its jobs reporting to `webhookPath`. */
export function buildContainer(
	parts: WorkspaceParts,
	workspace: Pick<ContainerOptions, 'client' | 'identity' | 'sharesJobs'> & {
		clients: ServiceClients;
		config: AppConfig;
	},
): Container {
	const { clients, ...rest } = workspace;
	return createContainer({
		...rest,
		management: clients.management,
		images: clients.images,
		chat: clients.chat,
		state: parts.state,
		clock: parts.clock,
		logger: parts.logger,
		streamIntervalMs: parts.streamIntervalMs,
		statusRefreshMs: parts.statusRefreshMs,
		shared: parts.shared,
		fileLinks: parts.fileLinks,
		onJobPhase: parts.metrics.jobPhase(workspace.identity.team),
	});
}

/** A job-webhook handler: the organization's secret (re-read when rotated), ids seen once across replicas. */
export function jobWebhookHandler(
	parts: WorkspaceParts,
	options: {
		management: ServiceClients['management'];
		tracker: JobTracker;
		secret?: string;
		/** Keeps one workspace's delivery ids apart from another's. */
		scope: string;
	},
): WebhookRoute {
	const { shared, clock, logger } = parts;
	return createWebhookHandler({
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
}

/** The service retries a webhook for minutes, not days. */
const WEBHOOK_MEMORY_MS = 24 * 3600_000;
