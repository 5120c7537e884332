import type { App, BlockAction, ButtonAction, StaticSelectAction } from '@slack/bolt';
import { ACTIONS } from '../../messages/actions';
import type { AppServices } from '../../features';
import { cancelJob } from './cancel';
import { endpointsPage } from './endpoints-page';
import { answerFeedback } from './feedback';
import { chooseJobFormEndpoint } from './job-form-endpoint';
import { homeCancel } from './home-cancel';
import { regenerateChat, regenerateImage } from './regenerate';
import { showInput } from './show-input';

export function registerActions(app: App, services: AppServices): void {
	app.action<BlockAction<ButtonAction>>(ACTIONS.cancel, cancelJob(services));
	app.action<BlockAction<ButtonAction>>(ACTIONS.homeCancel, homeCancel(services));
	app.action<BlockAction>(ACTIONS.feedback, answerFeedback(services));
	app.action<BlockAction<ButtonAction>>(ACTIONS.showInput, showInput(services));
	app.action<BlockAction<ButtonAction>>(ACTIONS.regenerateImage, regenerateImage(services));
	app.action<BlockAction<ButtonAction>>(ACTIONS.regenerateChat, regenerateChat(services));
	app.action<BlockAction<StaticSelectAction>>(
		ACTIONS.jobFormEndpoint,
		chooseJobFormEndpoint(services),
	);
	app.action<BlockAction<ButtonAction>>(
		new RegExp(`^${ACTIONS.endpointsPage.replace('.', '\\.')}\\.`),
		endpointsPage(services),
	);
}
