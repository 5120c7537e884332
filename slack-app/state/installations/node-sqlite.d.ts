/**
 * The part of Node's built-in `node:sqlite` (Node >= 22.5, stable in 24) the installation store
 * uses. The repository's @types/node follows the n8n package's Node 20, which has no such module;
 * the Slack app requires Node 24 (slack-app/package.json engines).
 */
declare module 'node:sqlite' {
	type SQLInputValue = null | number | bigint | string | NodeJS.ArrayBufferView;
	type SQLOutputValue = null | number | bigint | string | Uint8Array;

	class StatementSync {
		all(...anonymousParameters: SQLInputValue[]): Record<string, SQLOutputValue>[];
	}

	class DatabaseSync {
		constructor(path: string);
		exec(sql: string): void;
		prepare(sql: string): StatementSync;
		close(): void;
	}
}
