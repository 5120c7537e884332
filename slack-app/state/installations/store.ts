import type {
	Installation,
	InstallationQuery,
	InstallationStore as SlackInstallationStore,
} from '@slack/oauth';
import { z } from 'zod/v4';
import { MissingKeyError, type SecretCipher } from './cipher';
import { PostgresDatabase, SqliteDatabase, type Row, type SqlDatabase } from './database';

/**
 * Where the app keeps each workspace that installed it (Slack's installation, bot token included)
 * and the GPU Cloud organization a workspace admin linked to it (API key included). Both secrets
 * are sealed (SecretCipher) before they reach the database; the database never holds them in clear.
 * The same schema on SQLite and PostgreSQL; migrations run when the store opens.
 */

/** Each entry runs once, in order, inside one transaction with its version row. */
const MIGRATIONS: readonly string[][] = [
	[
		`CREATE TABLE installations (
      install_key TEXT PRIMARY KEY,
      team_id TEXT,
      enterprise_id TEXT,
      bot_user_id TEXT,
      installation TEXT NOT NULL,
      installed_at TEXT NOT NULL
    )`,
		`CREATE TABLE workspace_links (
      team_id TEXT PRIMARY KEY,
      organization TEXT NOT NULL,
      project TEXT,
      api_key TEXT NOT NULL,
      linked_by TEXT NOT NULL,
      linked_at TEXT NOT NULL
    )`,
	],
	[
		// The OAuth states handed out and not yet used, by hash: each opens one install, once.
		`CREATE TABLE oauth_states (
      state_hash TEXT PRIMARY KEY,
      install_options TEXT NOT NULL,
      expires_at TEXT NOT NULL
    )`,
	],
	// Whether other workspaces linked to the same organization may see this workspace's jobs.
	['ALTER TABLE workspace_links ADD COLUMN share_jobs INTEGER NOT NULL DEFAULT 0'],
];

/** PostgreSQL: replicas starting together take turns migrating (any constant shared by all of them). */
const MIGRATION_LOCK = 7_140_214;

/** A stored row of one workspace that does not open (altered, or another row's copy). */
export class UnreadableRowError extends Error {
	constructor(
		readonly team: string,
		readonly row: 'installation' | 'link',
		cause?: unknown,
	) {
		super(
			row === 'installation'
				? `The stored installation of ${team} does not open (altered, or copied from another row); the app must be installed in that workspace again.`
				: `The stored GPU Cloud link of ${team} does not open (altered, or copied from another row); a workspace admin must link it again with /gpu setup.`,
			{ cause },
		);
		this.name = 'UnreadableRowError';
	}
}

export interface WorkspaceLink {
	teamId: string;
	organization: string;
	project?: string;
	apiKey: string;
	/** The Slack user who linked it. */
	linkedBy: string;
	linkedAt: string;
	/** Other workspaces linked to the same organization may see this one's jobs (off unless an admin turns it on). */
	shareJobs: boolean;
}

export interface StoreLocation {
	/** PostgreSQL connection string; when unset, the SQLite file. */
	databaseUrl?: string;
	sqliteFile: string;
}

/** What was read back must still be an installation with a bot; anything else is a broken row. */
const storedInstallation = z.looseObject({
	bot: z.looseObject({
		token: z.string().min(1),
		userId: z.string(),
		id: z.string(),
		scopes: z.array(z.string()),
	}),
	isEnterpriseInstall: z.boolean().optional(),
});

export class InstallationStore {
	/** Rows that did not open, by workspace: refused for that workspace alone. */
	private readonly unreadable = new Map<string, Set<UnreadableRowError['row']>>();
	/** Sealing again what a previous key sealed (after a rotation), begun at open. */
	private resealing: Promise<void> = Promise.resolve();

	private constructor(
		private readonly db: SqlDatabase,
		private readonly cipher: SecretCipher,
		private readonly now: () => Date,
	) {}

