import sharp from 'sharp';
import { randomFor } from '../determinism';

export type ImageFormat = 'png' | 'jpeg' | 'webp';

export interface RenderRequest {
	prompt: string;
	seed: number;
	width: number;
	height: number;
	/** Position in a batch: images of one batch differ. */
	index: number;
	format: ImageFormat;
	quality?: number;
	progressive?: boolean;
	lossless?: boolean;
}

function escapeXml(text: string): string {
	return text.replace(
		/[<>&'"]/g,
		(c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c] ?? c,
	);
}

/** Breaks the prompt into at most `maxLines` lines of about `width` characters. */
function wrap(text: string, width: number, maxLines: number): string[] {
	const lines: string[] = [];
	let line = '';
	for (const word of text.split(/\s+/).filter(Boolean)) {
		if (line && line.length + word.length + 1 > width) {
			lines.push(line);
			line = '';
			if (lines.length === maxLines) break;
		}
		line = line ? `${line} ${word}` : word.slice(0, width);
	}
	if (line && lines.length < maxLines) lines.push(line);
	if (lines.length === maxLines && text.length > lines.join(' ').length) lines[maxLines - 1] += '…';
	return lines;
}

/**
 * An SVG whose colours and shapes come from a hash of prompt, seed and batch index, with the prompt
 * written on it: the same request always gives the same picture, different prompts visibly differ.
 */
export function pictureSvg(request: RenderRequest): string {
	const { width, height } = request;
	const random = randomFor(`${request.prompt}\u0000${request.seed}\u0000${request.index}`);
	const hue = Math.floor(random() * 360);
	const hue2 = (hue + 60 + Math.floor(random() * 180)) % 360;
	const shapes: string[] = [];
	const count = 5 + Math.floor(random() * 6);
	for (let i = 0; i < count; i++) {
		const fill = `hsl(${Math.floor(random() * 360)},70%,${40 + Math.floor(random() * 40)}%)`;
		const x = Math.round(random() * width);
		const y = Math.round(random() * height);
		const size = Math.round((0.05 + random() * 0.25) * Math.min(width, height));
		shapes.push(
			random() < 0.5
				? `<circle cx="${x}" cy="${y}" r="${size}" fill="${fill}" fill-opacity="0.65"/>`
				: `<rect x="${x - size}" y="${y - size}" width="${size * 2}" height="${Math.round(size * 1.3)}" rx="${Math.round(size / 5)}" fill="${fill}" fill-opacity="0.6" transform="rotate(${Math.floor(random() * 90)} ${x} ${y})"/>`,
		);
	}
	const fontSize = Math.max(12, Math.round(Math.min(width, height) / 18));
	const lines = wrap(request.prompt, Math.max(10, Math.floor(width / (fontSize * 0.6))), 4);
	const text = lines
		.map(
			(line, i) =>
				`<tspan x="${Math.round(width * 0.05)}" dy="${i === 0 ? 0 : Math.round(fontSize * 1.25)}">${escapeXml(line)}</tspan>`,
		)
		.join('');
	const textY = Math.round(height - fontSize * (1.25 * lines.length + 1.5));
	return (
		`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">` +
		`<defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="hsl(${hue},65%,35%)"/>` +
		`<stop offset="1" stop-color="hsl(${hue2},65%,60%)"/></linearGradient></defs>` +
		`<rect width="${width}" height="${height}" fill="url(#g)"/>${shapes.join('')}` +
		`<rect x="0" y="${textY - fontSize * 1.5}" width="${width}" height="${height - textY + fontSize * 1.5}" fill="black" fill-opacity="0.45"/>` +
		`<text y="${textY}" font-family="DejaVu Sans, sans-serif" font-size="${fontSize}" fill="white">${text}</text>` +
		`<text x="${width - Math.round(width * 0.05)}" y="${Math.round(fontSize * 1.5)}" text-anchor="end" font-family="DejaVu Sans Mono, monospace" font-size="${Math.round(fontSize * 0.6)}" fill="white" fill-opacity="0.8">seed ${request.seed}</text>` +
		`</svg>`
	);
}

/** Renders the picture as a real, decodable PNG, JPEG or WebP of exactly the requested size. */
export async function renderImage(request: RenderRequest): Promise<Buffer> {
	const image = sharp(Buffer.from(pictureSvg(request))).resize(request.width, request.height, {
		fit: 'fill',
	});
	switch (request.format) {
		case 'jpeg':
			return image
				.jpeg({ quality: request.quality ?? 90, progressive: request.progressive ?? false })
				.toBuffer();
		case 'webp':
			return image
				.webp({ quality: request.quality ?? 90, lossless: request.lossless ?? false })
				.toBuffer();
		default:
			return image.png().toBuffer();
	}
}
