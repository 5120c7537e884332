import type { Logger } from '@slack/bolt';
import { errorSummary } from './errors';

/**
 * Work that continues after the listener has acknowledged Slack (generation, streaming, posting).
 * Kept in one place so a failure is always logged and shutdown or a test can wait for the rest.
 */
export class BackgroundTasks {
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly logger: Logger) {}

  run(what: string, task: () => Promise<void>): void {
    const promise = task()
      .catch((error: unknown) => this.logger.error(`${what} failed: ${errorSummary(error)}`))
      .finally(() => this.running.delete(promise));
    this.running.add(promise);
  }

  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }
}
