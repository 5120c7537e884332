import type { App } from '@slack/bolt';
import { COMMAND } from '../../services/command-parser';
import type { AppServices } from '../../services';
import { gpuCommand } from './gpu';

export function registerCommands(app: App, services: AppServices): void {
	app.command(COMMAND, gpuCommand(services));
}
