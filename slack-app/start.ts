import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningSlackApp } from './app';
import { describeConfig, loadConfig, readSettings, type AppConfig } from './config';
import { startEmulatorProcess } from './emulator-process';
import { freePort, localConfig, localSlackCredentials } from './local';
import { exitOnStartFailure, loggerFor, serve } from './serve';
import { startStandin, type Standin } from './standin';

/**
 * `npm start` (one node process: npm's signals reach it, and it stops what it started). With Slack credentials (SLACK_BOT_TOKEN plus SLACK_SIGNING_SECRET, or SLACK_APP_TOKEN
 * for Socket Mode) it connects to that workspace; without, it runs the local Slack stand-in and
 * prints its page. With GPU_CLOUD_BASE_URL it uses that service; without, the local emulator, which
 * runs as a child process (the app talks to it over HTTP only). Settings: the environment, over
 * `.env` in the working directory. In production the `gpu-cloud-slack` command (bin.ts) runs the
 * same app from compiled JavaScript, without the stand-ins.
 */

/** What to stop on the way out, newest first: the stand-in and the emulator's process. */
const closers: (() => Promise<void>)[] = [];

async function closeAll(): Promise<void> {
	for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
}

/** A signal while the emulator or the stand-in is still starting: stop what has started, then exit. */
function stopEarly(): void {
	void closeAll().finally(() => process.exit(0));
}

async function main(): Promise<void> {
	process.once('SIGTERM', stopEarly).once('SIGINT', stopEarly);
	const env = await readSettings(process.env, { path: '.env', required: false });
	const realSlack = Boolean(env.SLACK_BOT_TOKEN);
	const realService = Boolean(env.GPU_CLOUD_BASE_URL);
	let config: AppConfig;
	let standin: Standin | undefined;

	if (realSlack && realService) {
		config = loadConfig(env);
	} else {
		const emulator = realService ? undefined : await startEmulatorProcess();
		if (emulator) closers.push(() => emulator.close());
		const slack = realSlack ? undefined : localSlackCredentials();
		if (slack) {
			standin = await startStandin({
				port: Number(env.STANDIN_PORT ?? 0),
				botToken: slack.botToken,
				signingSecret: slack.signingSecret,
			});
			closers.push(() => standin?.close() ?? Promise.resolve());
		}
		const port = env.PORT ? Number(env.PORT) : await freePort();
		config = localConfig({
			service: emulator?.service,
			slack:
				slack && standin
					? { standin, botToken: slack.botToken, signingSecret: slack.signingSecret }
					: undefined,
			port,
			webhooks: true,
			stateFile: env.SLACK_STATE_FILE ?? join(tmpdir(), `gpu-cloud-slack-local-${port}.json`),
			env,
		});
	}
	console.log(describeConfig(config));
	const logger = loggerFor(config);
	const app: RunningSlackApp = await serve({ config, logger, afterStop: closeAll });
	// From here serve()'s own handlers stop the app, then what it started.
	process.off('SIGTERM', stopEarly).off('SIGINT', stopEarly);
	if (standin && app.eventsUrl) standin.setAppUrl(app.eventsUrl);

	console.log('');
	if (standin) {
		console.log(`GPU Cloud for Slack is running against a local Slack stand-in.`);
		console.log(`Open ${standin.pageUrl} and type /gpu help (or /gpu image a red fox).`);
	} else {
		console.log(
			`GPU Cloud for Slack is connected to your workspace${app.eventsUrl ? `; Slack requests go to ${app.eventsUrl}` : ' over Socket Mode'}.`,
		);
	}
}

main().catch((error: unknown) => exitOnStartFailure(error, closeAll));
