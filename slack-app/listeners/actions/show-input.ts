import type {
	AllMiddlewareArgs,
	BlockAction,
	ButtonAction,
	SlackActionMiddlewareArgs,
} from '@slack/bolt';
import { decodeValue, imageRequestSchema, jobRefSchema } from '../../messages/actions';
import { inputMessage } from '../../messages/status';
import type { AppServices } from '../../features';
import { ephemeral } from '../ephemeral';
import { readClick } from './button';

/** Show input: a job's input from the service, or an image request from the button itself. */
export function showInput(services: AppServices) {
	return async ({
		ack,
		body,
		action,
		respond,
	}: SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs): Promise<void> => {
		await ack();
		const click = readClick(body, action);
		if (!click.channel) return;
		const job = decodeValue(jobRefSchema, click.value);
		if (job) {
			const reply = await services.jobs.showInput(
				{ user: click.user, channel: click.channel },
				job,
			);
			if (reply) await respond(ephemeral(reply));
			return;
		}
		const image = decodeValue(imageRequestSchema, click.value);
		if (image) await respond(ephemeral(inputMessage('Image request', image)));
	};
}
