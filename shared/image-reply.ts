import { z } from 'zod/v4';
import type { ReplyChecks } from './request';
import { imageResultSchema, type ImageResult } from './schemas';

/** A finished generation with its images as bytes. */
export interface GeneratedImages {
	id: string;
	images: Buffer[];
	filenames?: string[];
	stats?: Record<string, unknown>;
}

export function generatedImages(
	{ id, filenames, stats }: Pick<ImageResult, 'id' | 'filenames' | 'stats'>,
	images: Buffer[],
): GeneratedImages {
	return { id, images, ...(filenames ? { filenames } : {}), ...(stats ? { stats } : {}) };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NOT_BASE64 = /[^A-Za-z0-9+/=]/;
const FALLBACK_CAPACITY = 1 << 20;

/** The reply's JSON with each image replaced by "", checked like the whole reply otherwise. */
const skeletonSchema = imageResultSchema.extend({
	images: z.array(z.literal('', { error: 'must be a base64 string' })).min(1),
});

/**
 * Bytes of the images of one reply, decoded into one arena sized from the reply's length: the
 * images are views of it, so decoding allocates about 3/4 of the reply once instead of a string
 * and a buffer per image.
 */
class ImageArena {
	private arena: Buffer;
	private used = 0;
	private start = 0;
	private carry = '';
	private padded = false;

	constructor(capacity: number) {
		this.arena = Buffer.allocUnsafe(capacity);
	}

	begin(): void {
		this.start = this.used;
		this.carry = '';
		this.padded = false;
	}

	/** Appends base64 text; whole groups of four are decoded now, the rest waits for the next piece. */
	write(piece: string, fail: (why: string) => Error): void {
		if (NOT_BASE64.test(piece)) throw fail('has an image that is not base64');
		const padding = this.padded ? 0 : piece.indexOf('=');
		if (padding >= 0 && /[^=]/.test(piece.slice(padding)))
			throw fail('has an image with base64 padding in the middle');
		if (padding >= 0) this.padded = true;
		const text = this.carry + piece;
		const whole = text.length - (text.length % 4);
		this.decode(text.slice(0, whole));
		this.carry = text.slice(whole);
	}

	end(fail: (why: string) => Error): Buffer {
		if (this.carry.length === 1) throw fail('has an image whose base64 is cut short');
		this.decode(this.carry);
		if (this.used === this.start) throw fail('has an empty image');
		return this.arena.subarray(this.start, this.used);
	}

	private decode(text: string): void {
		if (text.length === 0) return;
		const needed = Math.ceil(text.length / 4) * 3;
		if (this.used + needed > this.arena.length) {
			// Earlier images keep the old arena; only the image in progress moves.
			const inProgress = this.arena.subarray(this.start, this.used);
			const grown = Buffer.allocUnsafe(
				Math.max(this.arena.length * 2, inProgress.length + needed, FALLBACK_CAPACITY),
			);
			inProgress.copy(grown);
			this.arena = grown;
			this.used = inProgress.length;
			this.start = 0;
		}
		this.used += this.arena.write(text, this.used, 'base64');
	}
}

/**
 * Reads an image reply (`{"id", "images": ["<base64>", ...], ...}`) as it arrives and decodes each
 * image straight into bytes. Neither the reply's text nor an image's base64 is ever held whole: a
 * waiting workflow holds about its images' size, where parsing the text would hold about five times
 * that. Everything but the images is kept as JSON text and checked with the reply's schema.
 */
export async function readImageReply(
	body: AsyncIterable<Uint8Array>,
	sizeHint: number | undefined,
	checks: ReplyChecks,
): Promise<GeneratedImages> {
	const fail = (why: string) => checks.malformed(why);
	// Base64 is 4/3 of the bytes; a compressed reply may be shorter than its images, so the arena can grow.
	const images = new ImageArena(
		sizeHint && sizeHint > 0 ? Math.ceil((sizeHint * 3) / 4) : FALLBACK_CAPACITY,
	);
	const decoded: Buffer[] = [];
	const skeleton: Buffer[] = [];

	let depth = 0;
	let inString = false;
	let escaped = false;
	let expectingKey = false;
	let key: number[] | undefined;
	let lastKey = '';
	let imagesNext = false;
	let inImagesArray = false;
	let inImage = false;
	let imageEscape = false;

	for await (const chunk of body) {
		const bytes = Buffer.isBuffer(chunk)
			? chunk
			: Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
		let kept = 0;
		let i = 0;
		while (i < bytes.length) {
			if (inImage) {
				if (imageEscape) {
					// JSON may escape the slash of base64; any other escape cannot be base64.
					if (bytes[i] !== 0x2f) throw fail('has an image that is not base64');
					images.write('/', fail);
					imageEscape = false;
					i++;
					continue;
				}
				const quote = bytes.indexOf(QUOTE, i);
				const backslash = bytes.indexOf(BACKSLASH, i);
				const stop =
					quote < 0
						? backslash < 0
							? bytes.length
							: backslash
						: backslash < 0
							? quote
							: Math.min(quote, backslash);
				if (stop > i) images.write(bytes.toString('latin1', i, stop), fail);
				if (stop === bytes.length) {
					i = stop;
					kept = stop;
					break;
				}
				if (bytes[stop] === BACKSLASH) {
					imageEscape = true;
					i = stop + 1;
					kept = i;
					continue;
				}
				decoded.push(images.end(fail));
				inImage = false;
				kept = stop;
				i = stop + 1;
				continue;
			}
			const byte = bytes[i];
			if (inString) {
				if (escaped) escaped = false;
				else if (byte === BACKSLASH) escaped = true;
				else if (byte === QUOTE) {
					inString = false;
					if (key) {
						lastKey = Buffer.from(key).toString('utf8');
						key = undefined;
					}
				} else if (key && key.length < 64) key.push(byte);
			} else if (byte === QUOTE) {
				if (inImagesArray && depth === 2) {
					skeleton.push(Buffer.from(bytes.subarray(kept, i + 1)));
					images.begin();
					inImage = true;
				} else {
					inString = true;
					if (depth === 1 && expectingKey) key = [];
				}
				imagesNext = false;
			} else if (byte === 0x7b || byte === 0x5b) {
				depth++;
				if (depth === 1) expectingKey = byte === 0x7b;
				if (depth === 2 && imagesNext && byte === 0x5b) inImagesArray = true;
				imagesNext = false;
			} else if (byte === 0x7d || byte === 0x5d) {
				if (depth === 2) inImagesArray = false;
				depth--;
			} else if (depth === 1 && byte === 0x2c) {
				expectingKey = true;
			} else if (depth === 1 && byte === 0x3a) {
				expectingKey = false;
				imagesNext = lastKey === 'images';
			} else if (byte > 0x20) {
				imagesNext = false;
			}
			i++;
		}
		if (!inImage && kept < bytes.length) skeleton.push(Buffer.from(bytes.subarray(kept)));
	}
	if (inImage || inString || depth !== 0) throw fail('was cut off');

	return generatedImages(
		checks.parse(skeletonSchema, Buffer.concat(skeleton).toString('utf8')),
		decoded,
	);
}
