import type { ManagementClient } from '../../shared/client';
import type { CreateQueueRequest } from '../../shared/schemas';
import { noticeMessage } from '../messages/errors';
import { queueCreatedParts } from '../messages/results';
import type { RequestLifecycle } from '../requests/lifecycle';
import type { PrivateReply, RequestContext } from '../requests/outcome';

export interface QueueServiceOptions {
	management: ManagementClient;
	lifecycle: RequestLifecycle;
	project?: string;
}

/** `/gpu queue <name>`: creates a queue in the configured project. */
export class QueueService {
	constructor(private readonly options: QueueServiceOptions) {}

	async create(context: RequestContext, request: CreateQueueRequest): Promise<PrivateReply> {
		const { management, lifecycle, project } = this.options;
		if (!project)
			return lifecycle.refuse(
				context,
				noticeMessage(
					'Creating queues is off: the app has no project configured (GPU_CLOUD_PROJECT).',
				),
			);
		return lifecycle.start({
			context,
			kind: 'queue',
			// A queue costs no GPU time.
			usesSlot: false,
			place: {
				kind: 'new',
				parent: {
					user: context.user,
					subject: { kind: 'queue', name: request.name, project },
					state: 'running',
				},
			},
			failure: 'Creating the queue',
			work: async ({ ref }) => {
				const queue = await management.queues.create(project, request);
				return { state: 'succeeded', parts: queueCreatedParts(ref, queue, project) };
			},
		});
	}
}
