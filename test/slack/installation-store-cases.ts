import { randomBytes } from 'node:crypto';
import { DatabaseSync } from 'node:sqlite';
import type { Installation } from '@slack/oauth';
import { SecretCipher } from '../../slack-app/state/installations/cipher';
import {
	InstallationStore,
	UnreadableRowError,
	type StoreLocation,
} from '../../slack-app/state/installations/store';

/**
 * The installation store's contract, run on SQLite in `npm test` (installation-store.test.ts) and on
 * a real PostgreSQL in `npm run test:db` (test/db/installation-store.db.ts).
 */

export interface StoreBackend {
	/** A fresh, empty database. */
	location(): Promise<StoreLocation>;
	/** Every byte the database keeps (the SQLite file, or a dump of the PostgreSQL tables). */
	raw(location: StoreLocation): Promise<string>;
	/** Runs SQL on the database behind the store's back, as someone with access to it would. */
	alter(location: StoreLocation, statements: string[]): Promise<void>;
}

/** Runs SQL on a SQLite installation file while no store has it open. */
export async function alterSqlite(file: string, statements: string[]): Promise<void> {
	const db = new DatabaseSync(file);
	try {
		for (const statement of statements) db.exec(statement);
	} finally {
		db.close();
	}
}

/** Swaps two workspaces' installation rows, sealed columns and all (SQL both engines read alike). */
export function swapInstallations(a: string, b: string): string[] {
	return [
		`UPDATE installations SET install_key = 'TSWAPPING' WHERE install_key = '${a}'`,
		`UPDATE installations SET install_key = '${a}' WHERE install_key = '${b}'`,
		`UPDATE installations SET install_key = '${b}' WHERE install_key = 'TSWAPPING'`,
	];
}

/** Changes one character in the middle of a workspace's sealed API key. */
export function alterLinkKey(team: string): string[] {
	const at = 'length(api_key) - 5';
	return [
		`UPDATE workspace_links SET api_key = substr(api_key, 1, ${at} - 1) || CASE WHEN substr(api_key, ${at}, 1) = 'A' THEN 'B' ELSE 'A' END || substr(api_key, ${at} + 1) WHERE team_id = '${team}'`,
	];
}

export const TOKEN_A = `xoxb-${'1'.repeat(12)}-team-a-${randomBytes(12).toString('hex')}`;
export const TOKEN_B = `xoxb-${'2'.repeat(12)}-team-b-${randomBytes(12).toString('hex')}`;
const API_KEY = `gpu-key-${randomBytes(16).toString('hex')}`;

export function installation(team: string, token: string): Installation<'v2', false> {
	return {
		team: { id: team, name: `Workspace ${team}` },
		enterprise: undefined,
		user: { id: 'UINSTALLER', token: undefined, scopes: undefined },
		bot: { token, scopes: ['commands', 'chat:write'], id: `B${team}`, userId: `U${team}BOT` },
		appId: 'A0GPUCLOUD',
		tokenType: 'bot',
		isEnterpriseInstall: false,
		authVersion: 'v2',
	};
}

