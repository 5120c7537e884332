import { z } from 'zod/v4';
import { createHash } from 'node:crypto';
import type { Clock } from '../shared/clock';
import { LIMITS, acceptsMediaType, type MediaField } from '../shared/schemas';
import type { Faults } from './faults';

/** What a job learnt from the file it downloaded; outputs are derived from it. */
export interface MediaFile {
	field: string;
	/** Bytes read. */
	size: number;
	/** SHA-256 of every byte: the same file gives the same output, another file another one. */
	sha256: string;
	/** The media type told by the file's first bytes, when it is one the emulator knows. */
	mediaType?: string;
	/** The real length of a WAV recording, from its header. */
	seconds?: number;
}

export type DownloadOutcome = { ok: true; file: MediaFile } | { ok: false; error: string };

/** Enough of the start of a file to tell its type and read a WAV header. */
const HEAD_BYTES = 64 * 1024;

const KNOWN_TYPES: { mediaType: string; matches: (head: Buffer) => boolean }[] = [
	{ mediaType: 'audio/wav', matches: (h) => ascii(h, 0, 'RIFF') && ascii(h, 8, 'WAVE') },
	{ mediaType: 'image/webp', matches: (h) => ascii(h, 0, 'RIFF') && ascii(h, 8, 'WEBP') },
	{ mediaType: 'video/x-msvideo', matches: (h) => ascii(h, 0, 'RIFF') && ascii(h, 8, 'AVI ') },
	{ mediaType: 'audio/ogg', matches: (h) => ascii(h, 0, 'OggS') },
	{ mediaType: 'audio/flac', matches: (h) => ascii(h, 0, 'fLaC') },
	{ mediaType: 'audio/aiff', matches: (h) => ascii(h, 0, 'FORM') },
	{ mediaType: 'video/mp4', matches: (h) => ascii(h, 4, 'ftyp') },
	{ mediaType: 'video/webm', matches: (h) => h.readUInt32BE(0) === 0x1a45dfa3 },
	{ mediaType: 'image/png', matches: (h) => h.readUInt32BE(0) === 0x89504e47 },
	{ mediaType: 'image/jpeg', matches: (h) => h[0] === 0xff && h[1] === 0xd8 && h[2] === 0xff },
	{ mediaType: 'image/gif', matches: (h) => ascii(h, 0, 'GIF8') },
	{ mediaType: 'application/pdf', matches: (h) => ascii(h, 0, '%PDF') },
	{ mediaType: 'audio/mpeg', matches: (h) => ascii(h, 0, 'ID3') || mpegFrameSync(h) },
	{ mediaType: 'text/html', matches: looksLikeHtml },
];

function ascii(head: Buffer, at: number, text: string): boolean {
	return head.length >= at + text.length && head.toString('latin1', at, at + text.length) === text;
}

function mpegFrameSync(head: Buffer): boolean {
	return head.length >= 2 && head[0] === 0xff && ((head[1] ?? 0) & 0xe0) === 0xe0;
}

/** Share links of Drive, Dropbox and the like answer a web page instead of the file. */
function looksLikeHtml(head: Buffer): boolean {
	const start = head.toString('utf8', 0, 512).trimStart().toLowerCase();
	return start.startsWith('<!doctype html') || start.startsWith('<html');
}

function sniff(head: Buffer): string | undefined {
	if (head.length < 4) return undefined;
	return KNOWN_TYPES.find((type) => type.matches(head))?.mediaType;
}

/** A WAV's length: the data chunk's size over the byte rate of its `fmt ` chunk. */
export function wavSeconds(head: Buffer, size: number): number | undefined {
	let byteRate: number | undefined;
	for (let at = 12; at + 8 <= head.length; ) {
		const id = head.toString('latin1', at, at + 4);
		const length = head.readUInt32LE(at + 4);
		if (id === 'fmt ' && at + 16 <= head.length) byteRate = head.readUInt32LE(at + 16);
		if (id === 'data') {
			if (!byteRate) return undefined;
			// A streamed WAV may declare no size (0 or 0xFFFFFFFF): then the rest of the file is data.
			const declared = length === 0 || length === 0xffffffff ? Infinity : length;
			return Math.min(declared, Math.max(0, size - at - 8)) / byteRate;
		}
		at += 8 + length + (length % 2);
	}
	return undefined;
}

