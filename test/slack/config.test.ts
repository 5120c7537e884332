import { ConfigError, configSecrets, describeConfig, loadConfig } from '../../slack-app/config';

const BOT_TOKEN = 'xoxb-1111-secret-bot-token';
const SIGNING_SECRET = 'signing-secret-value-1234';
const API_KEY = 'service-api-key-value-5678';

const base = {
	SLACK_BOT_TOKEN: BOT_TOKEN,
	SLACK_SIGNING_SECRET: SIGNING_SECRET,
	GPU_CLOUD_BASE_URL: 'https://api.example.com/api/public',
	GPU_CLOUD_API_KEY: API_KEY,
	GPU_CLOUD_ORGANIZATION: 'acme',
};

function problems(env: Record<string, string | undefined>): string[] {
	try {
		loadConfig(env);
	} catch (error) {
		if (error instanceof ConfigError) return error.problems;
		throw error;
	}
	throw new Error('expected a ConfigError');
}

describe('Slack app configuration', () => {
	it('reads HTTP mode with defaults', () => {
		const config = loadConfig(base);
		expect(config.slack).toMatchObject({
			mode: 'http',
			port: 3000,
			host: '0.0.0.0',
			nativeStreaming: true,
		});
		expect(config.access).toEqual({
			allowedUsers: [],
			allowedChannels: [],
			maxJobsPerUser: 3,
			contact: 'a workspace admin',
		});
		expect(config.publicUrl).toBeUndefined();
		expect(config.webhookPath).toBe('/gpu-cloud/webhook');
	});

	it('switches to Socket Mode with an app token, where the signing secret is optional', () => {
		const config = loadConfig({
			...base,
			SLACK_SIGNING_SECRET: undefined,
			SLACK_APP_TOKEN: 'xapp-1-abc',
			SLACK_APP_SECRET: 'a'.repeat(32),
		});
		expect(config.slack.mode).toBe('socket');
		expect(config.appSecret).toBe('a'.repeat(32));
	});

	it('seals job metadata with the signing secret unless SLACK_APP_SECRET is set', () => {
		expect(loadConfig(base).appSecret).toBe(SIGNING_SECRET);
		expect(
			problems({ ...base, SLACK_SIGNING_SECRET: undefined, SLACK_APP_TOKEN: 'xapp-1-abc' }),
		).toEqual([
			'SLACK_APP_SECRET is required in Socket Mode without SLACK_SIGNING_SECRET (the app seals the Slack thread it writes into job metadata with it)',
		]);
		expect(problems({ ...base, SLACK_APP_SECRET: 'short-secret' })).toEqual([
			'SLACK_APP_SECRET must be at least 32 characters (for example `openssl rand -hex 32`)',
		]);
	});

	it('lists every missing setting at once, saying what each is for', () => {
		const list = problems({});
		expect(list).toEqual([
			'SLACK_BOT_TOKEN is required (the bot token from OAuth & Permissions)',
			'SLACK_SIGNING_SECRET is required (HTTP mode verifies every request from Slack with it)',
			'GPU_CLOUD_BASE_URL is required (the management API root, ending in /api/public)',
			'GPU_CLOUD_API_KEY is required (sent as the Service-Api-Key header)',
			'GPU_CLOUD_ORGANIZATION is required (the organization that owns the jobs)',
		]);
	});

	it('names malformed values without echoing secrets', () => {
		const list = problems({
			...base,
			SLACK_BOT_TOKEN: 'xoxp-user-token-secret',
			SLACK_APP_TOKEN: 'bad-app-token-secret',
			PORT: 'eighty',
			GPU_CLOUD_ORGANIZATION: 'Acme Inc',
			SLACK_ALLOWED_USERS: 'alice',
			GPU_CLOUD_BASE_URL: 'api.example.com',
		});
		expect(list).toEqual([
			'SLACK_BOT_TOKEN must be a bot token (it starts with "xoxb-")',
			'SLACK_APP_TOKEN must be an app-level token with connections:write (it starts with "xapp-")',
			'PORT must be a whole number from 0 to 65535',
			'GPU_CLOUD_BASE_URL must be a full http:// or https:// URL',
			expect.stringMatching(/^GPU_CLOUD_ORGANIZATION must be 2-63 lower-case letters/),
			expect.stringMatching(
				/^SLACK_ALLOWED_USERS must be a comma-separated list of Slack user IDs/,
			),
		]);
		expect(list.join('\n')).not.toMatch(/secret/);
	});

	it('parses allow-lists, limits and the public URL', () => {
		const config = loadConfig({
			...base,
			SLACK_ALLOWED_USERS: 'U1AAA, U2BBB',
			SLACK_ALLOWED_CHANNELS: 'C1',
			SLACK_MAX_JOBS_PER_USER: '5',
			SLACK_PUBLIC_URL: 'https://bot.example.com/',
			SLACK_ACCESS_CONTACT: '<@U0ADMIN>',
		});
		expect(config.access).toEqual({
			allowedUsers: ['U1AAA', 'U2BBB'],
			allowedChannels: ['C1'],
			maxJobsPerUser: 5,
			contact: '<@U0ADMIN>',
		});
		expect(config.publicUrl).toBe('https://bot.example.com');
	});

	it('describes itself without any secret', () => {
		const text = describeConfig(
			loadConfig({
				...base,
				SLACK_PUBLIC_URL: 'https://bot.example.com',
				GPU_CLOUD_WEBHOOK_SECRET: 'whsec_c2VjcmV0',
			}),
		);
		for (const secret of [BOT_TOKEN, SIGNING_SECRET, API_KEY, 'c2VjcmV0'])
			expect(text).not.toContain(secret);
		expect(text).toContain('webhook at https://bot.example.com/gpu-cloud/webhook');
	});
});