	static async open(
		location: StoreLocation,
		cipher: SecretCipher,
		now: () => Date = () => new Date(),
		onResealFailure?: (error: unknown) => void,
	): Promise<InstallationStore> {
		const db = location.databaseUrl
			? await PostgresDatabase.open(location.databaseUrl)
			: await SqliteDatabase.open(location.sqliteFile);
		const store = new InstallationStore(db, cipher, now);
		try {
			await store.migrate();
			await store.checkKeys();
		} catch (error) {
			await db.close();
			throw error;
		}
		store.resealing = store.resealStale().catch((error: unknown) => onResealFailure?.(error));
		return store;
	}

	get engine(): SqlDatabase['engine'] {
		return this.db.engine;
	}

	/** The schema version after migrating. */
	async schemaVersion(): Promise<number> {
		const [row] = await this.db.query('SELECT MAX(version) AS version FROM schema_migrations');
		return Number(row?.version ?? 0);
	}

	async saveInstallation(installation: Installation): Promise<void> {
		const key = installKey(
			installation.isEnterpriseInstall ? undefined : installation.team?.id,
			installation.enterprise?.id,
			installation.isEnterpriseInstall === true,
		);
		if (!installation.bot?.token)
			throw new Error(
				'Slack returned an installation without a bot token; the app needs the bot scopes.',
			);
		const sealed = this.cipher.seal(JSON.stringify(installation), `installation:${key}`);
		await this.db.query(
			`INSERT INTO installations (install_key, team_id, enterprise_id, bot_user_id, installation, installed_at) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (install_key) DO UPDATE SET team_id = $2, enterprise_id = $3, bot_user_id = $4, installation = $5, installed_at = $6`,
			[
				key,
				installation.team?.id ?? null,
				installation.enterprise?.id ?? null,
				installation.bot.userId,
				sealed,
				this.now().toISOString(),
			],
		);
		this.readable(key, 'installation');
	}

	/** The installation of a workspace (or of an org-wide install), or undefined. */
	async findInstallation(query: {
		teamId?: string;
		enterpriseId?: string;
		isEnterpriseInstall?: boolean;
	}): Promise<Installation | undefined> {
		const key = installKey(query.teamId, query.enterpriseId, query.isEnterpriseInstall === true);
		const [row] = await this.db.query(
			'SELECT installation FROM installations WHERE install_key = $1',
			[key],
		);
		if (!row) return undefined;
		const parsed = this.opened(key, 'installation', () =>
			storedInstallation.parse(
				JSON.parse(this.cipher.open(text(row.installation), `installation:${key}`)),
			),
		);
		return parsed as unknown as Installation;
	}

	/** The installed workspaces, in order; at most `limit` of them when given. */
	async teams(limit?: number): Promise<string[]> {
		return (
			await this.db.query(
				`SELECT install_key FROM installations ORDER BY install_key${limit === undefined ? '' : ` LIMIT ${Math.floor(limit)}`}`,
			)
		).map((row) => text(row.install_key));
	}

	/** Uninstall or revoked tokens: forgets the workspace's installation and its GPU Cloud link. */
	async deleteWorkspace(teamId: string): Promise<void> {
		await this.db.transaction(async (db) => {
			await db.query('DELETE FROM installations WHERE install_key = $1', [
				installKey(teamId, undefined, false),
			]);
			await db.query('DELETE FROM workspace_links WHERE team_id = $1', [teamId]);
		});
		this.unreadable.delete(teamId);
	}

	async saveLink(
		link: Omit<WorkspaceLink, 'linkedAt' | 'shareJobs'> & { shareJobs?: boolean },
	): Promise<WorkspaceLink> {
		const linkedAt = this.now().toISOString();
		const apiKey = this.cipher.seal(link.apiKey, `link:${link.teamId}`);
		const shareJobs = link.shareJobs === true;
		await this.db.query(
			`INSERT INTO workspace_links (team_id, organization, project, api_key, linked_by, linked_at, share_jobs) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (team_id) DO UPDATE SET organization = $2, project = $3, api_key = $4, linked_by = $5, linked_at = $6, share_jobs = $7`,
			[
				link.teamId,
				link.organization,
				link.project ?? null,
				apiKey,
				link.linkedBy,
				linkedAt,
				shareJobs ? 1 : 0,
			],
		);
		this.readable(link.teamId, 'link');
		return { ...link, linkedAt, shareJobs };
	}

