import type { webApi } from '@slack/bolt';
import { serviceErrorMessage } from '../messages/errors';
import { endpointsPageMessage } from '../messages/endpoints';
import { helpMessage } from '../messages/help';
import type { AccessPolicy } from '../requests/access';
import type { Catalogue } from './catalogue';
import type { ChatService } from './chat';
import { COMMAND, type GpuCommand } from './command-parser';
import { describeError } from '../slack/errors';
import type { ImageService } from './images';
import type { JobForm } from './job-form';
import type { JobService } from './jobs';
import type { PrivateReply, RequestContext } from '../requests/outcome';
import type { QueueService } from './queues';

type WebClient = webApi.WebClient;

export interface CommandServices {
	access: AccessPolicy;
	catalogue: Catalogue;
	jobs: JobService;
	jobForm: JobForm;
	queues: QueueService;
	images: ImageService;
	chat: ChatService;
}

/** Sends a parsed `/gpu` command to the service that does it. */
export class CommandRouter {
	constructor(private readonly services: CommandServices) {}

	async endpointsPage(
		context: RequestContext,
		page: number,
		search?: string,
	): Promise<PrivateReply> {
		const { access, catalogue } = this.services;
		const refusal = access.refusal(context.user, context.channel);
		if (refusal) return refusal;
		try {
			return endpointsPageMessage(COMMAND, await catalogue.all(), page, search);
		} catch (error) {
			return serviceErrorMessage('Reading the catalogue', describeError(error));
		}
	}

	async handle(
		context: RequestContext,
		command: GpuCommand,
		interaction: { client: WebClient; triggerId: string },
	): Promise<PrivateReply> {
		const { access, jobs, jobForm, queues, images, chat } = this.services;
		switch (command.kind) {
			case 'help':
				return helpMessage(COMMAND);
			case 'endpoints':
				return this.endpointsPage(context, 1, command.search);
			case 'job':
				return jobs.run(context, command.endpoint, command.input);
			case 'job-form': {
				const refusal = access.refusal(context.user, context.channel);
				if (refusal) return refusal;
				await jobForm.open(interaction.client, interaction.triggerId, {
					channel: context.channel,
					...(command.endpoint ? { endpoint: command.endpoint } : {}),
				});
				return undefined;
			}
			case 'transcribe':
				return jobs.transcribe(context, command.input);
			case 'status':
				return jobs.status(context, command.jobId);
			case 'cancel':
				return jobs.cancel(context, command.jobId);
			case 'queue':
				return queues.create(context, command.request);
			case 'image':
				return images.generate(context, command.request);
			case 'chat':
				return chat.ask(context, command.message);
		}
	}
}
