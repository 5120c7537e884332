import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Seals the secrets the installation store keeps (bot tokens, a workspace's GPU Cloud API key) with
 * AES-256-GCM. A sealed value is `v1.<key id>.<iv>.<tag>.<ciphertext>` (base64url parts); the key id
 * (a hash prefix, never the key) says which key sealed it, so values sealed with a previous key stay
 * readable during a rotation. The associated data binds each value to its row and column: a sealed
 * token copied into another workspace's row does not open.
 */

const KEY_RULE =
	'must be 32 random bytes as 64 hex characters or base64 (for example `openssl rand -hex 32`)';

export class SecretCipher {
	private readonly current: { id: string; key: Buffer };
	private readonly keys = new Map<string, Buffer>();

	/** `key` seals everything new; `previousKeys` only open what they sealed before a rotation. */
	constructor(key: Buffer, previousKeys: Buffer[] = []) {
		this.current = { id: keyId(key), key };
		for (const each of [key, ...previousKeys]) this.keys.set(keyId(each), each);
	}

	seal(plaintext: string, context: string): string {
		const iv = randomBytes(12);
		const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
		cipher.setAAD(Buffer.from(context, 'utf8'));
		const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
		return [
			'v1',
			this.current.id,
			iv.toString('base64url'),
			cipher.getAuthTag().toString('base64url'),
			sealed.toString('base64url'),
		].join('.');
	}

	open(value: string, context: string): string {
		const [version, id, iv, tag, sealed, ...rest] = value.split('.');
		if (version !== 'v1' || !id || !iv || !tag || sealed === undefined || rest.length > 0)
			throw new Error(`A stored secret (${context}) is not in the sealed format.`);
		const key = this.keys.get(id);
		if (!key) throw new MissingKeyError(context, id);
		const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
		decipher.setAAD(Buffer.from(context, 'utf8'));
		decipher.setAuthTag(Buffer.from(tag, 'base64url'));
		try {
			return Buffer.concat([
				decipher.update(Buffer.from(sealed, 'base64url')),
				decipher.final(),
			]).toString('utf8');
		} catch {
			throw new Error(
				`A stored secret (${context}) does not open with its key: it was altered or belongs to another row.`,
			);
		}
	}

	/** How a value sealed with each key this process has begins (`v1.<key id>.`), the current key first. */
	keyPrefixes(): string[] {
		return [...this.keys.keys()].map((id) => `v1.${id}.`);
	}
}

/** A value sealed with a key this process was not given (a rotation without the previous key). */
export class MissingKeyError extends Error {
	constructor(context: string, id: string) {
		super(
			`A stored secret (${context}) was sealed with a key this process does not have (key id ${id}); set SLACK_INSTALLATION_PREVIOUS_KEYS.`,
		);
		this.name = 'MissingKeyError';
	}
}

function keyId(key: Buffer): string {
	return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/** The key from its setting: 64 hex characters or base64 of 32 bytes; undefined with the rule when it is neither. */
export function parseKey(text: string): Buffer | undefined {
	const trimmed = text.trim();
	const key = /^[0-9a-fA-F]{64}$/.test(trimmed)
		? Buffer.from(trimmed, 'hex')
		: /^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)
			? Buffer.from(trimmed, 'base64')
			: undefined;
	return key?.length === 32 ? key : undefined;
}

export { KEY_RULE };
