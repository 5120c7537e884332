import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Pool } from 'pg';
import initSqlJs, { type Database as SqliteFile } from 'sql.js';
import { isMissingFile, writeFileAtomically } from '../files';

/**
 * The one SQL surface the installation store needs, on SQLite (embedded default, a file) and
 * PostgreSQL (`DATABASE_URL`). Statements use PostgreSQL's `$1` placeholders and only SQL both
 * engines read the same way.
 */

export type Row = Record<string, string | number | null>;

export interface SqlDatabase {
	readonly engine: 'sqlite' | 'postgres';
	query(sql: string, params?: (string | number | null)[]): Promise<Row[]>;
	/** Runs `work` as one transaction: all of it is stored or none. */
	transaction<T>(work: (db: Pick<SqlDatabase, 'query'>) => Promise<T>): Promise<T>;
	close(): Promise<void>;
}

/**
 * SQLite compiled to WebAssembly (sql.js): no native build, the same on every Node the app supports.
 * The database lives in memory and is written to its file after every change, through a temporary
 * file and a rename, so a crash leaves the previous or the new file, never half of one. One process
 * owns the file; several replicas share PostgreSQL instead.
 */
export class SqliteDatabase implements SqlDatabase {
	readonly engine = 'sqlite';
	private queue: Promise<unknown> = Promise.resolve();

	private constructor(
		private readonly db: SqliteFile,
		private readonly path: string,
	) {}

	static async open(path: string): Promise<SqliteDatabase> {
		const SQL = await initSqlJs();
		let content: Buffer | undefined;
		try {
			content = await readFile(path);
		} catch (error) {
			if (!isMissingFile(error)) throw error;
		}
		await mkdir(dirname(path), { recursive: true });
		const db = new SQL.Database(content);
		// A deleted workspace's rows are overwritten, not left in free pages of the file.
		db.run('PRAGMA secure_delete = ON');
		return new SqliteDatabase(db, path);
	}

	query(sql: string, params: (string | number | null)[] = []): Promise<Row[]> {
		return this.serialized(async () => {
			const rows = this.run(sql, params);
			if (this.db.getRowsModified() > 0) await this.persist();
			return rows;
		});
	}

	transaction<T>(work: (db: Pick<SqlDatabase, 'query'>) => Promise<T>): Promise<T> {
		return this.serialized(async () => {
			this.db.run('BEGIN');
			try {
				const result = await work({ query: async (sql, params = []) => this.run(sql, params) });
				this.db.run('COMMIT');
				await this.persist();
				return result;
			} catch (error) {
				this.db.run('ROLLBACK');
				throw error;
			}
		});
	}

	async close(): Promise<void> {
		await this.queue.catch(() => undefined);
		this.db.close();
	}

	private run(sql: string, params: (string | number | null)[]): Row[] {
		// `$1` is PostgreSQL's placeholder; SQLite reads `?1` the same way.
		const statement = this.db.prepare(sql.replace(/\$(\d+)/g, '?$1'));
		try {
			statement.bind(params);
			const rows: Row[] = [];
			while (statement.step()) rows.push(statement.getAsObject() as Row);
			return rows;
		} finally {
			statement.free();
		}
	}

	private async persist(): Promise<void> {
		await writeFileAtomically(this.path, this.db.export(), 0o600);
	}

	/** One statement or transaction at a time: sql.js has a single connection. */
	private serialized<T>(work: () => Promise<T>): Promise<T> {
		const result = this.queue.then(work, work);
		this.queue = result.catch(() => undefined);
		return result;
	}
}

export class PostgresDatabase implements SqlDatabase {
	readonly engine = 'postgres';

	private constructor(private readonly pool: Pool) {}

	static async open(url: string): Promise<PostgresDatabase> {
		const pool = new Pool({ connectionString: url, max: 5, connectionTimeoutMillis: 10_000 });
		// An idle client's connection error must not crash the process; the next query reconnects.
		pool.on('error', () => undefined);
		const database = new PostgresDatabase(pool);
		await database.query('SELECT 1');
		return database;
	}

	async query(sql: string, params: (string | number | null)[] = []): Promise<Row[]> {
		const result = await this.pool.query<Row>(sql, params);
		return result.rows;
	}

	async transaction<T>(work: (db: Pick<SqlDatabase, 'query'>) => Promise<T>): Promise<T> {
		const client = await this.pool.connect();
		try {
			await client.query('BEGIN');
			const result = await work({
				query: async (sql, params = []) => (await client.query<Row>(sql, params)).rows,
			});
			await client.query('COMMIT');
			return result;
		} catch (error) {
			await client.query('ROLLBACK').catch(() => undefined);
			throw error;
		} finally {
			client.release();
		}
	}

	async close(): Promise<void> {
		await this.pool.end();
	}
}
