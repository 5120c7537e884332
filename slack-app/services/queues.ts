import { randomUUID } from 'node:crypto';
import type { Logger } from '@slack/bolt';
import type { ManagementClient } from '../../shared/client';
import type { Clock } from '../../shared/clock';
import type { CreateQueueRequest } from '../../shared/schemas';
import { deniedMessage, noticeMessage } from '../messages/errors';
import { parentMessage, type ParentView } from '../messages/parent';
import { errorParts, queueCreatedParts } from '../messages/results';
import type { AccessPolicy } from './access';
import { describeError, errorSummary } from './errors';
import type { PrivateReply, RequestContext } from './outcome';
import { cannotPostMessage } from './slack-errors';
import type { SlackThreads } from './slack-thread';

export interface QueueServiceOptions {
  management: ManagementClient;
  threads: SlackThreads;
  access: AccessPolicy;
  clock: Clock;
  logger: Logger;
  project?: string;
}

/** `/gpu queue <name>`: creates a queue in the configured project. */
export class QueueService {
  constructor(private readonly options: QueueServiceOptions) {}

  async create(context: RequestContext, request: CreateQueueRequest): Promise<PrivateReply> {
    const { access, threads, management, clock, logger, project } = this.options;
    const denial = access.check(context.user, context.channel);
    if (denial) return deniedMessage(denial.reason, denial.hint, access.settings.contact);
    if (!project) return noticeMessage('Creating queues is off: the app has no project configured (GPU_CLOUD_PROJECT).');

    const view: ParentView = { user: context.user, subject: { kind: 'queue', name: request.name, project }, state: 'running' };
    const started = clock.now();
    let threadTs: string;
    try {
      threadTs = await threads.postParent(context.channel, parentMessage(view), { kind: 'queue', user: context.user });
    } catch (error) {
      const message = cannotPostMessage(error);
      if (message) return message;
      throw error;
    }
    const thread = { channel: context.channel, threadTs };
    const ref = randomUUID();
    try {
      const queue = await management.queues.create(project, request);
      await threads.postParts(thread, queueCreatedParts(ref, queue, project));
      await threads.update(context.channel, threadTs, parentMessage({ ...view, state: 'succeeded', elapsedMs: clock.now() - started }));
    } catch (error) {
      logger.warn(`Creating queue ${request.name} failed: ${errorSummary(error)}`);
      const detail = describeError(error);
      await threads.postParts(thread, errorParts(ref, 'Creating the queue', detail));
      await threads.update(context.channel, threadTs, parentMessage({ ...view, state: 'failed', elapsedMs: clock.now() - started, note: detail }));
    }
    return undefined;
  }
}
