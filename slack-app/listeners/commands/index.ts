import type { App } from '@slack/bolt';
import { COMMAND } from '../../features/command-parser';
import type { AppServices } from '../../features';
import { gpuCommand } from './gpu';

export function registerCommands(app: App, services: AppServices): void {
	app.command(COMMAND, gpuCommand(services));
}