function sizeText(bytes: number): string {
	if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(1)} GB`;
	if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
	return `${bytes} bytes`;
}

function lengthText(seconds: number): string {
	const minutes = Math.round(seconds / 60);
	return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** Only the host: a signed URL's query string is a secret and never goes into an error. */
function hostOf(url: string): string {
	return new URL(url).host;
}

const errorCodeSchema = z.object({ cause: z.object({ code: z.string() }) });

/** fetch wraps the socket's error as its cause; read it by shape, as errors may come from another realm. */
function networkCause(error: unknown): string {
	const parsed = errorCodeSchema.safeParse(error);
	const code = parsed.success ? parsed.data.cause.code : '';
	if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'the host name does not resolve';
	if (code === 'ECONNREFUSED') return 'the connection was refused';
	if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'the connection was reset';
	return 'the host could not be reached';
}

function resolved(url: string, hosts: Readonly<Record<string, string>>): string {
	const parsed = new URL(url);
	const target = Object.entries(hosts).find(
		([from]) => new URL(from).origin === parsed.origin,
	)?.[1];
	return target === undefined ? url : new URL(`${parsed.pathname}${parsed.search}`, target).href;
}

export interface DownloadOptions {
	media: MediaField;
	url: string;
	/** What the file is for, in errors: "an audio or video file". */
	expected: string;
	/** Origins downloaded from another origin instead (see the emulator's `mediaHosts` option). */
	hosts: Readonly<Record<string, string>>;
	clock: Clock;
	faults: Faults;
	signal: AbortSignal;
}

/**
 * GETs a job's media URL the way the service does: no header of ours, redirects followed, the body
 * streamed (hashed as it arrives, never held whole) and refused past the spec's limits.
 */
export async function downloadMedia(options: DownloadOptions): Promise<DownloadOutcome> {
	const { media, url, expected, hosts, clock, faults, signal } = options;
	const name = `input.${media.field}`;
	const fail = (error: string): DownloadOutcome => ({ ok: false, error });
	const reader = new AbortController();
	const abort = () => reader.abort();
	signal.addEventListener('abort', abort, { once: true });
	try {
		let response: Response;
		try {
			response = await fetch(resolved(url, hosts), { redirect: 'follow', signal: reader.signal });
		} catch (error) {
			if (signal.aborted) throw error;
			return fail(`Could not download ${name} from ${hostOf(url)}: ${networkCause(error)}.`);
		}
		if (!response.ok || !response.body) {
			await response.body?.cancel();
			return fail(
				`Could not download ${name} from ${hostOf(url)}: the server answered ${response.status}${response.statusText ? ` ${response.statusText}` : ''}. The URL must be a direct-download link anyone can read without a header, such as a signed URL.`,
			);
		}
		const declared = Number(response.headers.get('content-length') ?? NaN);
		if (declared >= LIMITS.transcriptionMaxBytes) {
			await response.body.cancel();
			return fail(`${name} is ${sizeText(declared)}; files must be smaller than 3 GB.`);
		}
		if (faults.roll('download-slow')) await clock.sleep(faults.current.downloadSlowMs, signal);
		const cutAt = faults.roll('download-cut')
			? Math.floor((Number.isFinite(declared) ? declared : HEAD_BYTES) / 2)
			: undefined;
		const hash = createHash('sha256');
		const head: Buffer[] = [];
		let headSize = 0;
		let size = 0;
		let checkedHead = false;
		try {
			for await (const chunk of response.body) {
				const bytes = Buffer.from(chunk);
				if (cutAt !== undefined && size + bytes.length > cutAt)
					throw new Error('the download fault cut the file short');
				hash.update(bytes);
				size += bytes.length;
				if (headSize < HEAD_BYTES) {
					head.push(bytes);
					headSize += bytes.length;
				}
				// Leaving the loop cancels the body: the rest of the file is never read.
				if (size >= LIMITS.transcriptionMaxBytes)
					return fail(`${name} is over ${sizeText(size)}; files must be smaller than 3 GB.`);
				if (!checkedHead && headSize >= HEAD_BYTES) {
					checkedHead = true;
					const refusal = refuseByHead(Buffer.concat(head), declared, name, expected, media);
					if (refusal) return fail(refusal);
				}
			}
		} catch (error) {
			if (signal.aborted) throw error;
			const of = Number.isFinite(declared) ? ` of ${declared}` : '';
			return fail(
				`The download of ${name} from ${hostOf(url)} broke off after ${size}${of} bytes; the file could not be read whole.`,
			);
		}
		if (size === 0) return fail(`${name} is an empty file.`);
		const first = Buffer.concat(head);
		const refusal = refuseByHead(first, size, name, expected, media);
		if (refusal) return fail(refusal);
		const mediaType = sniff(first);
		const seconds = mediaType === 'audio/wav' ? wavSeconds(first, size) : undefined;
		return {
			ok: true,
			file: {
				field: media.field,
				size,
				sha256: hash.digest('hex'),
				...(mediaType ? { mediaType } : {}),
				...(seconds !== undefined ? { seconds } : {}),
			},
		};
	} finally {
		signal.removeEventListener('abort', abort);
	}
}

/** A file refused from its first bytes: a web page, another kind of media, a recording too long. */
function refuseByHead(
	head: Buffer,
	size: number,
	name: string,
	expected: string,
	media: MediaField,
): string | undefined {
	const mediaType = sniff(head);
	if (mediaType === 'text/html')
		return `${name} returned a web page, not ${expected}: share links of storage services open a page; use a direct-download link.`;
	// Types the emulator does not recognise pass: the real service decodes far more than it knows.
	if (mediaType && !acceptsMediaType(media.accept, mediaType))
		return `${name} is ${mediaType}, not ${expected}.`;
	if (mediaType === 'audio/wav') {
		const seconds = wavSeconds(head, Number.isFinite(size) ? size : Infinity);
		if (seconds !== undefined && seconds >= LIMITS.transcriptionMaxSeconds)
			return `${name} is ${lengthText(seconds)} long; recordings must be shorter than 2.5 hours.`;
	}
	return undefined;
}
