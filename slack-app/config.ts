import {
	objectStorageSettingsSchema,
	type ObjectStorageLabels,
	type ObjectStorageSettings,
} from '../shared/object-storage';
import { readFile } from 'node:fs/promises';
import { parseEnv } from 'node:util';
import type { LogLevel } from '@slack/bolt';
import { z } from 'zod/v4';
import { isHttpUrl, NAME_PATTERN, NAME_RULE } from '../shared/schemas';
import { KEY_RULE, parseKey } from './state/installations/cipher';
import { LOG_LEVELS } from './slack/log';
import type { AccessSettings } from './requests/access';
import { fileErrorCode } from './state/files';

/**
 * Every setting of the Slack app, read from the environment in this one place and checked at start.
 * Error messages name the variable and the rule; they never echo a secret's value.
 */

/** `botToken` is unset when the app is distributed: each workspace's token comes from its installation. */
export type SlackConnection =
	| { mode: 'http'; botToken?: string; signingSecret: string; port: number; host: string }
	| {
			mode: 'socket';
			botToken: string;
			appToken: string;
			signingSecret?: string;
			port: number;
			host: string;
	  };

/** Installable in many workspaces (OAuth): set when SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_STATE_SECRET are. */
export interface Distribution {
	clientId: string;
	clientSecret: string;
	stateSecret: string;
	/** PostgreSQL when set; else the SQLite file. */
	databaseUrl?: string;
	sqliteFile: string;
	/** AES-256-GCM key the tokens and API keys are sealed with; previous keys only open older values. */
	installationKey: Buffer;
	previousKeys: Buffer[];
	/** Workspaces whose services are kept in memory at most (least recently used out first). */
	keptWorkspaces: number;
	/** A workspace idle this long has its services released, rebuilt on its next request. */
	idleReleaseMs: number;
}

export interface AppConfig {
	slack: SlackConnection & {
		/** Web API root; only set to reach a stand-in (tests, `npm start` without credentials). */
		apiUrl?: string;
		/** `auto` tries chat.startStream first and falls back to throttled chat.update edits. */
		nativeStreaming: boolean;
	};
	distribution?: Distribution;
	service: {
		baseUrl: string;
		/** Empty when distributed: each workspace links its own organization and key. */
		apiKey: string;
		organization: string;
		project?: string;
		imageUrl?: string;
		imageWorkflow: string;
		chatUrl?: string;
		chatModel?: string;
		/** When unset the app reads the organization's secret from the service at start. */
		webhookSecret?: string;
	};
	/**
	 * The key the app seals its job metadata with (`SLACK_APP_SECRET`, else the signing secret): only
	 * jobs carrying its seal are ever posted, edited or resumed.
	 */
	appSecret: string;
	/** Where the service can reach this app; unset means completion is watched by polling only. */
	publicUrl?: string;
	webhookPath: string;
	/** How long a file shared in Slack stays readable by its transcription job at most (it ends with the job). */
	fileLinkTtlMs: number;
	/** S3-compatible storage a shared file is put in for its job (a presigned URL), instead of the app serving it. */
	storage?: ObjectStorageSettings;
	access: AccessSettings;
	stateFile: string;
	/** How far back the app looks for its unfinished jobs when it starts. */
	resumeWindowHours: number;
	/**
	 * Longest pause between two reads of an endpoint's job list (progress, and completion when no
	 * webhook can arrive). Default 30 s with webhooks (a safety net), 10 s without.
	 */
	pollIntervalMs: number;
	logLevel: LogLevel;
	/** Several replicas share state through this Redis; unset: one process keeps it in memory. */
	redisUrl?: string;
	/** On SIGTERM, how long acknowledged work may take to reach a safe point before the process exits. */
	shutdownTimeoutMs: number;
}

