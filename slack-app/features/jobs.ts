import type { Logger } from '@slack/bolt';
import type { ManagementClient } from '../../shared/client';
import type { Clock } from '../../shared/clock';
import {
	AuthenticationError,
	BadRequestError,
	NotFoundError,
	PermissionError,
	RateLimitError,
	ValidationError,
} from '../../shared/errors';
import {
	isTerminalStatus,
	TRANSCRIPTION_ENDPOINT,
	type Job,
	type TranscriptionInput,
} from '../../shared/schemas';
import type { JobRef } from '../messages/actions';
import type { ThreadRef } from '../model';
import {
	noticeMessage,
	notOwnerMessage,
	serviceErrorMessage,
	usageErrorMessage,
} from '../messages/errors';
import { hideFileLinks, transcriptionSubject, type RequestSubject } from '../messages/parent';
import { inputMessage, jobStatusMessage } from '../messages/status';
import type { AccessPolicy } from '../requests/access';
import { inputProblem, type Catalogue } from './catalogue';
import { COMMAND } from './command-parser';
import { describeError, errorSummary } from '../slack/errors';
import {
	requestIdOf,
	userMetadataProblem,
	type JobKind,
	type JobOrigin,
	type JobOrigins,
	type UnfinishedRequest,
} from '../state/job-metadata';
import type { JobTracker } from '../requests/job-tracker';
import {
	FOLLOWED,
	type ActiveRequest,
	type Ending,
	type RequestLifecycle,
} from '../requests/lifecycle';
import type { PrivateReply, RequestContext } from '../requests/outcome';
import { createLease, followLease } from '../requests/restart-discovery';
import type { SharedState } from '../state/shared-state';
import type { StateFile } from '../state/state-file';

/** Pages of an endpoint's jobs read at most to find a request whose create reply was lost (newest first, 100 a page). */
const RESUME_LIST_MAX_PAGES = 10;

/** The service answered the create with a refusal: no job was made (a timeout or a 5xx may have made one). */
function isRefusal(error: unknown): boolean {
	return [
		ValidationError,
		BadRequestError,
		AuthenticationError,
		PermissionError,
		NotFoundError,
		RateLimitError,
	].some((refusal) => error instanceof refusal);
}

export interface JobServiceOptions {
	management: ManagementClient;
	catalogue: Catalogue;
	tracker: JobTracker;
	lifecycle: RequestLifecycle;
	access: AccessPolicy;
	state: StateFile;
	clock: Clock;
	logger: Logger;
	origins: JobOrigins;
	/**
	 * Who creates or follows what, seen by every replica (one process: always its own): a request
	 * another replica is creating, or a job it follows, is left to it without asking the service.
	 */
	leases: Pick<SharedState, 'lease' | 'releaseLease'>;
	/** The origin of a job another workspace created and shares with this one (same organization, its admin said so). */
	sharedOrigin?: (job: Job) => Promise<JobOrigin | undefined>;
	/** Set when the service can reach the app: jobs then report completion there. */
	webhookUrl?: string;
}

/** What a job request asks for, once parsed. */
interface JobRequest {
	kind: JobKind;
	endpoint: string;
	input: unknown;
	subject: RequestSubject;
	userMetadata?: Record<string, unknown>;
	/** The endpoint and input checks, before anything is posted. */
	checks?: () => Promise<PrivateReply>;
	/** A Workflow Builder step run: its function execution id, completed when the job ends. */
	step?: string;
	/** Makes the input just before the job is created (a file's link), and hears of the job and its end. */
	prepare?: () => Promise<PreparedInput>;
	/** The thread the parent goes into as a reply (a shared file's); a new parent in the channel otherwise. */
	thread?: ThreadRef;
}

/** An input made for one job: told the job once created, and its end (or that none was created). */
export interface PreparedInput {
	input: unknown;
	created(job: Job): Promise<void>;
	ended(): Promise<void>;
}

/** Jobs on inference endpoints (including transcriptions): create, look up, cancel. */
export class JobService {
	/** Requests whose create is under way in this process: not looked for by a resume here. */
	private readonly creating = new Set<string>();

	constructor(private readonly options: JobServiceOptions) {}

