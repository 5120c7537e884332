import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LogLevel, type Logger } from '@slack/bolt';
import { startEmulator } from '../../emulator';
import { startFileHost, type FileHost } from '../support/media-server';
import { startSlackApp, type RunningSlackApp } from '../../slack-app/app';
import type { AppConfig } from '../../slack-app/config';
import { freePort, localAppToken, localConfig, localSlackCredentials } from '../../slack-app/local';
import {
	DEFAULT_CHANNEL,
	startStandin,
	type Standin,
	type StandinOptions,
	type StoredMessage,
} from '../../slack-standin';
import { BOT } from '../../slack-standin';
import { TEAM } from '../../slack-standin/workspace';
import type { CreateAppOptions } from '../../slack-standin/app-config';
import type { Container } from '../../slack-app/workspaces/container';
import type { Clock } from '../../shared/clock';
import { isTerminalStatus, type Job } from '../../shared/schemas';

/**
 * The whole app over real loopback HTTP: the service emulator, the Slack stand-in (whose WebClient
 * URL the app uses) and the Bolt app in HTTP mode on 127.0.0.1. Nothing of our own is mocked.
 */

export type Emulator = Awaited<ReturnType<typeof startEmulator>>;
export type EmulatorOptions = NonNullable<Parameters<typeof startEmulator>[0]>;

export const USER = 'U0ALICE';
export const OTHER_USER = 'U0BOB';
export const CHANNEL: string = DEFAULT_CHANNEL.id;

/** A Bolt logger that keeps every line, so tests can check that no secret is ever logged. */
export class CapturingLogger implements Logger {
	readonly lines: string[] = [];
	private level = LogLevel.DEBUG;
	private record(level: string, parts: unknown[]): void {
		this.lines.push(
			`${level} ${parts.map((part) => (part instanceof Error ? `${part.name}: ${part.message}` : typeof part === 'string' ? part : JSON.stringify(part))).join(' ')}`,
		);
	}
	debug(...parts: unknown[]): void {
		this.record('debug', parts);
	}
	info(...parts: unknown[]): void {
		this.record('info', parts);
	}
	warn(...parts: unknown[]): void {
		this.record('warn', parts);
	}
	error(...parts: unknown[]): void {
		this.record('error', parts);
	}
	setLevel(level: LogLevel): void {
		this.level = level;
	}
	getLevel(): LogLevel {
		return this.level;
	}
	setName(): void {}
}

export interface StackOptions {
	/** Extra app settings (allow-lists, limits, poll interval...). */
	env?: Record<string, string>;
	/** Let the emulator report job completion to the app by webhook. Default: polling only. */
	webhooks?: boolean;
	emulator?: EmulatorOptions;
	nativeStreaming?: boolean;
	streamIntervalMs?: number;
	/** False: start only the emulator and the stand-in (the app runs in a child process). */
	app?: boolean;
	/**
	 * Socket Mode: the stand-in gets an app-level token and delivers everything over the app's
	 * WebSocket (with these timings, shorter than Slack's); the app connects instead of listening.
	 */
	socketMode?: NonNullable<StandinOptions['socketMode']>;
	/** The app as Slack created it (its manifest, its age); the repository's manifest, new, by default. */
	slackApp?: CreateAppOptions;
	/** One clock for the emulator, the stand-in's rate limits and the app (the system's by default). */
	clock?: Clock;
	/** The stand-in's rate limits: Slack's unless a test says why it changes them. */
	rateLimits?: StandinOptions['rateLimits'];
}

export class Stack {
	app!: RunningSlackApp;
	/** The stand-in workspace's services in the running app. */
	container!: Container;
	config!: AppConfig;
	private port?: number;
	readonly logger = new CapturingLogger();

	private constructor(
		readonly emulator: Emulator,
		private readonly fileHost: FileHost,
		readonly standin: Standin,
		readonly credentials: { botToken: string; signingSecret: string; appToken?: string },
		readonly stateFile: string,
		private readonly options: StackOptions,
	) {}

	static async start(options: StackOptions = {}): Promise<Stack> {
		// The recordings behind the made-up URLs of /gpu transcribe commands, which the emulator downloads.
		const fileHost = await startFileHost();
		const emulator = await startEmulator({
			port: 0,
			jobDurationMs: 600,
			mediaHosts: fileHost.mediaHosts,
			...(options.clock ? { clock: options.clock } : {}),
			...options.emulator,
		});
		const credentials = {
			...localSlackCredentials(),
			...(options.socketMode ? { appToken: localAppToken() } : {}),
		};
		const standin = await startStandin({
			...credentials,
			...options.slackApp,
			socketMode: options.socketMode,
			nativeStreaming: options.nativeStreaming ?? true,
			clock: options.clock,
			rateLimits: options.rateLimits,
		});
		const dir = await mkdtemp(join(tmpdir(), 'gpu-slack-test-'));
		const stack = new Stack(
			emulator,
			fileHost,
			standin,
			credentials,
			join(dir, 'state.json'),
			options,
		);
		if (options.app !== false) await stack.startApp();
		return stack;
	}

	/** Starts (again) the app against the same emulator, stand-in and state file: a restart. */
	async startApp(extra: Partial<StackOptions> = {}): Promise<void> {
		const options = { ...this.options, ...extra, env: { ...this.options.env, ...extra.env } };
		// The same port across restarts: jobs in flight keep a valid webhook URL.
		this.port ??= await freePort();
		const port = this.port;
		this.config = localConfig({
			service: this.emulator,
			slack: { standin: this.standin, ...this.credentials },
			port,
			webhooks: options.webhooks ?? false,
			stateFile: this.stateFile,
			env: { SLACK_POLL_INTERVAL_MS: '200', ...options.env },
		});
		this.app = await startSlackApp({
			config: this.config,
			logger: this.logger,
			logLevel: LogLevel.DEBUG,
			streamIntervalMs: options.streamIntervalMs ?? 200,
			...(options.clock ? { clock: options.clock } : {}),
		});
		if (this.app.eventsUrl) this.standin.setAppUrl(this.app.eventsUrl);
		const container = await this.app.workspaces.get(TEAM.id);
		if (!container) throw new Error(`The app does not serve ${TEAM.id}.`);
		this.container = container;
	}

