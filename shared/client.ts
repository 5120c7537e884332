import { randomUUID } from 'node:crypto';
import type { Clock } from './clock';
import { paginate, type PagingOptions } from './paging';
import { sharedRateLimiter } from './rate-limiter';
import type { GpuCloudError } from './errors';
import { AmbiguousOutcomeError, RequestExecutor } from './request';
import type { RetryPolicy } from './retry';
import {
	LIMITS,
	createJobRequestSchema,
	createQueueRequestSchema,
	inferenceEndpointPageSchema,
	inferenceEndpointSchema,
	jobPageSchema,
	jobSchema,
	pageQuerySchema,
	queueSchema,
	resourceNameSchema,
	uuidSchema,
	webhookSecretKeySchema,
	type CreateJobRequest,
	type CreateQueueRequest,
	type InferenceEndpoint,
	type InferenceEndpointPage,
	type Job,
	type JobPage,
	type PageQuery,
	type Queue,
} from './schemas';
import type { Transport } from './transport';
import { parseOrThrow } from './validation';
import { waitForJob, type WaitOptions } from './wait';

export {
	WorkloadClient,
	type WorkloadClientOptions,
	type ImageSource,
	type ChatDelta,
	type CollectedChat,
	type ChatToolCallReply,
	ChatStreamFolder,
	DEFAULT_WORKLOAD_TIMEOUT_MS,
} from './workload-client';

/** Metadata key that lets a create whose reply was lost be found again instead of repeated. */
export const REQUEST_ID_METADATA_KEY = 'client_request_id';
/** How many pages of an endpoint's jobs a look-up reads at most. */
const MAX_LOOKUP_PAGES = 20;
/** Our clock and the service's may disagree; a job this much older than our create is not ours. */
const CLOCK_SKEW_ALLOWANCE_MS = 5 * 60_000;
/**
 * Pauses before looking again for the job of a create that may still be in flight on the service:
 * one held up behind a busy server usually lands within seconds.
 */
const LOOK_AGAIN_AFTER_MS: readonly number[] = [500, 2_000, 5_000];
/** A gateway's own replies: the service behind it may still be working on the request. */
const GATEWAY_STATUSES: ReadonlySet<number> = new Set([502, 504, 524]);

/**
 * A create may or may not have made a job and looking for it could not tell. Creating again could
 * run a paid job twice, so the caller decides, knowing which request id to look for.
 */
export class CreateOutcomeUnknownError extends AmbiguousOutcomeError {
	readonly clientRequestId: string;
	constructor(underlying: GpuCloudError, clientRequestId: string) {
		super(underlying);
		this.clientRequestId = clientRequestId;
		this.message = `${underlying.message} It is unknown whether the job was created: look for a job whose metadata has ${REQUEST_ID_METADATA_KEY} "${clientRequestId}" before creating it again.`;
	}
}

/**
 * Whether the service itself answered the create with an error status, so it has finished with the
 * request and a job it made would already be listed. A lost connection, a timeout, a gateway's
 * error or a 2xx that could not be read prove nothing of the sort.
 */
function serviceFinishedWithoutJob(failure: GpuCloudError): boolean {
	const { status } = failure;
	return status !== undefined && (status === 408 || status >= 500) && !GATEWAY_STATUSES.has(status);
}

export interface ManagementClientOptions {
	/** The API root, e.g. `https://host/api/public` or the emulator's `http://127.0.0.1:4010/api/public`. */
	baseUrl: string;
	organization: string;
	/** Sent as `Service-Api-Key`; leave unset when the transport authenticates (n8n credentials). */
	apiKey?: string;
	transport: Transport;
	clock: Clock;
	/** Per request. Default 30 s. */
	timeoutMs?: number;
	retry?: Partial<RetryPolicy>;
	/**
	 * Client-side limit shared by every client of the same key in this process. Default 240/min,
	 * the service's own. `key` must identify the API key without revealing it (a hash).
	 */
	rateLimit?: { requestsPerMinute: number; key: string } | false;
	random?: () => number;
}