export class ConfigError extends Error {
	readonly problems: string[];
	constructor(problems: string[]) {
		super(
			`The Slack app cannot start; fix these settings:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
		);
		this.name = 'ConfigError';
		this.problems = problems;
	}
}

const optionalText = z
	.string()
	.optional()
	.transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()));

const secret = (prefix: string | undefined, what: string) =>
	optionalText.refine(
		(value) => value === undefined || prefix === undefined || value.startsWith(prefix),
		{
			// The rule only: a secret's value never appears in a message.
			error: prefix ? `must be ${what} (it starts with "${prefix}")` : `must be ${what}`,
		},
	);

const url = optionalText.refine((value) => value === undefined || isHttpUrl(value), {
	error: 'must be a full http:// or https:// URL',
});

const integer = (min: number, max: number, fallback: number) =>
	optionalText
		.refine(
			(value) =>
				value === undefined ||
				(/^\d+$/.test(value) && Number(value) >= min && Number(value) <= max),
			{
				error: `must be a whole number from ${min} to ${max}`,
			},
		)
		.transform((value) => (value === undefined ? fallback : Number(value)));

const idList = (what: string) =>
	optionalText
		.refine(
			(value) =>
				value === undefined || value.split(',').every((id) => /^[A-Z0-9]{2,}$/.test(id.trim())),
			{
				error: `must be a comma-separated list of Slack ${what} IDs (like U012ABCDEF); empty means everyone`,
			},
		)
		.transform((value) => (value === undefined ? [] : value.split(',').map((id) => id.trim())));

const envSchema = z.object({
	SLACK_BOT_TOKEN: secret('xoxb-', 'a bot token'),
	SLACK_SIGNING_SECRET: secret(undefined, 'the signing secret from Basic Information'),
	SLACK_APP_TOKEN: secret('xapp-', 'an app-level token with connections:write'),
	SLACK_APP_SECRET: secret(undefined, 'a secret of at least 32 characters').refine(
		(value) => value === undefined || value.length >= 32,
		{
			error: 'must be at least 32 characters (for example `openssl rand -hex 32`)',
		},
	),
	SLACK_API_URL: url,
	SLACK_NATIVE_STREAMING: optionalText
		.refine((value) => value === undefined || value === 'auto' || value === 'off', {
			error: 'must be "auto" or "off"',
		})
		.transform((value) => value !== 'off'),
	PORT: integer(0, 65535, 3000),
	HOST: optionalText.transform((value) => value ?? '0.0.0.0'),
	GPU_CLOUD_BASE_URL: url,
	GPU_CLOUD_API_KEY: secret(undefined, 'the API key from the portal (API Access)'),
	GPU_CLOUD_ORGANIZATION: optionalText.refine(
		(value) => value === undefined || NAME_PATTERN.test(value),
		{ error: NAME_RULE },
	),
	GPU_CLOUD_PROJECT: optionalText.refine(
		(value) => value === undefined || NAME_PATTERN.test(value),
		{ error: NAME_RULE },
	),
	GPU_CLOUD_IMAGE_URL: url,
	GPU_CLOUD_IMAGE_WORKFLOW: optionalText
		.refine((value) => value === undefined || /^[A-Za-z0-9_-]{1,64}$/.test(value), {
			error: 'must be 1-64 letters, digits, hyphens or underscores (for example "txt2img")',
		})
		.transform((value) => value ?? 'txt2img'),
	GPU_CLOUD_CHAT_URL: url,
	GPU_CLOUD_CHAT_MODEL: optionalText,
	GPU_CLOUD_WEBHOOK_SECRET: secret(
		undefined,
		'the organization webhook secret (base64, optionally "whsec_"-prefixed)',
	).refine((value) => value === undefined || /^(whsec_)?[A-Za-z0-9+/]+={0,2}$/.test(value), {
		error: 'must be the organization webhook secret (base64, optionally "whsec_"-prefixed)',
	}),
	SLACK_PUBLIC_URL: url,
	SLACK_WEBHOOK_PATH: optionalText
		.refine((value) => value === undefined || /^\/[A-Za-z0-9/_-]*$/.test(value), {
			error: 'must be a path starting with "/"',
		})
		.transform((value) => value ?? '/gpu-cloud/webhook'),
	SLACK_FILE_LINK_TTL_MINUTES: integer(1, 7 * 24 * 60, 360),
	SLACK_STORAGE_ENDPOINT: optionalText,
	SLACK_STORAGE_REGION: optionalText,
	SLACK_STORAGE_BUCKET: optionalText,
	SLACK_STORAGE_KEY_PREFIX: optionalText,
	SLACK_STORAGE_ACCESS_KEY_ID: optionalText,
	SLACK_STORAGE_SECRET_ACCESS_KEY: optionalText,
	SLACK_STORAGE_ADDRESSING: optionalText,
	SLACK_ALLOWED_USERS: idList('user'),
	SLACK_ALLOWED_CHANNELS: idList('channel'),
	SLACK_MAX_JOBS_PER_USER: integer(1, 100, 3),
	SLACK_ACCESS_CONTACT: optionalText.transform((value) => value ?? 'a workspace admin'),
	SLACK_STATE_FILE: optionalText.transform((value) => value ?? '.gpu-cloud-slack/state.json'),
	SLACK_RESUME_WINDOW_HOURS: integer(1, 24 * 14, 24),
	SLACK_POLL_INTERVAL_MS: integer(100, 600_000, 0),
	SLACK_SHUTDOWN_TIMEOUT_SECONDS: integer(0, 3600, 20),
	SLACK_CLIENT_ID: optionalText.refine((value) => value === undefined || /^\d+\.\d+$/.test(value), {
		error: 'must be the Client ID from Basic Information (digits.digits)',
	}),
	SLACK_CLIENT_SECRET: secret(undefined, 'the Client Secret from Basic Information'),
	SLACK_STATE_SECRET: secret(undefined, 'a secret of at least 32 characters').refine(
		(value) => value === undefined || value.length >= 32,
		{
			error: 'must be at least 32 characters (for example `openssl rand -hex 32`)',
		},
	),
	SLACK_INSTALLATION_KEY: secret(undefined, 'a key').refine(
		(value) => value === undefined || parseKey(value) !== undefined,
		{ error: KEY_RULE },
	),
	SLACK_INSTALLATION_PREVIOUS_KEYS: secret(undefined, 'keys').refine(
		(value) => value === undefined || value.split(',').every((key) => parseKey(key) !== undefined),
		{
			error: `must be a comma-separated list of keys; each ${KEY_RULE}`,
		},
	),
	SLACK_WORKSPACES_KEPT: integer(1, 1_000_000, 10_000),
	SLACK_WORKSPACE_IDLE_MINUTES: integer(1, 7 * 24 * 60, 60),
	SLACK_INSTALLATION_DB: optionalText.transform(
		(value) => value ?? '.gpu-cloud-slack/installations.sqlite',
	),
	DATABASE_URL: secret(undefined, 'a PostgreSQL URL').refine(
		(value) => value === undefined || /^postgres(ql)?:\/\/[^\s]+$/.test(value),
		{
			error: 'must be a PostgreSQL connection URL (postgres://user:password@host:5432/database)',
		},
	),
	REDIS_URL: optionalText.refine(
		(value) => value === undefined || /^rediss?:\/\/[^\s]+$/.test(value),
		{
			error: 'must be a redis:// or rediss:// URL (for example redis://127.0.0.1:6379/0)',
		},
	),
	LOG_LEVEL: optionalText
		.refine((value) => value === undefined || (LOG_LEVELS as readonly string[]).includes(value), {
			error: `must be one of ${LOG_LEVELS.join(', ')}`,
		})
		.transform((value) => LOG_LEVELS.find((level) => level === value) ?? LOG_LEVELS[1]),
});

/** Every setting `loadConfig` reads; `.env.example` documents each (test/runtime/settings.test.ts). */
export const SETTING_NAMES: readonly string[] = Object.keys(envSchema.shape);

type Env = Record<string, string | undefined>;

/** Reads and checks the whole configuration; throws one ConfigError listing every problem. */
export function loadConfig(env: Env): AppConfig {
	const parsed = envSchema.safeParse(env);
	if (!parsed.success) {
		throw new ConfigError(
			parsed.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`),
		);
	}
	const e = parsed.data;
	const problems: string[] = [];
	const required = <T>(name: string, value: T | undefined, why: string): T | undefined => {
		if (value === undefined) problems.push(`${name} is required (${why})`);
		return value;
	};

	const distribution = readDistribution(e, problems);
	const storage = readStorage(e, problems);
	const botToken = distribution
		? e.SLACK_BOT_TOKEN
		: required('SLACK_BOT_TOKEN', e.SLACK_BOT_TOKEN, 'the bot token from OAuth & Permissions');
	const socket = e.SLACK_APP_TOKEN !== undefined;
	if (distribution && socket)
		problems.push(
			'SLACK_APP_TOKEN must be unset when SLACK_CLIENT_ID is set (installing in several workspaces needs HTTP mode for its OAuth redirect)',
		);
	const signingSecret = socket
		? e.SLACK_SIGNING_SECRET
		: required(
				'SLACK_SIGNING_SECRET',
				e.SLACK_SIGNING_SECRET,
				'HTTP mode verifies every request from Slack with it',
			);
	const baseUrl = required(
		'GPU_CLOUD_BASE_URL',
		e.GPU_CLOUD_BASE_URL,
		'the management API root, ending in /api/public',
	);
	// Distributed, each workspace links its own organization and key (/gpu setup).
	const apiKey = distribution
		? (e.GPU_CLOUD_API_KEY ?? '')
		: required('GPU_CLOUD_API_KEY', e.GPU_CLOUD_API_KEY, 'sent as the Service-Api-Key header');
	const organization = distribution
		? (e.GPU_CLOUD_ORGANIZATION ?? '')
		: required(
				'GPU_CLOUD_ORGANIZATION',
				e.GPU_CLOUD_ORGANIZATION,
				'the organization that owns the jobs',
			);
	const appSecret = e.SLACK_APP_SECRET ?? signingSecret;
	if (socket && appSecret === undefined) {
		problems.push(
			'SLACK_APP_SECRET is required in Socket Mode without SLACK_SIGNING_SECRET (the app seals the Slack thread it writes into job metadata with it)',
		);
	}
	if (
		problems.length > 0 ||
		(!botToken && !distribution) ||
		!baseUrl ||
		apiKey === undefined ||
		organization === undefined ||
		!appSecret
	)
		throw new ConfigError(problems);

	const common = {
		botToken,
		port: e.PORT,
		host: e.HOST,
		apiUrl: e.SLACK_API_URL,
		nativeStreaming: e.SLACK_NATIVE_STREAMING,
	};
	const slack =
		socket && e.SLACK_APP_TOKEN && botToken
			? { ...common, botToken, mode: 'socket' as const, appToken: e.SLACK_APP_TOKEN, signingSecret }
			: { ...common, mode: 'http' as const, signingSecret: signingSecret ?? '' };

	return {
		slack,
		...(distribution ? { distribution } : {}),
		service: {
			baseUrl,
			apiKey,
			organization,
			project: e.GPU_CLOUD_PROJECT,
			imageUrl: e.GPU_CLOUD_IMAGE_URL,
			imageWorkflow: e.GPU_CLOUD_IMAGE_WORKFLOW,
			chatUrl: e.GPU_CLOUD_CHAT_URL,
			chatModel: e.GPU_CLOUD_CHAT_MODEL,
			webhookSecret: e.GPU_CLOUD_WEBHOOK_SECRET,
		},
		appSecret,
		publicUrl: e.SLACK_PUBLIC_URL?.replace(/\/+$/, ''),
		webhookPath: e.SLACK_WEBHOOK_PATH,
		fileLinkTtlMs: e.SLACK_FILE_LINK_TTL_MINUTES * 60_000,
		storage,
		access: {
			allowedUsers: e.SLACK_ALLOWED_USERS,
			allowedChannels: e.SLACK_ALLOWED_CHANNELS,
			maxJobsPerUser: e.SLACK_MAX_JOBS_PER_USER,
			contact: e.SLACK_ACCESS_CONTACT,
		},
		stateFile: e.SLACK_STATE_FILE,
		resumeWindowHours: e.SLACK_RESUME_WINDOW_HOURS,
		pollIntervalMs: e.SLACK_POLL_INTERVAL_MS || (e.SLACK_PUBLIC_URL ? 30_000 : 10_000),
		logLevel: e.LOG_LEVEL,
		shutdownTimeoutMs: e.SLACK_SHUTDOWN_TIMEOUT_SECONDS * 1000,
		redisUrl: e.REDIS_URL,
	};
}

