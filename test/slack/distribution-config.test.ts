import { ConfigError, configSecrets, loadConfig } from '../../slack-app/config';

/** The settings of an app installed in several workspaces: all or none, checked at start, secrets never echoed. */

const KEY = 'ab'.repeat(32);
const CLIENT_SECRET = 'client-secret-value-0000';
const STATE_SECRET = 's'.repeat(40);
const base = {
  SLACK_SIGNING_SECRET: 'signing-secret-value-1234',
  GPU_CLOUD_BASE_URL: 'https://api.example.com/api/public',
};
const oauth = { SLACK_CLIENT_ID: '1111.2222', SLACK_CLIENT_SECRET: CLIENT_SECRET, SLACK_STATE_SECRET: STATE_SECRET, SLACK_INSTALLATION_KEY: KEY };

function problems(env: Record<string, string | undefined>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

test('with the three OAuth settings and a key, no bot token, API key or organization is needed', () => {
  const config = loadConfig({ ...base, ...oauth });
  expect(config.slack.botToken).toBeUndefined();
  expect(config.distribution).toMatchObject({ clientId: '1111.2222', sqliteFile: '.gpu-cloud-slack/installations.sqlite', databaseUrl: undefined, previousKeys: [] });
  expect(config.distribution?.installationKey.toString('hex')).toBe(KEY);
  // The logger's list of values never written holds every distribution secret.
  expect(configSecrets(config)).toEqual(expect.arrayContaining([CLIENT_SECRET, STATE_SECRET, KEY]));
});

test('DATABASE_URL selects PostgreSQL; previous keys are read for rotation', () => {
  const previous = 'cd'.repeat(32);
  const config = loadConfig({ ...base, ...oauth, DATABASE_URL: 'postgres://app:pw@db.internal:5432/slack', SLACK_INSTALLATION_PREVIOUS_KEYS: previous });
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
  const bad = problems({ ...base, ...oauth, SLACK_INSTALLATION_KEY: 'too-short-secret-key', DATABASE_URL: 'mysql://secret-password@host/db' });
  expect(bad.join('\n')).toMatch(/SLACK_INSTALLATION_KEY must be 32 random bytes/);
  expect(bad.join('\n')).toMatch(/DATABASE_URL must be a PostgreSQL connection URL/);
  expect(bad.join('\n')).not.toMatch(/too-short-secret-key|secret-password/);
});

test('Socket Mode cannot serve the OAuth redirect', () => {
  expect(problems({ ...base, ...oauth, SLACK_APP_TOKEN: 'xapp-1-abc' })).toEqual([expect.stringMatching(/^SLACK_APP_TOKEN must be unset when SLACK_CLIENT_ID is set/)]);
});

test('without OAuth settings the single-workspace token mode is unchanged', () => {
  expect(problems(base)).toEqual(expect.arrayContaining([expect.stringMatching(/^SLACK_BOT_TOKEN is required/), expect.stringMatching(/^GPU_CLOUD_API_KEY is required/)]));
});