	/**
	 * `/gpu job <endpoint> <json>`, the job form and the workflow step: the input is checked against
	 * the endpoint before anything is posted.
	 */
	run(
		context: RequestContext,
		endpoint: string,
		input: unknown,
		{
			userMetadata,
			step,
			prepare,
		}: {
			userMetadata?: Record<string, unknown>;
			step?: string;
			/** Makes the input just before the job is created (the links of files attached in the form). */
			prepare?: () => Promise<PreparedInput>;
		} = {},
	): Promise<PrivateReply> {
		const checks = async (): Promise<PrivateReply> => {
			if (userMetadata !== undefined) {
				const problem = userMetadataProblem(userMetadata);
				if (problem) return usageErrorMessage(COMMAND, problem, 'job');
			}
			let found;
			try {
				found = await this.options.catalogue.find(endpoint);
			} catch (error) {
				return serviceErrorMessage('Checking the endpoint', describeError(error));
			}
			if (!found)
				return usageErrorMessage(
					COMMAND,
					`There is no endpoint "${endpoint}" in the catalogue. \`${COMMAND} endpoints\` lists them.`,
					'job',
				);
			const problem = inputProblem(found, input);
			return problem ? usageErrorMessage(COMMAND, problem, 'job') : undefined;
		};
		return this.start(context, {
			kind: 'job',
			endpoint,
			input,
			subject: { kind: 'job', endpoint },
			userMetadata,
			checks,
			step,
			prepare,
		});
	}

	transcribe(context: RequestContext, input: TranscriptionInput): Promise<PrivateReply> {
		return this.start(context, {
			kind: 'transcribe',
			endpoint: TRANSCRIPTION_ENDPOINT,
			input,
			subject: transcriptionSubject(input.url),
		});
	}

	/**
	 * A transcription of a file whose URL exists for that job only (a file shared in Slack, served by
	 * the app): `prepare` makes it when the job is about to be created; the checks ran before.
	 */
	transcribePrepared(
		context: RequestContext,
		request: {
			subject: RequestSubject;
			prepare: () => Promise<PreparedInput>;
			thread?: ThreadRef;
			step?: string;
		},
	): Promise<PrivateReply> {
		return this.start(context, {
			kind: 'transcribe',
			endpoint: TRANSCRIPTION_ENDPOINT,
			input: undefined,
			...request,
		});
	}

	/** A job still running that this process takes up: it holds its owner's slot again and is followed. */
	private adoptRunning(job: Job, origin: JobOrigin): void {
		this.options.lifecycle.adopt({
			ref: job.id,
			user: origin.user,
			kind: origin.kind,
			thread: origin.thread,
			startedAt: Date.parse(job.create_time),
			remembered: false,
			work: (request) => this.follow(request, job, origin),
		});
	}

	/**
	 * After a restart, or when a replica stopped, one recorded request of this workspace left
	 * unfinished: its job is read again (one request to the service), or, when the create's reply
	 * was lost, found in that endpoint's job list; then delivered if it ended, followed if it runs. A
	 * request whose job is gone or was never created is finished. One that a live replica creates or
	 * follows (it holds the lease) costs nothing. Resolves with what became of it.
	 */
	async resumeRequest(
		record: UnfinishedRequest,
	): Promise<'running' | 'ended' | 'held' | 'finished'> {
		const { tracker, leases } = this.options;
		// Followed or being created here already (a second look): nothing to ask the service.
		if (record.job ? tracker.endpointOf(record.job) : this.creating.has(record.request))
			return 'held';
		const lease = record.job ? followLease(record.job) : createLease(record.request);
		if (!(await leases.lease(lease))) return 'held';
		let outcome: 'running' | 'ended' | 'held' | 'finished' = 'held';
		try {
			outcome = await this.resumeRecorded(record);
			return outcome;
		} finally {
			// A running job keeps its follow lease (the tracker renews it); anything else is given back.
			if (!record.job || outcome !== 'running')
				await leases.releaseLease(lease).catch(() => undefined);
		}
	}

	private async resumeRecorded(
		record: UnfinishedRequest,
	): Promise<'running' | 'ended' | 'held' | 'finished'> {
		const { tracker, origins } = this.options;
		const job = await this.recordedJob(record);
		if (!job) {
			await origins.refused(record.request);
			return 'finished';
		}
		const origin = await origins.origin(job, { claim: true });
		if (!origin) return 'held';
		const outcome = await tracker.resumeJob(job);
		if (outcome === 'running') this.adoptRunning(job, origin);
		return outcome;
	}

