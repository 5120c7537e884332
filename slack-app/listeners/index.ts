import type { App } from '@slack/bolt';
import type { AppServices } from '../features';
import { registerActions } from './actions';
import { registerCommands } from './commands';
import { registerEvents } from './events';
import { registerFunctions } from './functions';
import { registerShortcuts } from './shortcuts';
import { registerViews } from './views';

export function registerListeners(app: App, services: AppServices): void {
	registerCommands(app, services);
	registerActions(app, services);
	registerViews(app, services);
	registerEvents(app, services);
	registerShortcuts(app, services);
	registerFunctions(app, services);
}
