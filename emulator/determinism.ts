import { createHash } from 'node:crypto';
import { prng } from './prng';

/** 32 bits of SHA-256: the same text always gives the same number. */
export function hashOf(text: string): number {
	return createHash('sha256').update(text).digest().readUInt32BE(0);
}

/** A UUID-shaped id that is stable for a given text (catalogue ids survive restarts). */
export function stableUuid(text: string): string {
	const hex = createHash('sha256').update(text).digest('hex');
	return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** A PRNG seeded by text, for outputs that must be repeatable per input. */
export function randomFor(text: string): () => number {
	return prng(hashOf(text));
}

export function wordsOf(text: string): string[] {
	return text.split(/\s+/).filter((word) => word.length > 0);
}

export function round(value: number, digits: number): number {
	const factor = 10 ** digits;
	return Math.round(value * factor) / factor;
}

export function pick<T>(items: readonly T[], random: () => number): T {
	const item = items[Math.floor(random() * items.length)];
	if (item === undefined) throw new RangeError('pick() needs a non-empty list');
	return item;
}