	/** The recorded request's job as the service has it now; undefined when it does not exist. */
	private async recordedJob(record: UnfinishedRequest): Promise<Job | undefined> {
		const { management, tracker, origins } = this.options;
		// Records of older versions do not say where: every endpoint the app used.
		const endpoints = record.endpoint ? [record.endpoint] : tracker.knownEndpoints();
		for (const endpoint of endpoints) {
			try {
				// In the background of the organization's budget: users' commands go first.
				if (record.job)
					return await management.jobs.get(endpoint, record.job, { background: true });
				// The create's reply was lost: the oldest job of that endpoint carrying the request's seal.
				let found: Job | undefined;
				for await (const job of management.jobs.listAll(endpoint, {
					maxPages: RESUME_LIST_MAX_PAGES,
					background: true,
				}))
					if (origins.seal.origin(job) && requestIdOf(job) === record.request) found = job;
				if (found) return found;
			} catch (error) {
				if (!(error instanceof NotFoundError)) throw error;
			}
		}
		return undefined;
	}

	/** Creates the job in the background once its parent is up; the tracker follows it from there. */
	private start(context: RequestContext, request: JobRequest): Promise<PrivateReply> {
		const { management, state, logger, origins, lifecycle, webhookUrl } = this.options;
		const {
			kind,
			endpoint,
			input,
			subject,
			userMetadata = {},
			checks,
			step,
			prepare,
			thread,
		} = request;
		const parent = { user: context.user, subject, state: 'pending' as const };
		return lifecycle.start({
			context,
			kind,
			checks,
			usesSlot: true,
			place: thread ? { kind: 'reply', thread, parent } : { kind: 'new', parent },
			failure: 'Creating the job',
			work: async (request) => {
				const origin: JobOrigin = {
					team: origins.team,
					thread: request.thread,
					user: context.user,
					kind,
					...(step ? { step } : {}),
				};
				const prepared = await prepare?.();
				const job = await this.create(request.ref, async () => {
					const metadata = await origins.metadata(origin, request.ref, endpoint);
					try {
						return await management.jobs.create(endpoint, {
							input: prepared ? prepared.input : input,
							metadata: { ...userMetadata, ...metadata },
							...(webhookUrl ? { webhook_url: webhookUrl } : {}),
						});
					} catch (error) {
						await prepared?.ended();
						// The service answered no: no job exists, and a restart has nothing to look for.
						if (isRefusal(error)) await origins.refused(request.ref).catch(() => undefined);
						throw error;
					}
				});
				await prepared?.created(job);
				await state
					.addEndpoint(endpoint)
					.catch((error: unknown) =>
						logger.warn(`Could not save the state file: ${errorSummary(error)}`),
					);
				const followed = await this.follow(request, job, origin);
				// A job this process stopped following (the app stops) may still read its input after
				// the restart; a link's own time, and the check of its job on each read, end it then.
				if (this.options.tracker.phaseOf(job.id) !== 'abandoned') await prepared?.ended();
				return followed;
			},
		});
	}

	/**
	 * Creates a request's job and records it, holding the request's create lease meanwhile and the
	 * job's follow lease from before its record: another replica's sweep leaves both to this one. Once
	 * this replica died (or the create's outcome stayed unknown), a sweep finds the job in the
	 * endpoint's list.
	 */
	private async create(requestId: string, create: () => Promise<Job>): Promise<Job> {
		const { leases, origins } = this.options;
		const lease = createLease(requestId);
		this.creating.add(requestId);
		try {
			await leases.lease(lease);
			const job = await create();
			// Held before the job is recorded: no sweep takes up a job between its record and its follower.
			await leases.lease(followLease(job.id));
			await origins.created(job);
			return job;
		} finally {
			this.creating.delete(requestId);
			await leases.releaseLease(lease).catch(() => undefined);
		}
	}

	/**
	 * The rest of a job request: the tracker follows the job and delivers its result. The job exists in
	 * the service, so a restart finds it again from its metadata; its owner's slot stays taken until
	 * the job stops using a GPU.
	 */
	private async follow(request: ActiveRequest, job: Job, origin: JobOrigin): Promise<Ending> {
		const followed = this.options.tracker.watch(job, origin);
		request.handedOver();
		await followed;
		return FOLLOWED;
	}

	/** Finds a job by id alone: first among jobs this process follows, then on the endpoints it used. */
	private async find(jobId: string): Promise<Job | undefined> {
		const { tracker, management } = this.options;
		const known = tracker.endpointOf(jobId);
		const endpoints = known ? [known] : tracker.knownEndpoints();
		for (const endpoint of endpoints) {
			try {
				return await management.jobs.get(endpoint, jobId);
			} catch (error) {
				if (!(error instanceof NotFoundError)) throw error;
			}
		}
		return undefined;
	}

