/**
 * The pixel size of a PNG, JPEG or WebP image, read from its header: what a generated image
 * really is (a workload may round or ignore the size asked for), for answers that describe an
 * image without carrying it. Undefined for anything else or a header cut short.
 */
export function imageSize(bytes: Uint8Array): { width: number; height: number } | undefined {
	const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
	const ascii = (at: number, length: number) =>
		String.fromCharCode(...bytes.subarray(at, at + length));
	// PNG: the signature, then the IHDR chunk's width and height (big-endian).
	if (bytes.length >= 24 && bytes[0] === 0x89 && ascii(1, 3) === 'PNG' && ascii(12, 4) === 'IHDR')
		return { width: view.getUint32(16), height: view.getUint32(20) };
	// JPEG: walk the marker segments to a start-of-frame (SOF0-SOF15 but DHT, JPG and DAC).
	if (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8) {
		let at = 2;
		while (at + 9 <= bytes.length) {
			if (bytes[at] !== 0xff) return undefined;
			const marker = bytes[at + 1];
			if (marker === 0xff) {
				at += 1;
				continue;
			}
			const length = view.getUint16(at + 2);
			if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker))
				return { width: view.getUint16(at + 7), height: view.getUint16(at + 5) };
			at += 2 + length;
		}
		return undefined;
	}
	// WebP: a RIFF container holding a lossy (VP8), lossless (VP8L) or extended (VP8X) image.
	if (bytes.length >= 30 && ascii(0, 4) === 'RIFF' && ascii(8, 4) === 'WEBP') {
		const chunk = ascii(12, 4);
		if (chunk === 'VP8 ')
			return {
				width: view.getUint16(26, true) & 0x3fff,
				height: view.getUint16(28, true) & 0x3fff,
			};
		if (chunk === 'VP8L') {
			const bits = view.getUint32(21, true);
			return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
		}
		if (chunk === 'VP8X') {
			const read24 = (at: number) => bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16);
			return { width: read24(24) + 1, height: read24(27) + 1 };
		}
	}
	return undefined;
}
