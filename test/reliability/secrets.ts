import { format } from 'node:util';

/**
 * Distinctive secrets, every form they could leak in, and a capture of everything the process
 * prints, for the secret-leak tests.
 */

/** An API key nobody else uses: a search for it (or a piece of it) cannot hit anything by chance. */
export const API_KEY = 'sk-reliability-apikey-5f0c2b7e91d4a6e8';
/** A second key, deliberately wrong: the service refuses it, and it must not leak either. */
export const WRONG_API_KEY = 'sk-reliability-wrongkey-8a3e6d1c47b2f590';
/** The organization's webhook signing key as raw bytes; GPU Cloud hands it out base64-encoded. */
export const WEBHOOK_KEY_BYTES = 'whkey-reliability-4e8d1a6c9b2f07';
export const WEBHOOK_SECRET = Buffer.from(WEBHOOK_KEY_BYTES).toString('base64');

export interface Secret {
	name: string;
	value: string;
}

/** Every form of a secret worth searching for: the value, its distinctive middle (a truncated preview would keep it). */
function forms(name: string, value: string): Secret[] {
	const middle = value.slice(Math.floor(value.length / 3), Math.floor(value.length / 3) + 12);
	return [
		{ name, value },
		{ name: `${name} (middle 12 characters)`, value: middle },
	];
}

/** The webhook secret as base64, whsec_-prefixed, unpadded, base64url, raw bytes and hex. */
export function webhookSecretForms(secretBase64: string): Secret[] {
	const bytes = Buffer.from(secretBase64.replace(/^whsec_/, ''), 'base64');
	const base64 = bytes.toString('base64');
	return [
		...forms('webhook secret (base64)', base64),
		{ name: 'webhook secret (whsec_)', value: `whsec_${base64}` },
		{ name: 'webhook secret (base64, unpadded)', value: base64.replace(/=+$/, '') },
		...forms('webhook secret (base64url)', bytes.toString('base64url')),
		...forms('webhook secret (raw bytes)', bytes.toString('latin1')),
		...forms('webhook secret (hex)', bytes.toString('hex')),
	];
}

export function secretForms(secrets: Record<string, string>, webhookSecret: string): Secret[] {
	return [
		...Object.entries(secrets).flatMap(([name, value]) => forms(name, value)),
		...webhookSecretForms(webhookSecret),
	];
}

/** The secrets found in any of the texts, by name; empty when nothing leaked. */
export function leaks(texts: readonly string[], secrets: readonly Secret[]): string[] {
	const corpus = texts.join('\n');
	return secrets.filter((secret) => corpus.includes(secret.value)).map((secret) => secret.name);
}

/** Records every console call and every write to stdout/stderr of this process until `stop()`. */
export function captureOutput(): { lines: string[]; stop(): void } {
	const lines: string[] = [];
	const methods = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;
	const spies = methods.map((method) =>
		jest
			.spyOn(console, method)
			.mockImplementation((...args: unknown[]) => void lines.push(format(...args))),
	);
	const writes = [process.stdout, process.stderr].map((stream) =>
		jest.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
			lines.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
			return true;
		}),
	);
	return {
		lines,
		stop: () => {
			for (const spy of [...spies, ...writes]) spy.mockRestore();
		},
	};
}
