import type { App } from '@slack/bolt';
import type { AppServices } from '../../features';
import { agentSessionStopped } from './agent-session-stopped';
import { appHomeOpened } from './app-home-opened';
import { assistantThreadStarted } from './assistant-thread-started';
import { directMessage } from './direct-message';
import { fileShare } from './file-share';
import { threadReply } from './thread-reply';

export function registerEvents(app: App, services: AppServices): void {
	app.event('message', threadReply(services));
	app.event('message', directMessage(services));
	app.event('message', fileShare(services));
	// Only installations of an app created before agent messaging send it (manifest.yaml has agent_view).
	app.event('assistant_thread_started', assistantThreadStarted(services));
	app.event('agent_session_stopped', agentSessionStopped(services));
	app.event('app_home_opened', appHomeOpened(services));
}