/** How the storage errors name each setting: by its variable. */
export const STORAGE_LABELS: ObjectStorageLabels = {
	endpoint: 'SLACK_STORAGE_ENDPOINT',
	region: 'SLACK_STORAGE_REGION',
	bucket: 'SLACK_STORAGE_BUCKET',
	keyPrefix: 'SLACK_STORAGE_KEY_PREFIX',
	accessKeyId: 'SLACK_STORAGE_ACCESS_KEY_ID',
	secretAccessKey: 'SLACK_STORAGE_SECRET_ACCESS_KEY',
	addressing: 'SLACK_STORAGE_ADDRESSING',
};

/** The object storage settings, when SLACK_STORAGE_ENDPOINT is set: each checked, named by its variable. */
function readStorage(
	e: z.infer<typeof envSchema>,
	problems: string[],
): ObjectStorageSettings | undefined {
	if (e.SLACK_STORAGE_ENDPOINT === undefined) return undefined;
	const parsed = objectStorageSettingsSchema.safeParse({
		endpoint: e.SLACK_STORAGE_ENDPOINT,
		region: e.SLACK_STORAGE_REGION,
		bucket: e.SLACK_STORAGE_BUCKET,
		keyPrefix: e.SLACK_STORAGE_KEY_PREFIX,
		accessKeyId: e.SLACK_STORAGE_ACCESS_KEY_ID,
		secretAccessKey: e.SLACK_STORAGE_SECRET_ACCESS_KEY,
		addressing: e.SLACK_STORAGE_ADDRESSING,
	});
	if (parsed.success) return parsed.data;
	for (const issue of parsed.error.issues) {
		const field = issue.path[0];
		const name =
			Object.entries(STORAGE_LABELS).find(([key]) => key === field)?.[1] ?? 'SLACK_STORAGE_*';
		problems.push(`${name} ${issue.message} (with SLACK_STORAGE_ENDPOINT set)`);
	}
	return undefined;
}

