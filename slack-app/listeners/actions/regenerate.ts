import type {
	AllMiddlewareArgs,
	BlockAction,
	ButtonAction,
	SlackActionMiddlewareArgs,
} from '@slack/bolt';
import { imageRequestSchema, readValue } from '../../messages/actions';
import { usageErrorMessage } from '../../messages/errors';
import { COMMAND } from '../../features/command-parser';
import type { AppServices } from '../../features';
import { ephemeral } from '../ephemeral';
import { readClick } from './button';

type ButtonArgs = SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs;

/** Regenerate under an image parent: the same request again, into the same thread. */
export function regenerateImage(services: AppServices) {
	return async ({ ack, body, action, respond }: ButtonArgs): Promise<void> => {
		await ack();
		const click = readClick(body, action);
		const request = readValue(imageRequestSchema, click.value);
		if (!request.ok) {
			await respond(
				ephemeral(
					usageErrorMessage(
						COMMAND,
						`This Regenerate button cannot be used: ${request.problem}`,
						'image',
					),
				),
			);
			return;
		}
		if (!click.channel || !click.thread) return;
		const reply = await services.images.generate(
			{ user: click.user, channel: click.channel },
			request.value,
			click.thread,
		);
		if (reply) await respond(ephemeral(reply));
	};
}

/** Regenerate under a chat answer: the conversation up to that answer, answered again. */
export function regenerateChat(services: AppServices) {
	return async ({ ack, body, action, respond }: ButtonArgs): Promise<void> => {
		await ack();
		const click = readClick(body, action);
		if (!click.channel || !click.thread || !click.messageTs) return;
		const reply = await services.chat.regenerate(
			{ user: click.user, channel: click.channel },
			click.thread,
			click.messageTs,
		);
		if (reply) await respond(ephemeral(reply));
	};
}
