import type {
	AllMiddlewareArgs,
	BlockAction,
	ButtonAction,
	SlackActionMiddlewareArgs,
} from '@slack/bolt';
import { decodeValue, jobRefSchema } from '../../messages/actions';
import type { AppServices } from '../../features';
import { ephemeral } from '../ephemeral';
import { readClick } from './button';

/** Cancel under a running job's parent. */
export function cancelJob(services: AppServices) {
	return async ({
		ack,
		body,
		action,
		respond,
	}: SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs): Promise<void> => {
		await ack();
		const click = readClick(body, action);
		const ref = decodeValue(jobRefSchema, click.value);
		if (!ref || !click.channel) return;
		const reply = await services.jobs.cancel(
			{ user: click.user, channel: click.channel },
			ref.jobId,
			ref.endpoint,
		);
		if (reply) await respond(ephemeral(reply));
	};
}