	async findLink(teamId: string): Promise<WorkspaceLink | undefined> {
		const [row] = await this.db.query(
			'SELECT organization, project, api_key, linked_by, linked_at, share_jobs FROM workspace_links WHERE team_id = $1',
			[teamId],
		);
		if (!row) return undefined;
		return {
			teamId,
			organization: text(row.organization),
			...(row.project === null ? {} : { project: text(row.project) }),
			apiKey: this.opened(teamId, 'link', () =>
				this.cipher.open(text(row.api_key), `link:${teamId}`),
			),
			linkedBy: text(row.linked_by),
			linkedAt: text(row.linked_at),
			shareJobs: Number(row.share_jobs) === 1,
		};
	}

	/** Remembers an OAuth state handed to a browser (by its hash) until `expiresAt`; expired ones go. */
	async saveOAuthState(stateHash: string, installOptions: string, expiresAt: Date): Promise<void> {
		await this.db.transaction(async (db) => {
			await db.query('DELETE FROM oauth_states WHERE expires_at < $1', [this.now().toISOString()]);
			await db.query(
				'INSERT INTO oauth_states (state_hash, install_options, expires_at) VALUES ($1, $2, $3)',
				[stateHash, installOptions, expiresAt.toISOString()],
			);
		});
	}

	/**
	 * Uses an OAuth state: its install options, once; undefined when it was never handed out, was used
	 * already (by any replica: the delete is the test) or has expired.
	 */
	async takeOAuthState(stateHash: string): Promise<string | undefined> {
		const [row] = await this.db.query(
			'DELETE FROM oauth_states WHERE state_hash = $1 RETURNING install_options, expires_at',
			[stateHash],
		);
		if (!row || text(row.expires_at) < this.now().toISOString()) return undefined;
		return text(row.install_options);
	}

	/** The workspaces with a stored row that does not open (for /readyz and the log). */
	unreadableWorkspaces(): string[] {
		return [...this.unreadable.keys()].sort();
	}

	/** Opens one workspace's row; one that does not open is noted and refused for that workspace alone. */
	private opened<T>(team: string, row: UnreadableRowError['row'], open: () => T): T {
		try {
			const value = open();
			this.readable(team, row);
			return value;
		} catch (error) {
			this.unreadable.set(team, (this.unreadable.get(team) ?? new Set()).add(row));
			throw new UnreadableRowError(team, row, error);
		}
	}

	private readable(team: string, row: UnreadableRowError['row']): void {
		const rows = this.unreadable.get(team);
		rows?.delete(row);
		if (rows?.size === 0) this.unreadable.delete(team);
	}

	/** For a readiness probe: the database answers. */
	async ping(): Promise<void> {
		await this.db.query('SELECT 1');
	}

	async close(): Promise<void> {
		await this.resealing;
		await this.db.close();
	}

	/** The store as @slack/oauth's InstallProvider (and Bolt's authorize) uses it. */
	forSlack(): SlackInstallationStore {
		return {
			storeInstallation: (installation) => this.saveInstallation(installation),
			fetchInstallation: async (query: InstallationQuery<boolean>) => {
				const installation = await this.findInstallation(query);
				if (!installation)
					throw new Error(
						`The app is not installed in ${query.teamId ?? query.enterpriseId ?? 'this workspace'}.`,
					);
				return installation;
			},
			deleteInstallation: async (query: InstallationQuery<boolean>) => {
				await this.deleteWorkspace(
					installKey(query.teamId, query.enterpriseId, query.isEnterpriseInstall),
				);
			},
		};
	}

