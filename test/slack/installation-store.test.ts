import { copyFile, mkdir, mkdtemp, readFile, readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { SecretCipher } from '../../slack-app/state/installations/cipher';
import { InstallationStore } from '../../slack-app/state/installations/store';
import {
	alterSqlite,
	installation,
	installationStoreCases,
	TOKEN_A,
} from './installation-store-cases';

/** The installation store on its embedded default, SQLite in a file (node:sqlite, no native build). */

let count = 0;
let dir: string;
beforeAll(async () => {
	dir = await mkdtemp(join(tmpdir(), 'installation-store-'));
});

const location = () => ({ sqliteFile: join(dir, `nested-${++count}`, 'installations.sqlite') });

installationStoreCases({
	location: async () => location(),
	raw: async (location) => {
		// Closed, the store leaves its one file: no journal, no temporary copy beside it.
		const folder = join(location.sqliteFile, '..');
		expect(await readdir(folder)).toEqual(['installations.sqlite']);
		return (await readFile(location.sqliteFile)).toString('latin1');
	},
	alter: (location, statements) => alterSqlite(location.sqliteFile, statements),
});

test('a write changes its rows in the file, which stays the same file (never rewritten whole), readable by its owner alone', async () => {
	const where = location();
	const store = await InstallationStore.open(where, new SecretCipher(Buffer.alloc(32, 7)));
	try {
		const before = await stat(where.sqliteFile);
		await store.saveInstallation(installation('TAAAA', TOKEN_A));
		await store.saveLink({
			teamId: 'TAAAA',
			organization: 'acme',
			apiKey: 'gpu-key-x',
			linkedBy: 'U1',
		});
		await store.deleteWorkspace('TAAAA');
		const after = await stat(where.sqliteFile);
		expect(after.ino).toBe(before.ino);
		expect(after.mode & 0o777).toBe(0o600);
	} finally {
		await store.close();
	}
});

/**
 * A store file as versions before node:sqlite wrote it (sql.js, the whole file exported on every
 * change; made with that code on 2026-11-28 under a test key of 0x4f bytes): an installation of
 * TOLDSTORE and of TOLDOTHER, TOLDSTORE's link (shared jobs on), one OAuth state.
 */
const SQLJS_FIXTURE = join(__dirname, 'fixtures', 'installations-sqljs.sqlite');

test('a store file written by the sql.js versions opens as it is: every row reads, and new writes land beside them', async () => {
	const where = location();
	await mkdir(dirname(where.sqliteFile), { recursive: true });
	await copyFile(SQLJS_FIXTURE, where.sqliteFile);
	const cipher = new SecretCipher(Buffer.alloc(32, 0x4f));
	const store = await InstallationStore.open(where, cipher);
	try {
		expect(await store.schemaVersion()).toBe(3);
		expect((await store.findInstallation({ teamId: 'TOLDSTORE' }))?.bot?.token).toBe(
			'xoxb-0000-fixture-old-store-token',
		);
		expect(await store.findLink('TOLDSTORE')).toMatchObject({
			organization: 'acme',
			apiKey: 'gpu-key-fixture-old-store',
			shareJobs: true,
		});
		expect(await store.takeOAuthState('fixture-state')).toBe('{"scopes":["commands"]}');
		await store.saveInstallation(installation('TNEWTEAM', TOKEN_A));
	} finally {
		await store.close();
	}
	const reopened = await InstallationStore.open(where, cipher);
	try {
		expect(await reopened.teams()).toEqual(['TNEWTEAM', 'TOLDOTHER', 'TOLDSTORE']);
		expect((await reopened.findInstallation({ teamId: 'TOLDOTHER' }))?.bot?.token).toBe(
			'xoxb-0000-fixture-other-token',
		);
		expect(await reopened.takeOAuthState('fixture-state')).toBeUndefined();
	} finally {
		await reopened.close();
	}
});
