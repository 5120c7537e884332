import type { AllMiddlewareArgs, BlockAction, ButtonAction, SlackActionMiddlewareArgs } from '@slack/bolt';
import { decodeValue, imageRequestValueSchema } from '../../messages/actions';
import type { AppServices } from '../../services';
import { ephemeral } from '../ephemeral';
import { readClick } from './button';

type ButtonArgs = SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs;

/** Regenerate under an image parent: the same request again, into the same thread. */
export function regenerateImage(services: AppServices) {
  return async ({ ack, body, action, respond }: ButtonArgs): Promise<void> => {
    await ack();
    const click = readClick(body, action);
    const request = decodeValue(imageRequestValueSchema, click.value);
    if (!request || !click.channel || !click.thread) return;
    const reply = await services.images.generate({ user: click.user, channel: click.channel }, request, click.thread);
    if (reply) await respond(ephemeral(reply));
  };
}

/** Regenerate under a chat answer: the conversation up to that answer, answered again. */
export function regenerateChat(services: AppServices) {
  return async ({ ack, body, action, respond }: ButtonArgs): Promise<void> => {
    await ack();
    const click = readClick(body, action);
    if (!click.channel || !click.thread || !click.messageTs) return;
    const reply = await services.chat.regenerate({ user: click.user, channel: click.channel }, click.thread, click.messageTs);
    if (reply) await respond(ephemeral(reply));
  };
}
