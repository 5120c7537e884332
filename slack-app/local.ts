import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
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

/**
 * Where the ports the system hands to outgoing connections begin. A port chosen up front and bound
 * later must lie below it: a program that connects somewhere (Redis, PostgreSQL, the stand-in) before
 * it listens could otherwise be given the very port it was told to listen on, and fail to start.
 */
function firstEphemeralPort(): number {
	let range: string;
	try {
		range = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8');
	} catch (error) {
		// Not Linux: macOS and Windows use IANA's dynamic range, 49152-65535.
		if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return 49_152;
		throw error;
	}
	const low = Number(range.trim().split(/\s+/)[0]);
	if (!Number.isInteger(low) || low <= 1024)
		throw new Error(`cannot read the ephemeral port range from "${range.trim()}"`);
	return low;
}

function isFree(port: number): Promise<boolean> {
	return new Promise((resolve) => {
		const server = createServer();
		server.once('error', () => resolve(false));
		server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
	});
}

/** A loopback port free a moment ago that no outgoing connection is given, so a URL can name it before its server listens. */
export async function freePort(): Promise<number> {
	const high = firstEphemeralPort();
	const low = Math.max(1025, high - 20_000);
	for (let attempt = 0; attempt < 100; attempt++) {
		const port = low + Math.floor(Math.random() * (high - low));
		if (await isFree(port)) return port;
	}
	throw new Error(`no free port between ${low} and ${high}`);
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
