import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import type { AppServices } from '../../features';

/** The person opened the app's Home tab: publish it (the Messages and About tabs need nothing). */
export function appHomeOpened(services: AppServices) {
	return async ({
		event,
	}: SlackEventMiddlewareArgs<'app_home_opened'> & AllMiddlewareArgs): Promise<void> => {
		if (event.tab !== 'home') return;
		await services.home.opened(event.user);
	};
}
