import { once, setMaxListeners } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { InferenceEndpoint, Job } from '../shared/schemas';
import { CHAT_PREFIX, createChatRoutes } from './chat/routes';
import { Catalogue } from './endpoints/catalogue';
import { Faults } from './faults';
import { FileStore } from './files';
import { json } from './http';
import { createImageRoutes, IMAGE_PREFIX } from './image/routes';
import { JobStore } from './jobs';
import { createManagementRoutes, MANAGEMENT_PREFIX, type OrganizationState } from './management';
import {
	resolveOptions,
	type OrganizationConfig,
	type EmulatorOptions,
	type FaultOptions,
	type FaultSettings,
} from './options';
import { RateLimiter } from './rate-limit';
import { createRequestHandler, type RequestRecord } from './server';
import { WebhookSender, type DeliveryAttempt } from './webhooks';

export { DEV_API_KEY, DEV_WEBHOOK_SECRET, FAULT_SURFACES, devWebhookSecretFor } from './options';
export type {
	EmulatorOptions,
	ListedEndpoint,
	FaultOptions,
	FaultSettings,
	FaultSurface,
	JobDuration,
	OrganizationConfig,
	OrganizationOptions,
} from './options';
export type { RequestRecord, Surface } from './server';
export type { DeliveryAttempt } from './webhooks';
export type { FaultKind } from './faults';
export { REQUEST_FAULT_KINDS, type RequestFaultKind } from './options';
export { WORKFLOWS } from './image/routes';
export { CHAT_MODEL_ID } from './chat/routes';

export interface RunningEmulator {
	/** Management API root, e.g. http://127.0.0.1:PORT/api/public. */
	baseUrl: string;
	/** service_url of the image generation workload. */
	imageUrl: string;
	/** service_url of the text generation workload. */
	chatUrl: string;
	/** http://HOST:PORT */
	origin: string;
	port: number;
	apiKey: string;
	organization: string;
	project: string;
	webhookSecret: string;
	/** Every organization with its API key, webhook secret and project; the first is the one above. */
	readonly organizations: readonly OrganizationConfig[];
	/** The jobs created in one organization (oldest first): what its API key can see. */
	jobsOf(organization: string): Job[];
	/** Every request answered so far (newest last), to prove what was or was not sent. */
	readonly requests: readonly RequestRecord[];
	/** Every webhook delivery attempt so far (newest last). */
	readonly deliveries: readonly DeliveryAttempt[];
	/** The seeded catalogue. */
	readonly endpoints: readonly InferenceEndpoint[];
	/** An endpoint whose jobs accept any JSON input and echo it (`echo`). */
	genericEndpoint: string;
	/** An endpoint like `genericEndpoint` whose jobs take 20 times the job duration (`batch-echo`). */
	slowEndpoint: string;
	/** A job as the API would return it now, whatever its endpoint. */
	getJob(id: string): Job | undefined;
	/** Resolves once every webhook delivery under way has succeeded or given up. */
	deliveriesSettled(): Promise<void>;
	/** Empties `requests` and `deliveries`. */
	resetLogs(): void;
	/** Changes fault settings while running; giving `seed` restarts the fault sequence. */
	setFaults(faults: FaultOptions): void;
	readonly faults: Readonly<FaultSettings>;
	/** Stops jobs, deliveries and the server. */
	close(): Promise<void>;
}

function urlHost(host: string): string {
	if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
	return host.includes(':') ? `[${host}]` : host;
}

/** Starts the emulator on one HTTP server: management API, image and chat workloads, result files. */
export async function startEmulator(
	emulatorOptions: EmulatorOptions = {},
): Promise<RunningEmulator> {
	const options = resolveOptions(emulatorOptions);
	const [firstConfig] = options.organizations;
	const stop = new AbortController();
	// Every pending job timer and webhook retry listens for the stop: far more than the default 10.
	setMaxListeners(0, stop.signal);
	const faults = new Faults(options.faults);
	const files = new FileStore();
	const webhooks = new WebhookSender({
		clock: options.clock,
		faults,
		secret: firstConfig.webhookSecret,
		retryDelaysMs: options.webhookRetryDelaysMs,
		log: options.log,
		signal: stop.signal,
	});
	const stateOf = (config: OrganizationConfig): OrganizationState => ({
		config,
		catalogue: new Catalogue(config.name, options.inputSchemas, options.listedEndpoints),
		jobs: new JobStore({
			clock: options.clock,
			faults,
			files,
			webhooks,
			organization: config.name,
			webhookSecret: config.webhookSecret,
			duration: options.jobDurationMs,
			mediaHosts: options.mediaHosts,
			log: options.log,
			signal: stop.signal,
		}),
	});
	const first = stateOf(firstConfig);
	const organizations = [first, ...options.organizations.slice(1).map(stateOf)];
	const urls = { baseUrl: '', imageUrl: '', chatUrl: '' };
	const handler = createRequestHandler({
		clock: options.clock,
		faults,
		files,
		management: createManagementRoutes({
			options,
			organizations,
			rateLimiter: new RateLimiter(options.rateLimitPerMinute),
		}),
		image: createImageRoutes({ options, webhooks }),
		chat: createChatRoutes({ options, faults }),
		index: () =>
			json(200, {
				management: urls.baseUrl,
				image_workload: urls.imageUrl,
				chat_workload: urls.chatUrl,
			}),
		log: options.log,
		signal: stop.signal,
	});

	const server = createServer(handler.listener);
	server.keepAliveTimeout = 10_000;
	server.listen(options.port, options.host);
	await once(server, 'listening');
	const { port } = server.address() as AddressInfo;
	const origin = `http://${urlHost(options.host)}:${port}`;
	files.origin = origin;
	Object.assign(urls, {
		baseUrl: `${origin}${MANAGEMENT_PREFIX}`,
		imageUrl: `${origin}${IMAGE_PREFIX}`,
		chatUrl: `${origin}${CHAT_PREFIX}`,
	});

	let closed: Promise<void> | undefined;
	return {
		...urls,
		origin,
		port,
		apiKey: firstConfig.apiKey,
		organization: firstConfig.name,
		project: firstConfig.project,
		webhookSecret: firstConfig.webhookSecret,
		organizations: options.organizations,
		jobsOf: (organization) =>
			organizations.find((org) => org.config.name === organization)?.jobs.all() ?? [],
		requests: handler.requests,
		deliveries: webhooks.attempts,
		endpoints: first.catalogue.items,
		genericEndpoint: 'echo',
		slowEndpoint: 'batch-echo',
		getJob: (id) => {
			for (const org of organizations) {
				const job = org.jobs.find(id);
				if (job) return job;
			}
			return undefined;
		},
		deliveriesSettled: () => webhooks.idle(),
		resetLogs() {
			handler.requests.length = 0;
			webhooks.attempts.length = 0;
		},
		setFaults: (partial) => faults.update(partial),
		get faults() {
			return faults.current;
		},
		close() {
			closed ??= (async () => {
				stop.abort();
				const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
				server.closeAllConnections();
				await serverClosed;
				await webhooks.close();
			})();
			return closed;
		},
	};
}
