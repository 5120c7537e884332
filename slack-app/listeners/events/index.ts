import type { App } from '@slack/bolt';
import type { AppServices } from '../../features';
import { appHomeOpened } from './app-home-opened';
import { assistantMessage } from './assistant-message';
import { assistantThreadStarted } from './assistant-thread-started';
import { directMessage } from './direct-message';
import { threadReply } from './thread-reply';

export function registerEvents(app: App, services: AppServices): void {
	app.event('message', threadReply(services));
	app.event('message', directMessage(services));
	app.event('message', assistantMessage(services));
	app.event('assistant_thread_started', assistantThreadStarted(services));
	app.event('app_home_opened', appHomeOpened(services));
}
