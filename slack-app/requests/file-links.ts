import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Logger } from '@slack/bolt';
import { z } from 'zod/v4';
import type { Clock } from '../../shared/clock';
import { FILE_LINK_PATH } from '../model';
import { errorSummary } from '../slack/errors';
import type { SharedState } from '../state/shared-state';

/**
 * Files shared in Slack, served to GPU Cloud for one job. The service downloads its media from a
 * URL with no header, and Slack serves a file only with the bot token in one; so the app serves the
 * file itself, under its public address, at a capability URL: 256 random bits naming one file of
 * one workspace, for one job, until the job ends or the link's time is up. The bytes stream from
 * Slack (with the bot token, which stays here) to the service as they come, never held whole.
 * The record lives in the shared state (keyed by a hash of the token, so the store holds no usable
 * URL), so whichever replica the service reaches serves it.
 */

const TOKEN_BYTES = 32;
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** A file as Slack's files.info describes it, reduced to what the link needs. */
export interface SharedFile {
	id: string;
	name: string;
	mimetype: string;
	size: number;
	/** An audio or video file's length, when Slack's file object gives it (`duration_ms`). */
	durationMs?: number;
	/** `url_private_download`: Slack serves it only with a bearer token. */
	source: string;
}

const jobRefSchema = z.object({ endpoint: z.string(), id: z.string() });
export type LinkedJob = z.infer<typeof jobRefSchema>;

const recordSchema = z.object({
	team: z.string(),
	file: z.string(),
	name: z.string(),
	mimetype: z.string(),
	size: z.number(),
	source: z.url(),
	expiresAt: z.number(),
	job: jobRefSchema.optional(),
});
type LinkRecord = z.infer<typeof recordSchema>;

/** What serving a workspace's file needs from that workspace: its bot token and its jobs. */
export interface FileSource {
	botToken(): string | undefined;
	/** Whether the job has ended (then its link serves nothing more). */
	jobEnded(job: LinkedJob): Promise<boolean>;
}

/** How a download ended, as /metrics counts it. */
export type DownloadOutcome = 'served' | 'refused' | 'failed';

export interface FileLinksOptions {
	store: Pick<SharedState, 'putRecord' | 'getRecord' | 'deleteRecord'>;
	/** The app's public address (SLACK_PUBLIC_URL). */
	publicUrl: string;
	clock: Pick<Clock, 'now'>;
	/** How long a link lives at most, whatever its job does. */
	ttlMs: number;
	logger: Logger;
	/** Counts each download by how it ended. */
	counted: (outcome: DownloadOutcome) => void;
	/** Whether a file URL is Slack's: the bot token is sent nowhere else. */
	isSlackUrl: (url: string) => boolean;
	/** The workspace a link belongs to; undefined when the app no longer serves it. */
	source: (team: string) => Promise<FileSource | undefined>;
}

/** How a shared file reaches GPU Cloud: the app's own links, or object storage. */
export interface FileRoute {
	/** A URL GPU Cloud can read `file` of `team` from, with no header, for one job. */
	create(team: string, file: SharedFile): Promise<FileLink>;
}

/** One link, as the job that reads it knows it. */
export interface FileLink {
	url: string;
	/** Names the job that reads it: the link then ends with that job. */
	bind(job: LinkedJob): Promise<void>;
	/** Ends the link (its job ended, or was never created). */
	revoke(): Promise<void>;
}

export class FileLinks implements FileRoute {
	constructor(private readonly options: FileLinksOptions) {}

