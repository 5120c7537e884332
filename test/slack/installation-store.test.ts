import { mkdtemp, readFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alterSqlite, installationStoreCases } from './installation-store-cases';

/** The installation store on its embedded default, SQLite in a file (sql.js, no native build). */

let count = 0;
let dir: string;
beforeAll(async () => {
	dir = await mkdtemp(join(tmpdir(), 'installation-store-'));
});

installationStoreCases({
	location: async () => ({ sqliteFile: join(dir, `nested-${++count}`, 'installations.sqlite') }),
	raw: async (location) => {
		// The file is written through a temporary file and a rename: none may be left behind.
		const folder = join(location.sqliteFile, '..');
		expect(await readdir(folder)).toEqual(['installations.sqlite']);
		return (await readFile(location.sqliteFile)).toString('latin1');
	},
	alter: (location, statements) => alterSqlite(location.sqliteFile, statements),
});
