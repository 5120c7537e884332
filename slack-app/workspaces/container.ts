import type { Logger, webApi } from '@slack/bolt';
import type { ManagementClient, WorkloadClient } from '../../shared/client';
import type { Clock } from '../../shared/clock';
import type { Job } from '../../shared/schemas';
import type { AppConfig } from '../config';
import { AccessPolicy } from '../requests/access';
import { AnswerWriter } from '../features/answer-stream';
import { AgentConversations } from '../features/agent-conversations';
import { AgentSessions } from '../slack/agent-sessions';
import { WorkflowSteps } from '../slack/workflow-steps';
import { Catalogue } from '../features/catalogue';
import { ChatService } from '../features/chat';
import { CommandRouter } from '../features/commands';
import { HomeTab } from '../features/home';
import { ImageService } from '../features/images';
import { JobForm } from '../features/job-form';
import { JobOriginSeal, JobOrigins } from '../state/job-metadata';
import { JobTracker, type JobTrackerOptions } from '../requests/job-tracker';
import { JobService } from '../features/jobs';
import { FileTranscription } from '../features/file-transcription';
import type { FileRoute, FileSource } from '../requests/file-links';
import { isTerminalStatus } from '../../shared/schemas';
import { RequestLifecycle } from '../requests/lifecycle';
import { DeliveryRecord } from '../requests/delivery-record';
import { QueueService } from '../features/queues';
import type { SharedState } from '../state/shared-state';
import { SlackThreads } from '../slack/slack-thread';
import type { StateFile } from '../state/state-file';
import type { AppServices } from '../features';

export interface ContainerOptions {
	config: AppConfig;
	client: webApi.WebClient;
	identity: { team: string; botUserId: string };
	management: ManagementClient;
	images?: WorkloadClient;
	chat?: WorkloadClient;
	state: StateFile;
	clock: Clock;
	logger: Logger;
	/** Parent edits of a streamed answer are throttled to this; Slack allows about one per second. */
	streamIntervalMs?: number;
	statusRefreshMs?: number;
	/** What replicas agree on (slots, deliveries, followed jobs...): Redis, or this process alone. */
	shared: SharedState;
	/** Installed in several workspaces: whether `team` shares its jobs with this workspace. */
	sharesJobs?: (team: string) => Promise<boolean>;
	/** Told each phase a job of this workspace enters (metrics). */
	onJobPhase?: JobTrackerOptions['onPhase'];
	/** How files shared in Slack reach GPU Cloud, when the app has a way. */
	fileLinks?: FileRoute;
}

export interface Container {
	/** The workspace these services act in. */
	team: string;
	services: AppServices;
	/** Every /gpu request runs through it; `drain()` for a graceful shutdown. */
	lifecycle: RequestLifecycle;
	tracker: JobTracker;
	/** Which jobs this workspace's app created: sealed, and recorded when created. */
	origins: JobOrigins;
	/** What serving this workspace's shared files needs: its bot token, and whether a job ended. */
	fileSource: FileSource;
}

/** Builds every service once, wired to each other; the listeners see only `services`. */
export function createContainer(options: ContainerOptions): Container {
	const { config, client, identity, management, state, clock, logger, shared } = options;
	const botUserId = () => identity.botUserId;
	const access = new AccessPolicy(config.access, shared);
	const home = new HomeTab({
		client,
		access,
		settings: { organization: config.service.organization, project: config.service.project },
		logger,
	});
	const threads = new SlackThreads(client, botUserId, clock, home);
	const catalogue = new Catalogue(management, clock);
	const origins = new JobOrigins(
		new JobOriginSeal(config.appSecret, identity.team, (message) => logger.warn(message)),
		shared,
	);
	/** Another workspace's job, checked as that workspace's app checks its own, when it shares its jobs. */
	const sharedOrigin = (sharesJobs: (team: string) => Promise<boolean>) => async (job: Job) => {
		const team = job.metadata?.slack_team;
		if (typeof team !== 'string' || team === identity.team || !(await sharesJobs(team)))
			return undefined;
		const seal = new JobOriginSeal(config.appSecret, team, () => undefined);
		return new JobOrigins(seal, shared).origin(job);
	};
	const webhookUrl = config.publicUrl ? `${config.publicUrl}${config.webhookPath}` : undefined;
	const deliveries = new DeliveryRecord(threads, state, clock, shared);
	const sessions = new AgentSessions(client, logger);
	const lifecycle = new RequestLifecycle({
		team: identity.team,
		access,
		threads,
		state: shared,
		deliveries,
		clock,
		logger,
		sessions,
	});
	const tracker = new JobTracker({
		management,
		threads,
		state,
		deliveries,
		clock,
		logger,
		origins,
		webhooks: webhookUrl !== undefined,
		pollIntervalMs: config.pollIntervalMs,
		statusRefreshMs: options.statusRefreshMs,
		resumeWindowHours: config.resumeWindowHours,
		leases: shared,
		onPhase: options.onJobPhase,
		sessions,
		steps: new WorkflowSteps(client, logger),
	});
	const jobs = new JobService({
		management,
		catalogue,
		tracker,
		lifecycle,
		access,
		state,
		clock,
		logger,
		origins,
		leases: shared,
		sharedOrigin: options.sharesJobs && sharedOrigin(options.sharesJobs),
		webhookUrl,
	});
	const queues = new QueueService({ management, lifecycle, project: config.service.project });
	const images = new ImageService({
		workload: options.images,
		workflow: config.service.imageWorkflow,
		lifecycle,
		deliveries,
		threads,
	});
	const writer = new AnswerWriter({
		client,
		threads,
		clock,
		logger,
		nativeStreaming: config.slack.nativeStreaming,
		intervalMs: options.streamIntervalMs,
	});
	const chat = new ChatService({
		workload: options.chat,
		model: config.service.chatModel,
		clock,
		writer,
		lifecycle,
		threads,
		records: shared,
		team: identity.team,
		botUserId,
		claims: shared,
	});
	const conversations = new AgentConversations({
		client,
		threads,
		chat,
		jobs,
		sessions,
		deliveries,
		team: identity.team,
		claims: shared,
		botUserId,
		logger,
	});
	const files = new FileTranscription({
		client,
		jobs,
		lifecycle,
		team: identity.team,
		links: options.fileLinks,
	});
	const jobForm = new JobForm(catalogue, logger, files);
	const router = new CommandRouter({ access, catalogue, jobs, jobForm, queues, images, chat });
	return {
		team: identity.team,
		services: { router, jobs, jobForm, images, chat, conversations, access, home, logger, files },
		lifecycle,
		tracker,
		origins,
		fileSource: {
			botToken: () => client.token,
			jobEnded: async (job) =>
				isTerminalStatus((await management.jobs.get(job.endpoint, job.id)).status),
		},
	};
}