	/** A new link to `file` of `team`, valid until revoked or for the links' time. */
	async create(team: string, file: SharedFile): Promise<FileLink> {
		const { store, publicUrl, clock, ttlMs, isSlackUrl } = this.options;
		if (!isSlackUrl(file.source))
			throw new Error(`The download address of file ${file.id} is not Slack's; it is not fetched.`);
		const token = randomBytes(TOKEN_BYTES).toString('base64url');
		const key = recordKey(token);
		const record: LinkRecord = {
			team,
			file: file.id,
			name: file.name,
			mimetype: file.mimetype,
			size: file.size,
			source: file.source,
			expiresAt: clock.now() + ttlMs,
		};
		await store.putRecord(key, JSON.stringify(record), ttlMs);
		return {
			// The name makes the URL readable (the service's logs, the parent message); only the token counts.
			url: `${publicUrl}${FILE_LINK_PATH}/${token}/${encodeURIComponent(file.name)}`,
			bind: async (job) => {
				const left = record.expiresAt - clock.now();
				if (left > 0) await store.putRecord(key, JSON.stringify({ ...record, job }), left);
			},
			revoke: () => store.deleteRecord(key),
		};
	}

	/** `GET FILE_LINK_PATH/<token>/<name>`: the file, streamed from Slack, while its link holds. */
	readonly route = (req: IncomingMessage, res: ServerResponse): void => {
		req.resume();
		this.serve(req, res).catch((error: unknown) => {
			this.options.counted('failed');
			this.options.logger.warn(`Serving a shared file failed: ${errorSummary(error)}`);
			if (!res.headersSent) res.writeHead(502).end();
			else res.destroy();
		});
	};

	private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
		const { store, clock, counted, logger } = this.options;
		const refuse = () => {
			counted('refused');
			res.writeHead(404, { 'cache-control': 'no-store' }).end();
		};
		const token = tokenOf(req.url ?? '');
		if (!token) return refuse();
		const key = recordKey(token);
		const parsed = recordSchema.safeParse(parseJson(await store.getRecord(key)));
		if (!parsed.success || parsed.data.expiresAt <= clock.now()) return refuse();
		const record = parsed.data;
		const source = await this.options.source(record.team);
		const botToken = source?.botToken();
		if (!source || !botToken) return refuse();
		if (record.job && (await source.jobEnded(record.job))) {
			await store.deleteRecord(key);
			return refuse();
		}
		const response = await fetchSlackFile(record.source, botToken);
		if (!response.ok || !response.body) {
			await response.body?.cancel();
			counted('failed');
			logger.warn(
				`Slack answered HTTP ${response.status} for file ${record.file}; GPU Cloud was told 502.`,
			);
			res.writeHead(502, { 'cache-control': 'no-store' }).end();
			return;
		}
		const length = response.headers.get('content-length');
		res.writeHead(200, {
			'content-type': record.mimetype,
			...(length ? { 'content-length': length } : {}),
			'cache-control': 'no-store',
		});
		if (req.method === 'HEAD') {
			await response.body.cancel();
			res.end();
		} else await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), res);
		counted('served');
		logger.info(
			`File ${record.file} served to GPU Cloud${record.job ? ` for job ${record.job.id}` : ''}.`,
		);
	}
}

/**
 * A file's bytes from Slack, with the bot token in the header (Slack's rule for `url_private`); the
 * caller has checked that the URL is Slack's. A redirect elsewhere drops the header (fetch's rule).
 */
export function fetchSlackFile(url: string, botToken: string): Promise<Response> {
	return fetch(url, { headers: { authorization: `Bearer ${botToken}` } });
}

/** The token of a link's path; undefined for any other path (`..`, encoded slashes, a wrong length). */
function tokenOf(url: string): string | undefined {
	const path = url.split('?')[0];
	const prefix = `${FILE_LINK_PATH}/`;
	if (!path.startsWith(prefix)) return undefined;
	const [token, name, ...rest] = path.slice(prefix.length).split('/');
	if (rest.length > 0 || name === undefined || !TOKEN_PATTERN.test(token)) return undefined;
	return token;
}

function recordKey(token: string): string {
	return `file-link:${createHash('sha256').update(token).digest('base64url')}`;
}

function parseJson(text: string | undefined): unknown {
	if (text === undefined) return undefined;
	try {
		return JSON.parse(text);
	} catch {
		return undefined;
	}
}
