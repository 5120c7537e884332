import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@slack/bolt';
import { startSlackApp, type RunningSlackApp } from './app';
import { ConfigError, configSecrets, type AppConfig } from './config';
import { JsonLogger } from './log';
import { errorSummary } from './services/errors';

/**
 * The app as a long-running service, shared by the `gpu-cloud-slack` command and `npm start`: it
 * starts the app and stops it cleanly on SIGTERM or SIGINT. Stopping refuses new work first
 * (/readyz 503, new Slack requests and webhooks 503), lets work already acknowledged reach a safe
 * point within `SLACK_SHUTDOWN_TIMEOUT_SECONDS`, then exits 0. Nothing is lost either way: jobs
 * carry their thread in the service's metadata and unfinished images and answers are in the state
 * file, so the next start (or another replica) resumes what this one left.
 */

export interface ServeOptions {
	config: AppConfig;
	logger: Logger;
	/** Runs after the app has stopped, before the process exits (stand-ins of `npm start`). */
	afterStop?: () => Promise<void>;
}

/** JSON lines on stdout, at the configured level, with every configured secret masked. */
export function loggerFor(config: AppConfig): JsonLogger {
	return new JsonLogger({ level: config.logLevel, secrets: configSecrets(config) });
}

/**
 * For a start that failed before the logger exists: settings problems by name and rule (never a
 * value), anything else as why the app could not start; then exits 1 after `cleanUp`.
 */
export async function exitOnStartFailure(
	error: unknown,
	cleanUp?: () => Promise<void>,
): Promise<never> {
	console.error(
		error instanceof ConfigError
			? error.message
			: `Could not start: ${error instanceof Error ? error.message : String(error)}`,
	);
	await cleanUp?.();
	process.exit(1);
}

export async function serve({ config, logger, afterStop }: ServeOptions): Promise<RunningSlackApp> {
	process.on('uncaughtException', (error) => {
		logger.error(`Stopping after an unexpected error: ${errorSummary(error)}`);
		process.exit(1);
	});
	const app = await startSlackApp({ config, logger });
	let stopping = false;
	const stop = (signal: string) => {
		if (stopping) return logger.info(`${signal} received again; already stopping.`);
		stopping = true;
		void shutdown(app, config.shutdownTimeoutMs, logger, signal)
			.catch((error: unknown) => logger.error(`Stopping failed: ${errorSummary(error)}`))
			.then(() => afterStop?.())
			.finally(() => process.exit(0));
	};
	process.on('SIGTERM', () => stop('SIGTERM'));
	process.on('SIGINT', () => stop('SIGINT'));
	return app;
}

async function shutdown(
	app: RunningSlackApp,
	timeoutMs: number,
	logger: Logger,
	signal: string,
): Promise<void> {
	logger.info(
		`${signal} received: refusing new requests, letting acknowledged work finish (at most ${timeoutMs / 1000} s).`,
	);
	app.refuseNewRequests();
	const finished = await Promise.race([
		app.drain().then(() => true),
		sleep(timeoutMs, false, { ref: false }),
	]);
	if (!finished)
		logger.warn(`Work still running after ${timeoutMs / 1000} s; the next start resumes it.`);
	await app.stop();
	logger.info('Stopped.');
}