export interface CreateJobOptions {
	signal?: AbortSignal;
	/**
	 * When the reply to a create is lost (connection reset, timeout, 5xx, garbled body) the job may
	 * exist. By default the client tags the job with a request id in its metadata (when there is room
	 * under the 20-property limit), looks it up, and creates again only if it is not there.
	 * `repeatWhenUnknown: true` skips the look-up and simply repeats (may duplicate).
	 */
	repeatWhenUnknown?: boolean;
}

export interface CallOptions {
	signal?: AbortSignal;
	/** Catching up (a restart's recovery): waits while the key's budget has other callers. */
	background?: boolean;
}

const pathPart = encodeURIComponent;

/** How long after creating a job the first look at it comes: hardly any job ends sooner. */
const FIRST_LOOK_AFTER_CREATE_MS = 250;

export interface CreateAndWaitOptions extends WaitOptions, CreateJobOptions {
	/**
	 * Aborts the create instead of `signal` (which then aborts only the wait), so that stopping a
	 * wait never cuts off a create whose job would then exist unreported. Given as `undefined`, the
	 * create cannot be aborted.
	 */
	createSignal?: AbortSignal | undefined;
	/** Called once the job exists, before waiting starts: e.g. to name it if the wait is stopped. */
	onCreated?: (job: Job) => void;
}

export class ManagementClient {
	readonly organization: string;
	private readonly http: RequestExecutor;
	private readonly clock: Clock;

	constructor(options: ManagementClientOptions) {
		this.organization = parseOrThrow(resourceNameSchema, options.organization, 'organization name');
		this.clock = options.clock;
		const limit =
			options.rateLimit === undefined
				? { requestsPerMinute: LIMITS.rateLimitPerMinute, key: options.baseUrl }
				: options.rateLimit;
		this.http = new RequestExecutor({
			baseUrl: options.baseUrl,
			transport: options.transport,
			clock: options.clock,
			apiKey: options.apiKey,
			timeoutMs: options.timeoutMs ?? 30_000,
			retry: options.retry,
			random: options.random,
			limiter: limit
				? sharedRateLimiter(limit.key, limit.requestsPerMinute, options.clock)
				: undefined,
			serviceName: 'GPU Cloud',
		});
	}

	private get orgPath(): string {
		return `/organizations/${pathPart(this.organization)}`;
	}

	private jobsPath(endpointName: string): string {
		const name = parseOrThrow(resourceNameSchema, endpointName, 'endpoint name');
		return `${this.orgPath}/inference-endpoints/${pathPart(name)}/jobs`;
	}

