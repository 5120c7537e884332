import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { LogLevel, type Logger } from '@slack/bolt';

/**
 * The app's one logger: a JSON object per line (time, level, message, and the request or job the
 * line belongs to), so a log shipper can index it and an operator can follow one request. It
 * implements Bolt's Logger, so Bolt's own lines come out the same way.
 */

export const LOG_LEVELS = [LogLevel.DEBUG, LogLevel.INFO, LogLevel.WARN, LogLevel.ERROR] as const;

/** What a line is about: `request` (a Slack request or webhook delivery), `job` (a service job id). */
export interface LogContext {
	request?: string;
	job?: string;
}

const context = new AsyncLocalStorage<LogContext>();

/**
 * Runs `work` with these fields on every line it logs, including lines from timers and promises it
 * starts (Node carries the context along); fields of an enclosing context are kept.
 */
export function withLogContext<T>(fields: LogContext, work: () => T): T {
	return context.run({ ...context.getStore(), ...fields }, work);
}

/** A short id for one Slack request or webhook delivery, unique enough to grep for. */
export function newRequestId(): string {
	return randomBytes(6).toString('hex');
}

export interface JsonLoggerOptions {
	level?: LogLevel;
	/** Where each line goes; stdout by default (systemd's journal, `docker logs`). */
	write?: (line: string) => void;
	/**
	 * Values that must never be written (tokens, keys, secrets). The app never logs them on purpose;
	 * this is the net under a library that might.
	 */
	secrets?: readonly string[];
}

export class JsonLogger implements Logger {
	private level: LogLevel;
	private name?: string;
	private readonly write: (line: string) => void;
	private readonly secrets: string[];

	constructor(options: JsonLoggerOptions = {}) {
		this.level = options.level ?? LogLevel.INFO;
		this.write = options.write ?? ((line) => process.stdout.write(`${line}\n`));
		// Longest first, so a secret that contains another is replaced whole.
		this.secrets = [...new Set(options.secrets ?? [])]
			.filter((secret) => secret.length >= 8)
			.sort((a, b) => b.length - a.length);
	}

	debug(...parts: unknown[]): void {
		this.log(LogLevel.DEBUG, parts);
	}
	info(...parts: unknown[]): void {
		this.log(LogLevel.INFO, parts);
	}
	warn(...parts: unknown[]): void {
		this.log(LogLevel.WARN, parts);
	}
	error(...parts: unknown[]): void {
		this.log(LogLevel.ERROR, parts);
	}
	setLevel(level: LogLevel): void {
		this.level = level;
	}
	getLevel(): LogLevel {
		return this.level;
	}
	setName(name: string): void {
		this.name = name;
	}

	private log(level: LogLevel, parts: unknown[]): void {
		if (LOG_LEVELS.indexOf(level) < LOG_LEVELS.indexOf(this.level)) return;
		const line = JSON.stringify({
			time: new Date().toISOString(),
			level,
			...(this.name ? { logger: this.name } : {}),
			...context.getStore(),
			msg: parts.map(text).join(' '),
		});
		this.write(
			this.secrets.reduce((redacted, secret) => redacted.split(secret).join('[redacted]'), line),
		);
	}
}

/** Errors by name and message only: stacks and attached request options are where secrets hide. */
function text(part: unknown): string {
	if (part instanceof Error) return `${part.name}: ${part.message}`;
	if (typeof part === 'string') return part;
	try {
		return JSON.stringify(part) ?? String(part);
	} catch {
		return String(part);
	}
}
