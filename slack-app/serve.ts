import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { webApi, type Logger } from '@slack/bolt';
import { startSlackApp, type RunningSlackApp } from './app';
import { ConfigError, configSecrets, type AppConfig } from './config';
import { Health } from './http/health';
import { listen } from './http/receiver';
import { JsonLogger } from './slack/log';
import { errorSummary, isLastingRefusal, slackErrorCode } from './slack/errors';
import { slackClientOptions } from './slack/slack-client';

/**
 * The app as a long-running service, shared by the `gpu-cloud-slack` command and `npm start`: it
 * starts the app and stops it cleanly on SIGTERM or SIGINT. Stopping refuses new work first
 * (/readyz 503, new Slack requests and webhooks 503), lets work already acknowledged reach a safe
 * point within `SLACK_SHUTDOWN_TIMEOUT_SECONDS`, then exits 0. Nothing is lost either way: jobs
 * carry their thread in the service's metadata and unfinished images and answers are in the state
 * file, so the next start (or another replica) resumes what this one left.
 *
 * One workspace: the app cannot start before Slack says which workspace its token belongs to. While
 * Slack cannot be reached, the process stays up, answers /healthz 200 and /readyz 503 (`slack`
 * failing) on its port, and asks again with backoff, so an orchestrator holds traffic back instead
 * of restarting it in a loop; a token Slack refuses stops the start (waiting cannot mend it).
 */

export interface ServeOptions {
	config: AppConfig;
	logger: Logger;
	/** Runs after the app has stopped, before the process exits (stand-ins of `npm start`). */
	afterStop?: () => Promise<void>;
	/** Slack's OAuth consent page; `npm start -- --several-workspaces` points it at the stand-in's. */
	slackAuthorizationUrl?: string;
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
	console.error(error instanceof ConfigError ? error.message : `Could not start: ${causes(error)}`);
	await cleanUp?.();
	process.exit(1);
}

export async function serve({
	config,
	logger,
	afterStop,
	slackAuthorizationUrl,
}: ServeOptions): Promise<RunningSlackApp> {
	process.on('uncaughtException', (error) => {
		logger.error(`Stopping after an unexpected error: ${errorSummary(error)}`);
		process.exit(1);
	});
	if (config.slack.botToken && !(await slackAnswers(config, logger))) {
		await afterStop?.();
		process.exit(0);
	}
	const app = await startSlackApp({ config, logger, slackAuthorizationUrl });
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

/** An error's message followed by its causes' (a fetch failure's `ECONNREFUSED` is two levels down). */
export function causes(error: unknown): string {
	const messages: string[] = [];
	for (let at: unknown = error; at instanceof Error && messages.length < 5; ) {
		if (!messages.includes(at.message)) messages.push(at.message);
		at = 'original' in at && at.original instanceof Error ? at.original : at.cause;
	}
	return messages.length ? messages.join(': ') : String(error);
}

/**
 * Resolves true once Slack answers `auth.test` for the bot token; meanwhile serves /healthz and
 * /readyz on the app's port. Resolves false when SIGTERM or SIGINT arrives first; throws when Slack
 * refuses the token.
 */
async function slackAnswers(config: AppConfig, logger: Logger): Promise<boolean> {
	const client = new webApi.WebClient(config.slack.botToken, {
		...slackClientOptions(config.slack.apiUrl),
		retryConfig: { retries: 0 },
		logger,
	});
	const check = async () => {
		try {
			await client.auth.test();
		} catch (error) {
			const code = slackErrorCode(error);
			if (code && isLastingRefusal(code))
				throw new ConfigError([
					`SLACK_BOT_TOKEN: Slack refused it (${code}); use the Bot User OAuth Token of the installed app.`,
				]);
			throw error;
		}
	};
	let first: unknown;
	try {
		await check();
		return true;
	} catch (error) {
		if (error instanceof ConfigError) throw error;
		first = error;
	}
	// Until the app starts: up, not ready (the loop below asks Slack), every other route 503.
	const health = new Health({ probes: [], logger });
	const server = createServer((req, res) => {
		if (req.url === '/healthz') return health.healthz(req, res);
		req.resume();
		res.writeHead(503, { 'content-type': 'application/json', 'cache-control': 'no-store' });
		res.end(
			req.url === '/readyz'
				? JSON.stringify({ status: 'not ready', checks: { slack: 'failing' } })
				: undefined,
		);
	});
	await listen(server, config.slack.port, config.slack.host);
	logger.warn(
		`Slack cannot be reached (${causes(first)}); not starting yet. GET /readyz answers 503 on port ${config.slack.port} until it can.`,
	);
	const stopped = new AbortController();
	const onSignal = () => stopped.abort();
	process.once('SIGTERM', onSignal).once('SIGINT', onSignal);
	try {
		for (let waitMs = 1000; ; waitMs = Math.min(waitMs * 2, 30_000)) {
			if (!(await sleep(waitMs, true, { signal: stopped.signal }).catch(() => false))) {
				logger.info('Stopped before Slack could be reached.');
				return false;
			}
			try {
				await check();
				logger.info('Slack answers again; starting.');
				return true;
			} catch (error) {
				if (error instanceof ConfigError) throw error;
				logger.warn(`Slack still cannot be reached (${causes(error)}).`);
			}
		}
	} finally {
		process.off('SIGTERM', onSignal).off('SIGINT', onSignal);
		const closed = new Promise((resolve) => server.close(resolve));
		server.closeAllConnections();
		await closed;
	}
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
