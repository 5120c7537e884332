import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningSlackApp } from './app';
import { describeConfig, loadConfig, readSettings, type AppConfig } from './config';
import { startEmulatorProcess } from './emulator-process';
import { freePort, localAppToken, localConfig, localSlackCredentials } from './local';
import { exitOnStartFailure, loggerFor, serve } from './serve';
import { BOT, LOCAL_USER, startStandin, TEAM, type Standin } from '../slack-standin';
import { OAuthStandin } from '../slack-standin/oauth';

/**
 * `npm start` (one node process: npm's signals reach it, and it stops what it started). With Slack credentials (SLACK_BOT_TOKEN plus SLACK_SIGNING_SECRET, or SLACK_APP_TOKEN
 * for Socket Mode) it connects to that workspace; without, it runs the local Slack stand-in and
 * prints its page (STANDIN_SOCKET_MODE=true: the app connects to the stand-in over Socket Mode). With GPU_CLOUD_BASE_URL it uses that service; without, the local emulator, which
 * runs as a child process (the app talks to it over HTTP only). Settings: the environment, over
 * `.env` in the working directory. In production the `gpu-cloud-slack` command (bin.ts) runs the
 * same app from compiled JavaScript, without the stand-ins.
 */

/** The stand-in's app: any `<digits>.<digits>` passes Slack's Client ID rule. */
const LOCAL_CLIENT_ID = '1111.2222';

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
	let oauth: OAuthStandin | undefined;
	let linkWith: { organization: string; apiKey: string } | undefined;

	if (realSlack && realService) {
		config = loadConfig(env);
	} else {
		const emulator = realService ? undefined : await startEmulatorProcess();
		if (emulator) closers.push(() => emulator.close());
		const slack = realSlack
			? undefined
			: {
					...localSlackCredentials(),
					appToken: env.STANDIN_SOCKET_MODE === 'true' ? localAppToken() : undefined,
				};
		if (slack) {
			standin = await startStandin({ ...slack, port: Number(env.STANDIN_PORT ?? 0) });
			closers.push(() => standin?.close() ?? Promise.resolve());
		}
		const port = env.PORT ? Number(env.PORT) : await freePort();
		config = localConfig({
			service: emulator?.service,
			slack: slack && standin ? { standin, ...slack } : undefined,
			port,
			webhooks: true,
			stateFile: env.SLACK_STATE_FILE ?? join(tmpdir(), `gpu-cloud-slack-local-${port}.json`),
			env,
		});
		if (process.argv.includes('--several-workspaces')) {
			if (!slack || !standin || !emulator)
				throw new Error(
					'--several-workspaces runs on the stand-ins: unset SLACK_BOT_TOKEN and GPU_CLOUD_BASE_URL.',
				);
			// Slack's OAuth side on loopback: the consent page approves at once for the stand-in's
			// workspace, whose person on the page is one of its admins (so /gpu setup is allowed).
			const clientSecret = randomBytes(16).toString('hex');
			oauth = await OAuthStandin.start({
				clientId: LOCAL_CLIENT_ID,
				clientSecret,
				workspaces: [
					{
						team: { id: TEAM.id, name: TEAM.name },
						standin,
						standinToken: slack.botToken,
						botToken: `xoxb-local-installed-${randomBytes(12).toString('hex')}`,
						botUserId: BOT.userId,
						admins: [LOCAL_USER.id],
					},
				],
			});
			oauth.signIn(TEAM.id);
			const started = oauth;
			closers.push(() => started.close());
			const { service } = emulator;
			linkWith = { organization: service.organization, apiKey: service.apiKey };
			// The same checks as production: no bot token, no app-wide organization and key.
			config = loadConfig({
				...env,
				PORT: String(port),
				HOST: '127.0.0.1',
				SLACK_BOT_TOKEN: undefined,
				SLACK_SIGNING_SECRET: slack.signingSecret,
				SLACK_CLIENT_ID: LOCAL_CLIENT_ID,
				SLACK_CLIENT_SECRET: clientSecret,
				SLACK_STATE_SECRET: randomBytes(32).toString('hex'),
				SLACK_INSTALLATION_KEY: randomBytes(32).toString('hex'),
				// A fresh file per run: its key lives only as long as this process.
				SLACK_INSTALLATION_DB: join(
					tmpdir(),
					`gpu-cloud-slack-local-${randomBytes(6).toString('hex')}.sqlite`,
				),
				SLACK_API_URL: oauth.apiUrl,
				SLACK_PUBLIC_URL: `http://127.0.0.1:${port}`,
				SLACK_STATE_FILE: config.stateFile,
				GPU_CLOUD_BASE_URL: service.baseUrl,
				GPU_CLOUD_IMAGE_URL: service.imageUrl,
				GPU_CLOUD_CHAT_URL: service.chatUrl,
				GPU_CLOUD_API_KEY: undefined,
				GPU_CLOUD_ORGANIZATION: undefined,
				GPU_CLOUD_WEBHOOK_SECRET: undefined,
			});
		}
	}
	console.log(describeConfig(config));
	const logger = loggerFor(config);
	const app: RunningSlackApp = await serve({
		config,
		logger,
		afterStop: closeAll,
		slackAuthorizationUrl: oauth?.authorizationUrl,
	});
	// From here serve()'s own handlers stop the app, then what it started.
	process.off('SIGTERM', stopEarly).off('SIGINT', stopEarly);
	if (standin && app.eventsUrl) standin.setAppUrl(app.eventsUrl);

	console.log('');
	if (standin && linkWith && app.eventsUrl) {
		console.log(
			`GPU Cloud for Slack is running in several-workspaces mode against local stand-ins.`,
		);
		console.log(`1. Install it: open ${new URL('/slack/install', app.eventsUrl).href}`);
		console.log(
			`2. Open ${standin.pageUrl} and type /gpu setup (you are a workspace admin there):`,
		);
		console.log(
			`   organization ${linkWith.organization}, API key ${linkWith.apiKey} (the emulator's development key).`,
		);
		console.log(`3. Type /gpu image a red fox.`);
	} else if (standin) {
		console.log(
			`GPU Cloud for Slack is running against a local Slack stand-in${app.eventsUrl ? '' : ', connected over Socket Mode'}.`,
		);
		console.log(`Open ${standin.pageUrl} and type /gpu help (or /gpu image a red fox).`);
	} else {
		console.log(
			`GPU Cloud for Slack is connected to your workspace${app.eventsUrl ? `; Slack requests go to ${app.eventsUrl}` : ' over Socket Mode'}.`,
		);
	}
}

main().catch((error: unknown) => exitOnStartFailure(error, closeAll));