/** The OAuth settings, all or none, and the key the installation store needs with them. */
function readDistribution(
	e: z.infer<typeof envSchema>,
	problems: string[],
): Distribution | undefined {
	const oauth = {
		SLACK_CLIENT_ID: e.SLACK_CLIENT_ID,
		SLACK_CLIENT_SECRET: e.SLACK_CLIENT_SECRET,
		SLACK_STATE_SECRET: e.SLACK_STATE_SECRET,
	};
	const set = Object.entries(oauth).filter(([, value]) => value !== undefined);
	if (set.length === 0) return undefined;
	for (const [name, value] of Object.entries(oauth)) {
		if (value === undefined)
			problems.push(
				`${name} is required with ${set.map(([other]) => other).join(' and ')} (installing in several workspaces needs all three)`,
			);
	}
	const installationKey = e.SLACK_INSTALLATION_KEY ? parseKey(e.SLACK_INSTALLATION_KEY) : undefined;
	if (!e.SLACK_INSTALLATION_KEY)
		problems.push(
			'SLACK_INSTALLATION_KEY is required with SLACK_CLIENT_ID (the bot tokens and API keys are stored encrypted with it)',
		);
	if (!e.SLACK_CLIENT_ID || !e.SLACK_CLIENT_SECRET || !e.SLACK_STATE_SECRET || !installationKey)
		return undefined;
	return {
		clientId: e.SLACK_CLIENT_ID,
		clientSecret: e.SLACK_CLIENT_SECRET,
		stateSecret: e.SLACK_STATE_SECRET,
		databaseUrl: e.DATABASE_URL,
		sqliteFile: e.SLACK_INSTALLATION_DB,
		installationKey,
		previousKeys: (e.SLACK_INSTALLATION_PREVIOUS_KEYS?.split(',') ?? [])
			.map((key) => parseKey(key))
			.filter((key): key is Buffer => key !== undefined),
		keptWorkspaces: e.SLACK_WORKSPACES_KEPT,
		idleReleaseMs: e.SLACK_WORKSPACE_IDLE_MINUTES * 60_000,
	};
}

