import type { App, GlobalShortcut, MessageShortcut } from '@slack/bolt';
import { SHORTCUTS } from '../../messages/actions';
import type { AppServices } from '../../features';
import { askAboutMessageShortcut } from './ask-about-message';
import { runJobShortcut } from './run-job';
import { transcribeFileShortcut } from './transcribe-file';

export function registerShortcuts(app: App, services: AppServices): void {
	app.shortcut<GlobalShortcut>(
		{ callback_id: SHORTCUTS.runJob, type: 'shortcut' },
		runJobShortcut(services),
	);
	app.shortcut<MessageShortcut>(
		{ callback_id: SHORTCUTS.askAboutMessage, type: 'message_action' },
		askAboutMessageShortcut(services),
	);
	app.shortcut<MessageShortcut>(
		{ callback_id: SHORTCUTS.transcribeFile, type: 'message_action' },
		transcribeFileShortcut(services),
	);
}