	private notFound(jobId: string, subcommand: 'status' | 'cancel'): PrivateReply {
		return usageErrorMessage(
			COMMAND,
			`No job ${jobId} was found on the endpoints this app uses (${this.options.tracker.knownEndpoints().join(', ')}).`,
			subcommand,
		);
	}

	/**
	 * The job when this workspace created it: a job, its input and its output belong to the workspace
	 * whose request created it, even when other workspaces are linked to the same organization. A job
	 * of another workspace, or not created from Slack, is answered as not found: its existence is not
	 * this workspace's business either.
	 */
	private async own(job: Job | undefined): Promise<{ job: Job; origin: JobOrigin } | undefined> {
		const origin = job && (await this.options.origins.origin(job));
		return job && origin ? { job, origin } : undefined;
	}

	/** The job when this workspace may see it: its own, or one another workspace shares with it. */
	private async visible(job: Job | undefined): Promise<Job | undefined> {
		if (!job) return undefined;
		if (await this.own(job)) return job;
		return (await this.options.sharedOrigin?.(job)) ? job : undefined;
	}

	async status(context: RequestContext, jobId: string): Promise<PrivateReply> {
		const denied = this.options.access.refusal(context.user, context.channel);
		if (denied) return denied;
		try {
			const job = await this.visible(await this.find(jobId));
			return job ? jobStatusMessage(job, this.options.clock.now()) : this.notFound(jobId, 'status');
		} catch (error) {
			return serviceErrorMessage('Reading the job', describeError(error));
		}
	}

	/** `/gpu cancel <id>` and the Cancel button. Only the person who started a job may cancel it. */
	async cancel(context: RequestContext, jobId: string, endpoint?: string): Promise<PrivateReply> {
		return (await this.requestCancel(context, jobId, endpoint)).reply;
	}

	/**
	 * Asks the service to cancel the user's own running job; `accepted` when it was asked (the
	 * thread shows the end once the job has stopped).
	 */
	async requestCancel(
		context: RequestContext,
		jobId: string,
		endpoint?: string,
	): Promise<{ accepted: boolean; reply: PrivateReply }> {
		const refused = (reply: PrivateReply) => ({ accepted: false, reply });
		const denied = this.options.access.refusal(context.user, context.channel);
		if (denied) return refused(denied);
		const { management, tracker } = this.options;
		try {
			const found = endpoint ? await this.get(endpoint, jobId) : await this.find(jobId);
			const own = await this.own(found);
			if (!own)
				return refused(
					found && (await this.options.sharedOrigin?.(found))
						? noticeMessage(
								`Job ${jobId} was started in another workspace; only the person who started it can cancel it, there.`,
							)
						: this.notFound(jobId, 'cancel'),
				);
			const { job, origin } = own;
			if (origin.user !== context.user) return refused(notOwnerMessage(origin.user, jobId));
			if (isTerminalStatus(job.status))
				return refused(
					noticeMessage(
						`Job ${jobId} has already ${job.status === 'cancelled' ? 'been cancelled' : job.status}.`,
					),
				);
			tracker.noteCancelledBy(jobId, context.user);
			await management.jobs.cancel(job.inference_endpoint_name, jobId);
			return {
				accepted: true,
				reply: noticeMessage(`Cancelling job ${jobId}; its thread will show when it has stopped.`),
			};
		} catch (error) {
			return refused(serviceErrorMessage('Cancelling the job', describeError(error)));
		}
	}

	async showInput(context: RequestContext, ref: JobRef): Promise<PrivateReply> {
		const denied = this.options.access.refusal(context.user, context.channel);
		if (denied) return denied;
		try {
			const job = await this.visible(await this.get(ref.endpoint, ref.jobId));
			if (!job) return this.notFound(ref.jobId, 'status');
			return inputMessage(`Input of job ${job.id}`, hideFileLinks(job.input));
		} catch (error) {
			return serviceErrorMessage('Reading the job', describeError(error));
		}
	}

	/** One job on a known endpoint; undefined when the service has none by that id. */
	private async get(endpoint: string, jobId: string): Promise<Job | undefined> {
		try {
			return await this.options.management.jobs.get(endpoint, jobId);
		} catch (error) {
			if (error instanceof NotFoundError) return undefined;
			throw error;
		}
	}
}