	private async migrate(): Promise<void> {
		await this.db.query(
			'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)',
		);
		await this.db.transaction(async (db) => {
			if (this.db.engine === 'postgres')
				await db.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
			const [row] = await db.query('SELECT MAX(version) AS version FROM schema_migrations');
			const applied = Number(row?.version ?? 0);
			for (const [index, statements] of MIGRATIONS.entries()) {
				const version = index + 1;
				if (version <= applied) continue;
				for (const statement of statements) await db.query(statement);
				await db.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [
					version,
					this.now().toISOString(),
				]);
			}
		});
	}

	/**
	 * At start, without opening every row: when rows exist and none was sealed with a key this process
	 * has, the key setting is wrong, and the start stops naming the setting. (One row found sealed with
	 * a known key ends the look, so a start costs the same whatever the number of workspaces.)
	 */
	private async checkKeys(): Promise<void> {
		const known = this.cipher.keyPrefixes();
		const placeholders = known.map((_, index) => `$${index + 1}`).join(', ');
		for (const { table, column } of SEALED_COLUMNS) {
			const [sealedWithKnownKey] = await this.db.query(
				`SELECT 1 AS found FROM ${table} WHERE substr(${column}, 1, ${known[0].length}) IN (${placeholders}) LIMIT 1`,
				known,
			);
			if (sealedWithKnownKey) return;
		}
		for (const { table, key, column, row } of SEALED_COLUMNS) {
			const [any] = await this.db.query(
				`SELECT ${key} AS row_key, ${column} AS sealed FROM ${table} LIMIT 1`,
			);
			if (!any) continue;
			try {
				this.cipher.open(text(any.sealed), `${row}:${text(any.row_key)}`);
			} catch (error) {
				if (error instanceof MissingKeyError) throw error;
			}
		}
	}

	/**
	 * After a key rotation: the rows sealed with a previous key are sealed again with the current one,
	 * a batch at a time, in the background (only those rows are read: none when nothing was rotated).
	 * A row that does not open is left for its workspace to reinstall or link again.
	 */
	private async resealStale(): Promise<void> {
		const current = this.cipher.keyPrefixes()[0];
		for (const { table, key, column, row } of SEALED_COLUMNS) {
			let after = '';
			for (;;) {
				const batch = await this.db.query(
					`SELECT ${key} AS row_key, ${column} AS sealed FROM ${table} WHERE ${key} > $1 AND substr(${column}, 1, ${current.length}) <> $2 ORDER BY ${key} LIMIT ${RESEAL_BATCH}`,
					[after, current],
				);
				for (const found of batch) {
					const team = text(found.row_key);
					const context = `${row}:${team}`;
					let plaintext: string;
					try {
						plaintext = this.cipher.open(text(found.sealed), context);
					} catch {
						continue;
					}
					// Only if nobody wrote the row meanwhile (a new install seals with the current key).
					await this.db.query(
						`UPDATE ${table} SET ${column} = $1 WHERE ${key} = $2 AND ${column} = $3`,
						[this.cipher.seal(plaintext, context), team, text(found.sealed)],
					);
				}
				if (batch.length < RESEAL_BATCH) break;
				after = text(batch[batch.length - 1].row_key);
			}
		}
	}
}

/** The sealed column of each table, and the context each value is bound to (`<row>:<key>`). */
const SEALED_COLUMNS = [
	{ table: 'installations', key: 'install_key', column: 'installation', row: 'installation' },
	{ table: 'workspace_links', key: 'team_id', column: 'api_key', row: 'link' },
] as const;

/** Rows sealed again per statement after a rotation. */
const RESEAL_BATCH = 200;

/** A workspace install is keyed by its team id, an org-wide one by its enterprise id. */
function installKey(
	teamId: string | undefined,
	enterpriseId: string | undefined,
	enterprise: boolean,
): string {
	const key = enterprise ? enterpriseId : teamId;
	if (!key)
		throw new Error(
			enterprise
				? 'An org-wide installation has no enterprise id.'
				: 'An installation has no team id.',
		);
	return key;
}

function text(value: Row[string] | undefined): string {
	if (value === null || value === undefined) throw new Error('A required column is empty.');
	return String(value);
}

export type { Row };
