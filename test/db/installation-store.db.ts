import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { Postgres } from '../support/services';
import { installationStoreCases } from '../slack/installation-store-cases';

/**
 * The installation store's contract on PostgreSQL (`DATABASE_URL`): Debian's server, started here
 * on 127.0.0.1 in a throwaway data folder (as the queue-mode suite starts it), one new database per
 * case. `npm run test:db`, in .ci/run.
 */

jest.setTimeout(180_000);

let root: string;
let postgres: Postgres;
let count = 0;

const url = (database: string) => `postgres://n8n@127.0.0.1:${postgres.port}/${database}`;

async function withClient<T>(database: string, work: (client: Client) => Promise<T>): Promise<T> {
	const client = new Client({ connectionString: url(database) });
	await client.connect();
	try {
		return await work(client);
	} finally {
		await client.end();
	}
}

beforeAll(async () => {
	root = await mkdtemp(join(tmpdir(), 'installation-store-pg-'));
	// As root, the server runs as `postgres`, which must reach its data folder inside.
	await chmod(root, 0o755);
	postgres = await Postgres.start(join(root, 'data'), root);
});

afterAll(async () => {
	await postgres?.stop();
	await rm(root, { recursive: true, force: true });
});

installationStoreCases({
	location: async () => {
		const database = `installations_${++count}`;
		await withClient('n8n', (client) => client.query(`CREATE DATABASE ${database}`));
		return { databaseUrl: url(database), sqliteFile: join(root, 'unused.sqlite') };
	},
	// Every row of every table the store made, as text.
	raw: async (location) =>
		withClient(new URL(location.databaseUrl ?? '').pathname.slice(1), async (client) => {
			const tables = await client.query<{ table_name: string }>(
				"SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'",
			);
			expect(tables.rows.map((row) => row.table_name).sort()).toEqual([
				'installations',
				'oauth_states',
				'schema_migrations',
				'workspace_links',
			]);
			const dumps = await Promise.all(
				tables.rows.map(async ({ table_name }) =>
					(
						await client.query(`SELECT row_to_json(t)::text AS row FROM "${table_name}" t`)
					).rows.map((row: { row: string }) => row.row),
				),
			);
			return dumps.flat().join('\n');
		}),
	alter: (location, statements) =>
		withClient(new URL(location.databaseUrl ?? '').pathname.slice(1), async (client) => {
			for (const statement of statements) await client.query(statement);
		}),
});
