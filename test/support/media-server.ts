import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toneWav } from '../../emulator/wav';

/** A mono 8-bit PCM WAV of exactly `seconds`; `tone` changes the sound, so files differ. */
export function wavBytes(seconds: number, { sampleRate = 8000, tone = 440 } = {}): Buffer {
	return toneWav(seconds, { sampleRate, frequency: tone });
}

/** The first bytes of a PDF and of a PNG: enough for a reader that tells files by their start. */
export const PDF_BYTES = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n');
export const PNG_BYTES = Buffer.concat([
	Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
	Buffer.alloc(64, 1),
]);

export interface ServedFile {
	body: Buffer;
	contentType?: string;
	/** Answer this status instead of 200 (the body is then an error text). */
	status?: number;
	/** Claim this content-length instead of the body's. */
	contentLength?: number;
	/** Send this many bytes of the body, then destroy the connection. */
	cutAfter?: number;
}

export interface MediaServer {
	origin: string;
	/** Serves `file` at `path` (default: a 20-second WAV whose sound depends on the path). */
	serve(path: string, file?: ServedFile): string;
	/** Every request received: path (with query) and headers. */
	readonly requests: { path: string; headers: IncomingHttpHeaders }[];
	close(): Promise<void>;
}

function toneOf(path: string): number {
	let hash = 0;
	for (const char of path) hash = (hash * 31 + char.charCodeAt(0)) % 1000;
	return 200 + hash;
}

/** The recording served at a path by default: 20 seconds whose sound depends on the path. */
function recordingAt(pathname: string): ServedFile {
	return { body: wavBytes(20, { tone: toneOf(pathname) }), contentType: 'audio/wav' };
}

/**
 * A file host on loopback, as a storage bucket behind signed URLs is for the service: it answers
 * GET with the bytes registered at a path (query strings ignored); other paths get 404, or with
 * `anyPath` the default recording.
 */
export async function startMediaServer({ anyPath = false } = {}): Promise<MediaServer> {
	const files = new Map<string, ServedFile>();
	const requests: { path: string; headers: IncomingHttpHeaders }[] = [];
	const server = createServer((req, res) => {
		const path = req.url ?? '/';
		requests.push({ path, headers: req.headers });
		const pathname = new URL(path, 'http://files').pathname;
		const file = files.get(pathname) ?? (anyPath ? recordingAt(pathname) : undefined);
		if (!file) {
			res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
			return;
		}
		res.writeHead(file.status ?? 200, {
			'content-type': file.contentType ?? 'application/octet-stream',
			'content-length': String(file.contentLength ?? file.body.length),
		});
		if (file.cutAfter === undefined) {
			res.end(file.body);
			return;
		}
		res.write(file.body.subarray(0, file.cutAfter), () => res.destroy());
	});
	server.listen(0, '127.0.0.1');
	await once(server, 'listening');
	const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	return {
		origin,
		requests,
		serve(path, file) {
			const pathname = new URL(path, 'http://files').pathname;
			files.set(pathname, file ?? recordingAt(pathname));
			return `${origin}${path}`;
		},
		close: async () => {
			server.closeAllConnections();
			server.close();
			await once(server, 'close');
		},
	};
}

/**
 * The made-up file hosts (reserved example domains) in URLs of tests about something else than the
 * file, and in the Slack help's example.
 */
export const MADE_UP_FILE_HOSTS = [
	'https://files.example',
	'https://storage.example.com',
	'https://example.com',
];

/**
 * A loopback host answering any path with a recording, and the emulator's `mediaHosts` option that
 * sends downloads from the made-up file hosts to it.
 */
export interface FileHost {
	mediaHosts: Record<string, string>;
	close(): Promise<void>;
}

export async function startFileHost(): Promise<FileHost> {
	const server = await startMediaServer({ anyPath: true });
	return {
		mediaHosts: Object.fromEntries(MADE_UP_FILE_HOSTS.map((host) => [host, server.origin])),
		close: () => server.close(),
	};
}