describe('installing in several workspaces (OAuth)', () => {
	const KEY = 'ab'.repeat(32);
	const CLIENT_SECRET = 'client-secret-value-0000';
	const STATE_SECRET = 's'.repeat(40);
	const base = {
		SLACK_SIGNING_SECRET: SIGNING_SECRET,
		GPU_CLOUD_BASE_URL: 'https://api.example.com/api/public',
	};
	const oauth = {
		SLACK_CLIENT_ID: '1111.2222',
		SLACK_CLIENT_SECRET: CLIENT_SECRET,
		SLACK_STATE_SECRET: STATE_SECRET,
		SLACK_INSTALLATION_KEY: KEY,
	};

	test('with the three OAuth settings and a key, no bot token, API key or organization is needed', () => {
		const config = loadConfig({ ...base, ...oauth });
		expect(config.slack.botToken).toBeUndefined();
		expect(config.distribution).toMatchObject({
			clientId: '1111.2222',
			sqliteFile: '.gpu-cloud-slack/installations.sqlite',
			databaseUrl: undefined,
			previousKeys: [],
		});
		expect(config.distribution?.installationKey.toString('hex')).toBe(KEY);
		// The logger's list of values never written holds every distribution secret.
		expect(configSecrets(config)).toEqual(
			expect.arrayContaining([CLIENT_SECRET, STATE_SECRET, KEY]),
		);
		expect(describeConfig(config)).toContain("each workspace's own organization");
		expect(describeConfig(config)).not.toContain(CLIENT_SECRET);
	});

	test('DATABASE_URL selects PostgreSQL; previous keys are read for rotation', () => {
		const previous = 'cd'.repeat(32);
		const config = loadConfig({
			...base,
			...oauth,
			DATABASE_URL: 'postgres://app:pw@db.internal:5432/slack',
			SLACK_INSTALLATION_PREVIOUS_KEYS: previous,
		});
		expect(config.distribution?.databaseUrl).toBe('postgres://app:pw@db.internal:5432/slack');
		expect(config.distribution?.previousKeys.map((key) => key.toString('hex'))).toEqual([previous]);
	});

	test('a partial OAuth setup names what is missing; a bad key or URL names the rule, never the value', () => {
		const partial = problems({ ...base, SLACK_CLIENT_ID: '1111.2222' });
		expect(partial).toEqual(
			expect.arrayContaining([
				expect.stringMatching(/^SLACK_CLIENT_SECRET is required with SLACK_CLIENT_ID/),
				expect.stringMatching(/^SLACK_STATE_SECRET is required with SLACK_CLIENT_ID/),
				expect.stringMatching(/^SLACK_INSTALLATION_KEY is required/),
			]),
		);
		const bad = problems({
			...base,
			...oauth,
			SLACK_INSTALLATION_KEY: 'too-short-secret-key',
			DATABASE_URL: 'mysql://secret-password@host/db',
		});
		expect(bad.join('\n')).toMatch(/SLACK_INSTALLATION_KEY must be 32 random bytes/);
		expect(bad.join('\n')).toMatch(/DATABASE_URL must be a PostgreSQL connection URL/);
		expect(bad.join('\n')).not.toMatch(/too-short-secret-key|secret-password/);
	});

	test('Socket Mode cannot serve the OAuth redirect', () => {
		expect(problems({ ...base, ...oauth, SLACK_APP_TOKEN: 'xapp-1-abc' })).toEqual([
			expect.stringMatching(/^SLACK_APP_TOKEN must be unset when SLACK_CLIENT_ID is set/),
		]);
	});

	test('without OAuth settings the single-workspace token mode is unchanged', () => {
		expect(problems(base)).toEqual(
			expect.arrayContaining([
				expect.stringMatching(/^SLACK_BOT_TOKEN is required/),
				expect.stringMatching(/^GPU_CLOUD_API_KEY is required/),
			]),
		);
	});
});
