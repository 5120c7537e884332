import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import type { AppServices } from '../../features';

/** The person opened the app's Home tab (publish it) or its Messages tab (suggest prompts there). */
export function appHomeOpened(services: AppServices) {
	return async ({
		event,
	}: SlackEventMiddlewareArgs<'app_home_opened'> & AllMiddlewareArgs): Promise<void> => {
		if (event.tab === 'messages') await services.conversations.messagesOpened(event.channel);
		else if (event.tab === 'home') await services.home.opened(event.user);
	};
}
