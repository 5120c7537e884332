import type { App } from '@slack/bolt';
import { VIEWS } from '../../messages/actions';
import type { AppServices } from '../../features';
import { submitAskMessage } from './ask-message';
import { submitJobForm } from './job-form';

export function registerViews(app: App, services: AppServices): void {
	app.view(VIEWS.jobModal, submitJobForm(services));
	app.view(VIEWS.askModal, submitAskMessage(services));
}