	readonly jobs = {
		create: async (
			endpointName: string,
			request: CreateJobRequest,
			options: CreateJobOptions = {},
		): Promise<Job> => {
			const path = this.jobsPath(endpointName);
			const body = parseOrThrow(createJobRequestSchema, request, 'job');
			const metadata = body.metadata ?? {};
			const canTag =
				!options.repeatWhenUnknown && Object.keys(metadata).length < LIMITS.metadataMaxProperties;
			const requestId = canTag
				? typeof metadata[REQUEST_ID_METADATA_KEY] === 'string'
					? String(metadata[REQUEST_ID_METADATA_KEY])
					: randomUUID()
				: undefined;
			const tagged = requestId
				? { ...body, metadata: { ...metadata, [REQUEST_ID_METADATA_KEY]: requestId } }
				: body;
			const send = () =>
				this.http.json(
					{
						method: 'POST',
						path,
						body: tagged,
						idempotent: options.repeatWhenUnknown === true,
						signal: options.signal,
					},
					jobSchema,
				);
			const since = this.clock.now();
			for (let recovery = 0; ; recovery++) {
				try {
					return await send();
				} catch (error) {
					if (!(error instanceof AmbiguousOutcomeError) || !requestId) throw error;
					const found = await this.findLostCreate(
						endpointName,
						requestId,
						since,
						error.underlying,
						options.signal,
					);
					if (found) return found;
					// Here the service itself answered and no job carries the request id: no job was made,
					// so its own error is the answer, not an unknown outcome.
					if (recovery >= this.http.retry.maxRetries) throw error.underlying;
				}
			}
		},

		get: async (endpointName: string, jobId: string, options: CallOptions = {}): Promise<Job> => {
			const id = parseOrThrow(uuidSchema, jobId, 'job id');
			return this.http.json(
				{
					method: 'GET',
					path: `${this.jobsPath(endpointName)}/${id}`,
					idempotent: true,
					signal: options.signal,
					background: options.background,
				},
				jobSchema,
			);
		},

		cancel: async (
			endpointName: string,
			jobId: string,
			options: CallOptions = {},
		): Promise<void> => {
			const id = parseOrThrow(uuidSchema, jobId, 'job id');
			return this.http.empty({
				method: 'DELETE',
				path: `${this.jobsPath(endpointName)}/${id}`,
				idempotent: true,
				signal: options.signal,
			});
		},

		list: async (
			endpointName: string,
			query: PageQuery = {},
			options: CallOptions = {},
		): Promise<JobPage> => {
			const page = parseOrThrow(pageQuerySchema, query);
			return this.http.json(
				{
					method: 'GET',
					path: this.jobsPath(endpointName),
					query: page,
					idempotent: true,
					signal: options.signal,
					background: options.background,
				},
				jobPageSchema,
			);
		},

		/**
		 * Every job of an endpoint in the service's order (newest first), fetching pages as the caller
		 * iterates: leave the loop once the jobs are old enough and no further page is read.
		 */
		listAll: (endpointName: string, options: PagingOptions = {}): AsyncIterable<Job> => {
			this.jobsPath(endpointName);
			return paginate(
				(query, callOptions) => this.jobs.list(endpointName, query, callOptions),
				options,
			);
		},

		/** Resolves with the job in its final state, whichever it is; see `requireSucceeded`. */
		wait: async (endpointName: string, jobId: string, options: WaitOptions = {}): Promise<Job> => {
			const id = parseOrThrow(uuidSchema, jobId, 'job id');
			this.jobsPath(endpointName);
			return waitForJob(
				() => this.jobs.get(endpointName, id, { signal: options.signal }),
				this.clock,
				id,
				options,
			);
		},

		createAndWait: async (
			endpointName: string,
			request: CreateJobRequest,
			options: CreateAndWaitOptions = {},
		): Promise<Job> => {
			const { createSignal, onCreated, repeatWhenUnknown, ...waitOptions } = options;
			const job = await this.jobs.create(endpointName, request, {
				signal: 'createSignal' in options ? createSignal : options.signal,
				repeatWhenUnknown,
			});
			onCreated?.(job);
			return this.jobs.wait(endpointName, job.id, {
				initialDelayMs: FIRST_LOOK_AFTER_CREATE_MS,
				...waitOptions,
			});
		},
	};

	readonly endpoints = {
		list: async (
			query: PageQuery = {},
			options: CallOptions = {},
		): Promise<InferenceEndpointPage> => {
			const page = parseOrThrow(pageQuerySchema, query);
			return this.http.json(
				{
					method: 'GET',
					path: `${this.orgPath}/inference-endpoints`,
					query: page,
					idempotent: true,
					signal: options.signal,
				},
				inferenceEndpointPageSchema,
			);
		},

		/** Every endpoint in the catalogue, fetching pages as the caller iterates. */
		listAll: (options: PagingOptions = {}): AsyncIterable<InferenceEndpoint> =>
			paginate(this.endpoints.list, options),

		get: async (endpointName: string, options: CallOptions = {}): Promise<InferenceEndpoint> => {
			const name = parseOrThrow(resourceNameSchema, endpointName, 'endpoint name');
			return this.http.json(
				{
					method: 'GET',
					path: `${this.orgPath}/inference-endpoints/${pathPart(name)}`,
					idempotent: true,
					signal: options.signal,
				},
				inferenceEndpointSchema,
			);
		},
	};

