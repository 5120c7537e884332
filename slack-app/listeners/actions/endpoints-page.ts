import type {
	AllMiddlewareArgs,
	BlockAction,
	ButtonAction,
	SlackActionMiddlewareArgs,
} from '@slack/bolt';
import { decodeValue, endpointsPageValueSchema } from '../../messages/actions';
import type { AppServices } from '../../features';
import { readClick } from './button';

/** Previous / Next under the catalogue: replaces the private list with the other page. */
export function endpointsPage(services: AppServices) {
	return async ({
		ack,
		body,
		action,
		respond,
	}: SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs): Promise<void> => {
		await ack();
		const click = readClick(body, action);
		const page = decodeValue(endpointsPageValueSchema, click.value);
		if (!page || !click.channel) return;
		const reply = await services.router.endpointsPage(
			{ user: click.user, channel: click.channel },
			page.page,
			page.search,
		);
		if (reply)
			await respond({
				response_type: 'ephemeral',
				replace_original: true,
				text: reply.text,
				blocks: reply.blocks,
			});
	};
}