	async command(text: string, user = USER, channel = CHANNEL) {
		return this.standin.app.slashCommand({ user, channel, text });
	}

	/** The app's top-level messages in a channel (parents), oldest first. */
	parents(channel = CHANNEL): StoredMessage[] {
		return this.standin.workspace
			.channelMessages(channel)
			.filter((message) => message.user === BOT.userId);
	}

	replies(parentTs: string, channel = CHANNEL): StoredMessage[] {
		return this.standin.workspace.replies(channel, parentTs);
	}

	ephemeralTexts(user = USER): string[] {
		return this.standin.workspace
			.ephemeralsFor(user)
			.map((message) => `${message.text} ${JSON.stringify(message.blocks ?? [])}`);
	}

	/** Waits for the n-th parent message (1-based) to exist and returns it. */
	waitForParent(n = 1, channel = CHANNEL, timeoutMs = 10_000): Promise<StoredMessage> {
		return this.standin.waitFor(
			() => this.parents(channel)[n - 1],
			timeoutMs,
			`parent message #${n}`,
		);
	}

	/** Waits until the emulator's job `id` has ended (any end), and returns it as it ended. */
	jobEnded(id: string, timeoutMs = 20_000): Promise<Job> {
		return this.standin.waitFor(
			() => {
				const job = this.emulator.getJob(id);
				return job && isTerminalStatus(job.status) ? job : undefined;
			},
			timeoutMs,
			`job ${id} to end`,
		);
	}

	/** Waits until the parent's text matches (status edits). */
	waitForParentText(
		ts: string,
		pattern: RegExp,
		timeoutMs = 15_000,
		channel = CHANNEL,
	): Promise<StoredMessage> {
		return this.standin.waitFor(
			() => {
				const message = this.standin.workspace.find(channel, ts);
				return message && pattern.test(`${message.text} ${JSON.stringify(message.blocks ?? [])}`)
					? message
					: undefined;
			},
			timeoutMs,
			`the parent to show ${pattern}`,
		);
	}

	waitForEphemeral(pattern: RegExp, user = USER, timeoutMs = 10_000): Promise<string> {
		return this.standin.waitFor(
			() => this.ephemeralTexts(user).find((text) => pattern.test(text)),
			timeoutMs,
			`an ephemeral message matching ${pattern}`,
		);
	}

	/** Emulator requests whose method and path match, to prove what was (not) created. */
	serviceCalls(method: string, pathPattern: RegExp): number {
		return this.emulator.requests.filter(
			(request) => request.method === method && pathPattern.test(request.path),
		).length;
	}

	/** Every secret this stack uses; none may appear in Slack or in a log line. */
	secrets(): string[] {
		return [
			this.credentials.botToken,
			this.credentials.signingSecret,
			this.credentials.appToken,
			this.emulator.apiKey,
			this.emulator.webhookSecret,
		].filter((secret): secret is string => Boolean(secret));
	}

	async close(): Promise<void> {
		if (this.app) {
			await this.app.idle().catch(() => undefined);
			await this.app.stop().catch(() => undefined);
		}
		await this.standin.close();
		await this.emulator.close();
		await this.fileHost.close();
	}
}

/** Concatenated visible content of a message, for assertions. */
export function content(message: StoredMessage | undefined): string {
	return message ? `${message.text} ${JSON.stringify(message.blocks ?? [])}` : '';
}

/** Where an app process finds the service and Slack: in this process (a Stack) or in processes of their own. */
export interface AppParts {
	service: {
		baseUrl: string;
		apiKey: string;
		organization: string;
		imageUrl: string;
		chatUrl: string;
	};
	/** With `appToken`, the app connects over Socket Mode (the stand-in's must be on). */
	slack: { botToken: string; signingSecret: string; apiUrl: string; appToken?: string };
}

/** The environment an entry point of slack-app/ needs to serve on `port` against these parts. */
export function partsEnv({ service, slack }: AppParts, port: number): Record<string, string> {
	return {
		PATH: process.env.PATH ?? '',
		HOME: process.env.HOME ?? '',
		SLACK_BOT_TOKEN: slack.botToken,
		SLACK_SIGNING_SECRET: slack.signingSecret,
		SLACK_API_URL: slack.apiUrl,
		...(slack.appToken ? { SLACK_APP_TOKEN: slack.appToken } : {}),
		PORT: String(port),
		HOST: '127.0.0.1',
		GPU_CLOUD_BASE_URL: service.baseUrl,
		GPU_CLOUD_API_KEY: service.apiKey,
		GPU_CLOUD_ORGANIZATION: service.organization,
		GPU_CLOUD_IMAGE_URL: service.imageUrl,
		GPU_CLOUD_CHAT_URL: service.chatUrl,
	};
}

/**
 * The environment `npm start`'s entry point (or the production bin.ts) needs to run as a child
 * process against this stack; over Socket Mode when the stack's stand-in has it on.
 */
export function appProcessEnv(stack: Stack, port: number): Record<string, string> {
	const slack = { ...stack.credentials, apiUrl: stack.standin.apiUrl };
	return {
		...partsEnv({ service: stack.emulator, slack }, port),
		SLACK_STATE_FILE: stack.stateFile,
	};
}