/**
 * The settings: the process environment over an optional env file (`KEY=value` lines, as
 * `.env.example`). A variable set in the environment wins, so a deployment can override one line. A
 * missing default file is fine; a missing file the operator named is an error.
 */
export async function readSettings(
	env: Env,
	file: { path: string; required: boolean },
): Promise<Env> {
	let content: string;
	try {
		content = await readFile(file.path, 'utf8');
	} catch (error) {
		const code = fileErrorCode(error) ?? 'unreadable';
		if (!file.required && code === 'ENOENT') return { ...env };
		throw new ConfigError([`the env file ${file.path} cannot be read (${code})`]);
	}
	return { ...parseEnv(content), ...env };
}

/** Every secret value in the configuration: the logger writes none of them, whoever passes one. */
export function configSecrets(config: AppConfig): string[] {
	const { slack, service } = config;
	const d = config.distribution;
	const distributed = d
		? [
				d.clientSecret,
				d.stateSecret,
				d.databaseUrl,
				d.installationKey.toString('hex'),
				d.installationKey.toString('base64'),
			]
		: [];
	return [
		slack.botToken,
		slack.signingSecret,
		slack.mode === 'socket' ? slack.appToken : undefined,
		config.appSecret,
		config.storage?.secretAccessKey,
		service.apiKey,
		service.webhookSecret,
		redisPassword(config.redisUrl),
		...distributed,
	].filter((secret): secret is string => secret !== undefined && secret !== '');
}

