import type { App } from '@slack/bolt';
import type { AppServices } from '../../services';
import { threadReply } from './thread-reply';

export function registerEvents(app: App, services: AppServices): void {
  app.event('message', threadReply(services));
}