export function installationStoreCases(backend: StoreBackend): void {
	const key = randomBytes(32);
	const open = (location: StoreLocation, cipher = new SecretCipher(key)) =>
		InstallationStore.open(location, cipher);

	test('migrations run at start, once, and leave the schema at its newest version', async () => {
		const location = await backend.location();
		const first = await open(location);
		expect(await first.schemaVersion()).toBe(3);
		await first.close();
		const second = await open(location);
		expect(await second.schemaVersion()).toBe(3);
		await second.close();
	});

	test('an installation and a link are read back, and reopened; the raw database holds neither secret', async () => {
		const location = await backend.location();
		const store = await open(location);
		await store.saveInstallation(installation('TAAAA', TOKEN_A));
		await store.saveInstallation(installation('TBBBB', TOKEN_B));
		await store.saveLink({
			teamId: 'TAAAA',
			organization: 'acme',
			apiKey: API_KEY,
			linkedBy: 'UADMIN',
		});
		await store.close();

		const reopened = await open(location);
		expect((await reopened.findInstallation({ teamId: 'TAAAA' }))?.bot?.token).toBe(TOKEN_A);
		expect((await reopened.findInstallation({ teamId: 'TBBBB' }))?.bot?.token).toBe(TOKEN_B);
		expect(await reopened.findInstallation({ teamId: 'TCCCC' })).toBeUndefined();
		expect(await reopened.findLink('TAAAA')).toMatchObject({
			organization: 'acme',
			apiKey: API_KEY,
			linkedBy: 'UADMIN',
			shareJobs: false,
		});
		expect(await reopened.findLink('TBBBB')).toBeUndefined();
		expect(await reopened.teams()).toEqual(['TAAAA', 'TBBBB']);
		await reopened.close();

		const raw = await backend.raw(location);
		expect(raw).toContain('TAAAA');
		for (const secret of [TOKEN_A, TOKEN_B, API_KEY, 'xoxb-', 'gpu-key-'])
			expect(raw).not.toContain(secret);
	});

	test('a wrong key stops the start, saying which setting to fix, and shows no secret', async () => {
		const location = await backend.location();
		const store = await open(location);
		await store.saveInstallation(installation('TAAAA', TOKEN_A));
		await store.close();
		const refused = open(location, new SecretCipher(randomBytes(32)));
		await expect(refused).rejects.toThrow(/SLACK_INSTALLATION_PREVIOUS_KEYS/);
		await expect(refused).rejects.not.toThrow(TOKEN_A);
	});

	test('a rotated key: the previous key still opens, and the rows it sealed are sealed again with the new key', async () => {
		const location = await backend.location();
		const store = await open(location);
		await store.saveInstallation(installation('TAAAA', TOKEN_A));
		await store.saveLink({
			teamId: 'TAAAA',
			organization: 'acme',
			apiKey: API_KEY,
			linkedBy: 'UADMIN',
		});
		await store.close();
		const newKey = randomBytes(32);
		const rotated = await open(location, new SecretCipher(newKey, [key]));
		await rotated.close();
		// Without the previous key from now on: the new one alone opens everything.
		const after = await open(location, new SecretCipher(newKey));
		expect((await after.findInstallation({ teamId: 'TAAAA' }))?.bot?.token).toBe(TOKEN_A);
		expect((await after.findLink('TAAAA'))?.apiKey).toBe(API_KEY);
		await after.close();
	});

	test('uninstalling deletes the workspace installation and link, and only that workspace', async () => {
		const location = await backend.location();
		const store = await open(location);
		await store.saveInstallation(installation('TAAAA', TOKEN_A));
		await store.saveInstallation(installation('TBBBB', TOKEN_B));
		await store.saveLink({
			teamId: 'TAAAA',
			organization: 'acme',
			apiKey: API_KEY,
			linkedBy: 'UADMIN',
		});
		await store.deleteWorkspace('TAAAA');
		expect(await store.findInstallation({ teamId: 'TAAAA' })).toBeUndefined();
		expect(await store.findLink('TAAAA')).toBeUndefined();
		expect((await store.findInstallation({ teamId: 'TBBBB' }))?.bot?.token).toBe(TOKEN_B);
		await store.close();
		const raw = await backend.raw(location);
		expect(raw).not.toContain('TAAAA');
	});

	test("through @slack/oauth's interface: store, fetch, delete", async () => {
		const location = await backend.location();
		const store = await open(location);
		const slack = store.forSlack();
		await slack.storeInstallation(installation('TAAAA', TOKEN_A));
		expect(
			(
				await slack.fetchInstallation({
					teamId: 'TAAAA',
					enterpriseId: undefined,
					isEnterpriseInstall: false,
				})
			).bot?.token,
		).toBe(TOKEN_A);
		await slack.deleteInstallation?.({
			teamId: 'TAAAA',
			enterpriseId: undefined,
			isEnterpriseInstall: false,
		});
		await expect(
			slack.fetchInstallation({
				teamId: 'TAAAA',
				enterpriseId: undefined,
				isEnterpriseInstall: false,
			}),
		).rejects.toThrow(/not installed/);
		await store.close();
	});

	test('an OAuth state opens one install: taken once, never after it expired, unknown ones never', async () => {
		let now = new Date('2026-11-24T12:00:00Z');
		const store = await InstallationStore.open(
			await backend.location(),
			new SecretCipher(key),
			() => now,
		);
		const later = (ms: number) => new Date(now.getTime() + ms);
		await store.saveOAuthState('used', '{"scopes":["commands"]}', later(600_000));
		await store.saveOAuthState('expiring', '{"scopes":["commands"]}', later(600_000));
		expect(await store.takeOAuthState('used')).toBe('{"scopes":["commands"]}');
		expect(await store.takeOAuthState('used')).toBeUndefined();
		expect(await store.takeOAuthState('never-issued')).toBeUndefined();
		now = later(600_001);
		expect(await store.takeOAuthState('expiring')).toBeUndefined();
		await store.close();
	});

	test('a row that does not open is refused for its own workspace; every other workspace reads', async () => {
		const location = await backend.location();
		const store = await open(location);
		const teams = ['TAAAA', 'TBBBB', 'TCCCC', 'TDDDD'];
		for (const team of teams) {
			await store.saveInstallation(
				installation(team, `xoxb-${team}-${randomBytes(8).toString('hex')}`),
			);
			await store.saveLink({ teamId: team, organization: 'acme', apiKey: API_KEY, linkedBy: 'U1' });
		}
		await store.close();
		await backend.alter(location, [
			...swapInstallations('TAAAA', 'TBBBB'),
			...alterLinkKey('TCCCC'),
		]);

		const reopened = await open(location);
		// Found when read, not at start.
		expect(reopened.unreadableWorkspaces()).toEqual([]);
		await expect(reopened.findInstallation({ teamId: 'TAAAA' })).rejects.toThrow(
			UnreadableRowError,
		);
		await expect(reopened.findInstallation({ teamId: 'TBBBB' })).rejects.toThrow(/install/);
		await expect(reopened.findLink('TCCCC')).rejects.toThrow(/\/gpu setup/);
		expect((await reopened.findInstallation({ teamId: 'TCCCC' }))?.bot?.userId).toBe('UTCCCCBOT');
		expect((await reopened.findInstallation({ teamId: 'TDDDD' }))?.bot?.userId).toBe('UTDDDDBOT');
		expect((await reopened.findLink('TDDDD'))?.apiKey).toBe(API_KEY);
		expect(reopened.unreadableWorkspaces()).toEqual(['TAAAA', 'TBBBB', 'TCCCC']);
		// Installed and linked again: readable again.
		await reopened.saveInstallation(installation('TAAAA', TOKEN_A));
		await reopened.saveLink({
			teamId: 'TCCCC',
			organization: 'acme',
			apiKey: API_KEY,
			linkedBy: 'U1',
		});
		expect(reopened.unreadableWorkspaces()).toEqual(['TBBBB']);
		expect((await reopened.findInstallation({ teamId: 'TAAAA' }))?.bot?.token).toBe(TOKEN_A);
		await reopened.close();
	});
}
