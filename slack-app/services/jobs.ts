import { randomUUID } from 'node:crypto';
import type { Logger } from '@slack/bolt';
import type { ManagementClient } from '../../shared/client';
import type { Clock } from '../../shared/clock';
import { NotFoundError } from '../../shared/errors';
import { isTerminalStatus, TRANSCRIPTION_ENDPOINT, type Job, type TranscriptionInput } from '../../shared/schemas';
import type { JobRef } from '../messages/actions';
import { deniedMessage, noticeMessage, notOwnerMessage, serviceErrorMessage, usageErrorMessage } from '../messages/errors';
import { parentMessage, type RequestSubject } from '../messages/parent';
import { errorParts } from '../messages/results';
import { inputMessage, jobStatusMessage } from '../messages/status';
import type { AccessPolicy } from './access';
import { inputProblem, type Catalogue } from './catalogue';
import { COMMAND } from './command-parser';
import { describeError, errorSummary } from './errors';
import { userMetadataProblem, type JobKind, type JobOrigin, type JobOriginSeal } from './job-metadata';
import type { JobTracker } from './job-tracker';
import type { PrivateReply, RequestContext } from './outcome';
import { cannotPostMessage } from './slack-errors';
import type { SlackThreads } from './slack-thread';
import type { StateStore } from './state-store';

export interface JobServiceOptions {
  management: ManagementClient;
  catalogue: Catalogue;
  tracker: JobTracker;
  threads: SlackThreads;
  access: AccessPolicy;
  state: StateStore;
  clock: Clock;
  logger: Logger;
  seal: JobOriginSeal;
  /** Set when the service can reach the app: jobs then report completion there. */
  webhookUrl?: string;
}

/** Jobs on inference endpoints (including transcriptions): create, look up, cancel. */
export class JobService {
  constructor(private readonly options: JobServiceOptions) {}

  private denied(context: RequestContext): PrivateReply {
    const denial = this.options.access.check(context.user, context.channel);
    return denial ? deniedMessage(denial.reason, denial.hint, this.options.access.settings.contact) : undefined;
  }

  /** `/gpu job <endpoint> <json>` and the job form: checks, then parent message, then the job. */
  async run(context: RequestContext, endpoint: string, input: unknown, userMetadata?: Record<string, unknown>): Promise<PrivateReply> {
    const denied = this.denied(context);
    if (denied) return denied;
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
    if (!found) return usageErrorMessage(COMMAND, `There is no endpoint "${endpoint}" in the catalogue. \`${COMMAND} endpoints\` lists them.`, 'job');
    const problem = inputProblem(found, input);
    if (problem) return usageErrorMessage(COMMAND, problem, 'job');
    return this.start(context, 'job', endpoint, input, { kind: 'job', endpoint }, userMetadata);
  }

  transcribe(context: RequestContext, input: TranscriptionInput): Promise<PrivateReply> {
    const denied = this.denied(context);
    if (denied) return Promise.resolve(denied);
    return this.start(context, 'transcribe', TRANSCRIPTION_ENDPOINT, input, { kind: 'transcribe', url: input.url });
  }

  private async start(
    context: RequestContext,
    kind: JobKind,
    endpoint: string,
    input: unknown,
    subject: RequestSubject,
    userMetadata: Record<string, unknown> = {},
  ): Promise<PrivateReply> {
    const { access, threads, management, tracker, state, logger, seal } = this.options;
    const reservation = randomUUID();
    const full = access.acquire(context.user, reservation);
    if (full) return deniedMessage(full.reason, full.hint, access.settings.contact);

    let threadTs: string;
    try {
      threadTs = await threads.postParent(context.channel, parentMessage({ user: context.user, subject, state: 'pending' }), { kind, user: context.user });
    } catch (error) {
      access.release(context.user, reservation);
      const message = cannotPostMessage(error);
      if (message) return message;
      throw error;
    }

    const origin: JobOrigin = { team: seal.team, thread: { channel: context.channel, threadTs }, user: context.user, kind };
    let job: Job;
    try {
      job = await management.jobs.create(endpoint, {
        input,
        metadata: { ...userMetadata, ...seal.metadata(origin, reservation) },
        ...(this.options.webhookUrl ? { webhook_url: this.options.webhookUrl } : {}),
      });
    } catch (error) {
      access.release(context.user, reservation);
      logger.warn(`Creating a job on ${endpoint} failed: ${errorSummary(error)}`);
      const detail = describeError(error);
      await threads.update(context.channel, threadTs, parentMessage({ user: context.user, subject, state: 'failed', note: detail }));
      await threads.postParts(origin.thread, errorParts(reservation, 'Creating the job', detail));
      return undefined;
    }
    access.rename(context.user, reservation, job.id);
    await state.addEndpoint(endpoint).catch((error: unknown) => logger.warn(`Could not save the state file: ${errorSummary(error)}`));
    tracker.watch(job, origin);
    return undefined;
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
    return usageErrorMessage(COMMAND, `No job ${jobId} was found on the endpoints this app uses (${this.options.tracker.knownEndpoints().join(', ')}).`, subcommand);
  }

  async status(context: RequestContext, jobId: string): Promise<PrivateReply> {
    const denied = this.denied(context);
    if (denied) return denied;
    try {
      const job = await this.find(jobId);
      return job ? jobStatusMessage(job, this.options.clock.now()) : this.notFound(jobId, 'status');
    } catch (error) {
      return serviceErrorMessage('Reading the job', describeError(error));
    }
  }

  /** `/gpu cancel <id>` and the Cancel button. Only the person who started a job may cancel it. */
  async cancel(context: RequestContext, jobId: string, endpoint?: string): Promise<PrivateReply> {
    const denied = this.denied(context);
    if (denied) return denied;
    const { management, tracker, seal } = this.options;
    try {
      const job = endpoint ? await management.jobs.get(endpoint, jobId) : await this.find(jobId);
      if (!job) return this.notFound(jobId, 'cancel');
      const origin = seal.origin(job);
      if (!origin) return noticeMessage(`Job ${jobId} was not started from Slack; cancel it where it was started.`);
      if (origin.user !== context.user) return notOwnerMessage(origin.user, jobId);
      if (isTerminalStatus(job.status)) return noticeMessage(`Job ${jobId} has already ${job.status === 'cancelled' ? 'been cancelled' : job.status}.`);
      tracker.noteCancelledBy(jobId, context.user);
      await management.jobs.cancel(job.inference_endpoint_name, jobId);
      return noticeMessage(`Cancelling job ${jobId}; its thread will show when it has stopped.`);
    } catch (error) {
      return serviceErrorMessage('Cancelling the job', describeError(error));
    }
  }

  async showInput(context: RequestContext, ref: JobRef): Promise<PrivateReply> {
    const denied = this.denied(context);
    if (denied) return denied;
    try {
      const job = await this.options.management.jobs.get(ref.endpoint, ref.jobId);
      return inputMessage(`Input of job ${job.id}`, job.input);
    } catch (error) {
      return serviceErrorMessage('Reading the job', describeError(error));
    }
  }
}
