import { mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Pool } from 'pg';

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
 * SQLite in its file through Node's built-in `node:sqlite` (no native build, no dependency): each
 * change writes its own rows, in SQLite's write-ahead log, so a write costs the same with ten
 * workspaces or fifty thousand, and a crash loses no committed change. Files written by earlier
 * versions (sql.js, which rewrote the whole file on every change) are SQLite files too and open
 * as they are. One process owns the file; several replicas share PostgreSQL instead.
 */
export class SqliteDatabase implements SqlDatabase {
	readonly engine = 'sqlite';
	private queue: Promise<unknown> = Promise.resolve();

	private constructor(private readonly db: DatabaseSync) {}

	static async open(path: string): Promise<SqliteDatabase> {
		await mkdir(dirname(path), { recursive: true });
		// Created readable by its owner alone (it holds sealed tokens); SQLite's journal files follow its mode.
		await (await open(path, 'a', 0o600)).close();
		const db = new DatabaseSync(path);
		try {
			db.exec('PRAGMA journal_mode = WAL');
			// With the log, a commit survives a crash of the process; a power loss may drop the last ones.
			db.exec('PRAGMA synchronous = NORMAL');
			// A deleted workspace's rows are overwritten, not left in free pages of the file.
			db.exec('PRAGMA secure_delete = ON');
		} catch (error) {
			db.close();
			throw error;
		}
		return new SqliteDatabase(db);
	}

	query(sql: string, params: (string | number | null)[] = []): Promise<Row[]> {
		return this.serialized(async () => this.run(sql, params));
	}

	transaction<T>(work: (db: Pick<SqlDatabase, 'query'>) => Promise<T>): Promise<T> {
		return this.serialized(async () => {
			this.db.exec('BEGIN IMMEDIATE');
			try {
				const result = await work({ query: async (sql, params = []) => this.run(sql, params) });
				this.db.exec('COMMIT');
				return result;
			} catch (error) {
				this.db.exec('ROLLBACK');
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
		return statement.all(...params).map((row) => {
			const values: Row = {};
			for (const [column, value] of Object.entries(row)) {
				// The store keeps text and small integers only; a blob would be a column it never wrote.
				if (value instanceof Uint8Array) throw new Error(`Column ${column} holds bytes, not text.`);
				values[column] = typeof value === 'bigint' ? Number(value) : value;
			}
			return values;
		});
	}

	/** One statement or transaction at a time: a transaction's statements must not interleave with others. */
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
