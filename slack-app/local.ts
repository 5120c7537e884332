import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { loadConfig, type AppConfig } from './config';
import type { Standin } from '../slack-standin';

/**
 * Settings for running the app against local stand-ins: the service emulator instead of GPU Cloud,
 * the Slack stand-in instead of a workspace, or both. Shared by `npm start` and the tests.
 */

/** What the app needs to know about a running service emulator. */
export interface LocalService {
	baseUrl: string;
	imageUrl?: string;
	chatUrl?: string;
	apiKey: string;
	organization: string;
	project?: string;
	webhookSecret?: string;
}

/** Credentials for the stand-in: random per run, known only to this process. */
export function localSlackCredentials(): { botToken: string; signingSecret: string } {
	return {
		botToken: `xoxb-local-${randomBytes(12).toString('hex')}`,
		signingSecret: randomBytes(16).toString('hex'),
	};
}

/** An app-level token for the stand-in's Socket Mode (random per run, as the other credentials). */
export function localAppToken(): string {
	return `xapp-1-local-${randomBytes(12).toString('hex')}`;
}

/** A free loopback port, so the app's webhook URL is known before the app listens. */
export async function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const server = createServer();
		server.once('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const address = server.address();
			const port = address && typeof address === 'object' ? address.port : 0;
			server.close(() => resolve(port));
		});
	});
}

export interface LocalConfigOptions {
	/** The service to use; its fields become the GPU_CLOUD_* settings. */
	service?: LocalService;
	/**
	 * The Slack stand-in and the credentials it was started with; with `appToken` (the stand-in's
	 * Socket Mode is on) the app connects over Socket Mode instead of listening for HTTP requests.
	 */
	slack?: { standin: Standin; botToken: string; signingSecret: string; appToken?: string };
	port: number;
	/** With a local service: let it report completion by webhook to this app on loopback (else polling only). */
	webhooks: boolean;
	stateFile: string;
	/** Any other settings (allow-lists, limits); the environment's values are the base. */
	env?: Record<string, string | undefined>;
}

/** Builds the configuration through the same validation as production, from local values. */
export function localConfig(options: LocalConfigOptions): AppConfig {
	const overrides: Record<string, string | undefined> = {
		PORT: String(options.port),
		HOST: '127.0.0.1',
		SLACK_STATE_FILE: options.stateFile,
	};
	if (options.slack) {
		Object.assign(overrides, {
			SLACK_BOT_TOKEN: options.slack.botToken,
			SLACK_SIGNING_SECRET: options.slack.signingSecret,
			SLACK_APP_TOKEN: options.slack.appToken,
			SLACK_API_URL: options.slack.standin.apiUrl,
		});
	}
	if (options.service) {
		const s = options.service;
		Object.assign(overrides, {
			GPU_CLOUD_BASE_URL: s.baseUrl,
			GPU_CLOUD_API_KEY: s.apiKey,
			GPU_CLOUD_ORGANIZATION: s.organization,
			GPU_CLOUD_PROJECT: s.project,
			GPU_CLOUD_IMAGE_URL: s.imageUrl,
			GPU_CLOUD_CHAT_URL: s.chatUrl,
			GPU_CLOUD_WEBHOOK_SECRET: s.webhookSecret,
		});
		// The emulator reaches the app on loopback; a real service needs the configured public URL.
		overrides.SLACK_PUBLIC_URL = options.webhooks ? `http://127.0.0.1:${options.port}` : undefined;
	}
	return loadConfig({ ...options.env, ...overrides });
}