	readonly queues = {
		create: async (
			projectName: string,
			request: CreateQueueRequest,
			options: CallOptions = {},
		): Promise<Queue> => {
			const project = parseOrThrow(resourceNameSchema, projectName, 'project name');
			const body = parseOrThrow(createQueueRequestSchema, request, 'queue');
			return this.http.json(
				{
					method: 'POST',
					path: `${this.orgPath}/projects/${pathPart(project)}/queues`,
					body,
					idempotent: false,
					signal: options.signal,
				},
				queueSchema,
			);
		},
	};

	readonly webhookSecret = {
		/** The organization's base64 secret that signs job-completion webhooks. */
		get: async (options: CallOptions = {}): Promise<string> => {
			const reply = await this.http.json(
				{
					method: 'GET',
					path: `${this.orgPath}/webhook-secret-key`,
					idempotent: true,
					signal: options.signal,
				},
				webhookSecretKeySchema,
			);
			return reply.secret_key;
		},
	};

	/**
	 * The job a create whose reply was lost made; undefined only when it is known to have made none
	 * (the service answered and the look-up finds nothing). Otherwise the job may still appear, so it
	 * is looked for again for a while; when it never shows, the outcome stays unknown.
	 */
	private async findLostCreate(
		endpointName: string,
		requestId: string,
		sentAt: number,
		failure: GpuCloudError,
		signal?: AbortSignal,
	): Promise<Job | undefined> {
		const conclusive = serviceFinishedWithoutJob(failure);
		for (const pause of conclusive ? [0] : [0, ...LOOK_AGAIN_AFTER_MS]) {
			let found: Job | undefined;
			try {
				if (pause > 0) await this.clock.sleep(pause, signal);
				found = await this.findJobByRequestId(endpointName, requestId, sentAt, signal);
			} catch {
				// The look-up failed or was aborted: whether the job exists is still unknown.
				throw new CreateOutcomeUnknownError(failure, requestId);
			}
			if (found) return found;
		}
		if (conclusive) return undefined;
		throw new CreateOutcomeUnknownError(failure, requestId);
	}

	/**
	 * Looks for the job a lost create made, newest jobs first, until the pages reach jobs created
	 * well before the create was sent. Anyone with the key can copy a job's metadata, request id
	 * included, onto a later job of their own, so of the jobs carrying the id the oldest is the one
	 * the create made. The listing order is read from the first page rather than assumed.
	 */
	private async findJobByRequestId(
		endpointName: string,
		requestId: string,
		sentAt: number,
		signal?: AbortSignal,
	): Promise<Job | undefined> {
		const pageSize = LIMITS.pageSizeMax;
		const time = (job: Job) => Date.parse(job.create_time);
		const carriesId = (job: Job) => job.metadata?.[REQUEST_ID_METADATA_KEY] === requestId;
		const oldest = (jobs: Job[]) =>
			jobs.reduce<Job | undefined>(
				(found, job) => (found && time(found) <= time(job) ? found : job),
				undefined,
			);
		const first = await this.jobs.list(endpointName, { page: 1, page_size: pageSize }, { signal });
		const matches = first.items.filter(carriesId);
		if (first.total_size <= first.items.length || first.items.length < 2) return oldest(matches);
		const newestFirst = time(first.items[0]) >= time(first.items[first.items.length - 1]);
		const pages = Math.ceil(first.total_size / pageSize);
		const olderThanCreate = (job: Job) => time(job) < sentAt - CLOCK_SKEW_ALLOWANCE_MS;
		for (let step = 1; step < Math.min(pages, MAX_LOOKUP_PAGES); step++) {
			const page = newestFirst ? 1 + step : pages - step;
			const listed = await this.jobs.list(endpointName, { page, page_size: pageSize }, { signal });
			matches.push(...listed.items.filter(carriesId));
			if (listed.items.every(olderThanCreate)) break;
		}
		return oldest(matches);
	}
}
