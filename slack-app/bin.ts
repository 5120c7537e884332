#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, readSettings } from './config';
import { causes, exitOnStartFailure, loggerFor, serve } from './serve';

/**
 * `gpu-cloud-slack`: the Slack app in production, from compiled JavaScript. Settings come from the
 * environment and an env file (`.env` in the working directory if present, or `--settings <path>`;
 * not `--env-file`, which Node itself takes from anywhere on its command line);
 * the environment wins. Logs are JSON lines on stdout.
 */

const USAGE = `Usage: gpu-cloud-slack [--settings <path>]

Runs GPU Cloud for Slack. Settings: the environment, over ./.env (or the env file given).
Every setting, with its default: .env.example in this package.
Health: GET /healthz (up), GET /readyz (Slack and GPU Cloud reachable), GET /metrics
(Prometheus) on PORT.
While Slack cannot be reached at start, it waits (GET /readyz 503) and tries again.`;

async function main(): Promise<void> {
	const { values } = parseArgs({
		options: { settings: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
	});
	if (values.help) return void console.log(USAGE);
	const envFile = values.settings;
	const config = loadConfig(
		await readSettings(
			process.env,
			envFile ? { path: envFile, required: true } : { path: '.env', required: false },
		),
	);
	const logger = loggerFor(config);
	try {
		const app = await serve({ config, logger });
		logger.info(
			`Ready in ${Math.round(performance.now())} ms: ${app.eventsUrl ? `Slack requests on ${new URL(app.eventsUrl).pathname}` : 'Socket Mode'}, ` +
				`GET /healthz and /readyz on port ${config.slack.port}.`,
		);
	} catch (error) {
		logger.error(
			error instanceof ConfigError ? error.message : `Could not start: ${causes(error)}`,
		);
		process.exit(1);
	}
}

main().catch((error: unknown) => exitOnStartFailure(error));