function redisPassword(url: string | undefined): string | undefined {
	if (!url) return undefined;
	try {
		return decodeURIComponent(new URL(url).password) || undefined;
	} catch {
		return undefined;
	}
}

/** The settings worth printing at start: everything except secrets. */
export function describeConfig(config: AppConfig): string {
	const s = config.service;
	return [
		`Slack: ${config.slack.mode === 'socket' ? 'Socket Mode' : `HTTP on ${config.slack.host}:${config.slack.port}`}` +
			(config.slack.apiUrl ? ` (Web API at ${config.slack.apiUrl})` : ''),
		config.distribution
			? `GPU Cloud: ${s.baseUrl}, each workspace's own organization (linked with /gpu setup)\n` +
				`Installs: /slack/install; installations in ${config.distribution.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : config.distribution.sqliteFile}`
			: `GPU Cloud: ${s.baseUrl}, organization ${s.organization}${s.project ? `, project ${s.project}` : ''}`,
		`Images: ${s.imageUrl ? `${s.imageUrl} (workflow ${s.imageWorkflow})` : 'off (GPU_CLOUD_IMAGE_URL unset)'}`,
		`Chat: ${s.chatUrl ?? 'off (GPU_CLOUD_CHAT_URL unset)'}`,
		`Job completion: ${config.publicUrl ? `webhook at ${config.publicUrl}${config.webhookPath}${config.distribution ? '/<team id>' : ''}` : 'polling (SLACK_PUBLIC_URL unset)'}`,
		`Access: ${config.access.allowedUsers.length || 'all'} users, ${config.access.allowedChannels.length || 'all'} channels, ` +
			`${config.access.maxJobsPerUser} concurrent jobs per user`,
		`Replicas: ${config.redisUrl ? `state shared through Redis at ${redisHost(config.redisUrl)}` : 'one process (REDIS_URL unset)'}`,
	].join('\n');
}

/** Where Redis is, without its credentials. */
function redisHost(url: string): string {
	try {
		return new URL(url).host;
	} catch {
		return 'the configured URL';
	}
}
