import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Clock } from './clock';
import { jobWebhookPayloadSchema, type JobWebhookPayload } from './schemas';
import { parseOrThrow } from './validation';

/** Standard Webhooks: deliveries older or newer than this are refused, to stop replays. */
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

export type WebhookFailureReason =
	| 'missing-headers'
	| 'bad-timestamp'
	| 'stale'
	| 'future'
	| 'bad-signature'
	| 'bad-secret'
	| 'bad-payload';

export class WebhookVerificationError extends Error {
	readonly reason: WebhookFailureReason;
	constructor(reason: WebhookFailureReason, message: string) {
		super(message);
		this.name = 'WebhookVerificationError';
		this.reason = reason;
	}
}

export type WebhookHeaders = {
	'webhook-id': string;
	'webhook-timestamp': string;
	'webhook-signature': string;
};

/** Accepts a plain header bag (any case, string or string[] values) as Node and n8n hand it over. */
export type HeaderBag = Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
	const direct = headers[name] ?? headers[name.toLowerCase()];
	const value =
		direct ??
		Object.entries(headers).find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1];
	return Array.isArray(value) ? value[0] : value;
}

/** The key is the base64 secret, with or without the `whsec_` prefix. */
export function decodeWebhookSecret(secret: string): Buffer {
	const base64 = secret.trim().replace(/^whsec_/, '');
	if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) {
		throw new WebhookVerificationError(
			'bad-secret',
			'The webhook secret must be base64 (optionally prefixed "whsec_").',
		);
	}
	const key = Buffer.from(base64, 'base64');
	if (key.length === 0)
		throw new WebhookVerificationError('bad-secret', 'The webhook secret is empty.');
	return key;
}

export function computeWebhookSignature(
	key: Buffer,
	id: string,
	timestamp: string,
	rawBody: Buffer | string,
): string {
	return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(rawBody).digest('base64');
}

export interface SignedWebhook {
	headers: WebhookHeaders;
	body: string;
}

/** Signs a payload the way the service does; the emulator delivers with it and tests forge with it. */
export function signWebhook(
	secret: string,
	body: string,
	options: { id?: string; timestampSeconds: number },
): SignedWebhook {
	const id = options.id ?? `msg_${randomUUID()}`;
	const timestamp = String(Math.floor(options.timestampSeconds));
	const signature = computeWebhookSignature(decodeWebhookSecret(secret), id, timestamp, body);
	return {
		headers: {
			'webhook-id': id,
			'webhook-timestamp': timestamp,
			'webhook-signature': `v1,${signature}`,
		},
		body,
	};
}

export interface VerifiedWebhook {
	/** The idempotency key: deliveries can repeat with the same id. */
	id: string;
	timestampSeconds: number;
}

/**
 * Verifies a Standard Webhooks signature over the raw body bytes. Throws WebhookVerificationError
 * saying why; the message never contains the secret or the expected signature.
 */
export function verifyWebhook(
	secret: string,
	headers: HeaderBag,
	rawBody: Buffer | string,
	options: { nowSeconds: number; toleranceSeconds?: number },
): VerifiedWebhook {
	const id = header(headers, 'webhook-id');
	const timestamp = header(headers, 'webhook-timestamp');
	const signatures = header(headers, 'webhook-signature');
	if (!id || !timestamp || !signatures) {
		throw new WebhookVerificationError(
			'missing-headers',
			'The request lacks the webhook-id, webhook-timestamp or webhook-signature header.',
		);
	}
	if (!/^\d{1,12}$/.test(timestamp)) {
		throw new WebhookVerificationError(
			'bad-timestamp',
			'The webhook-timestamp header is not a Unix time in seconds.',
		);
	}
	const timestampSeconds = Number(timestamp);
	const tolerance = options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
	if (timestampSeconds < options.nowSeconds - tolerance) {
		throw new WebhookVerificationError(
			'stale',
			'The webhook is too old (its timestamp is more than 5 minutes ago).',
		);
	}
	if (timestampSeconds > options.nowSeconds + tolerance) {
		throw new WebhookVerificationError(
			'future',
			'The webhook timestamp is more than 5 minutes in the future.',
		);
	}
	const expected = Buffer.from(
		computeWebhookSignature(decodeWebhookSecret(secret), id, timestamp, rawBody),
		'base64',
	);
	const matches = signatures.split(' ').some((entry) => {
		const [version, value] = entry.split(',', 2);
		if (version !== 'v1' || !value) return false;
		const given = Buffer.from(value, 'base64');
		return given.length === expected.length && timingSafeEqual(given, expected);
	});
	if (!matches)
		throw new WebhookVerificationError('bad-signature', 'The webhook signature does not match.');
	return { id, timestampSeconds };
}

export interface WebhookVerifierOptions {
	/** The secret known up front (configured or pasted); without one, the first delivery reads it. */
	secret?: string;
	/** Reads the organization's current secret (the management API); without it the secret never changes. */
	readSecret?: () => Promise<string>;
	clock: Pick<Clock, 'now'>;
	/**
	 * A signature mismatch re-reads the secret (it may have been rotated), at most this often
	 * (default 60 s): forged deliveries cannot turn into a stream of API calls.
	 */
	minRefreshIntervalMs?: number;
	/** A secret read longer ago than this is read again before use (default: kept until a mismatch). */
	maxAgeMs?: number;
	toleranceSeconds?: number;
}

/**
 * Verifies deliveries against the organization's webhook secret and follows its rotation: on a
 * signature mismatch it reads the secret again (bounded: one read at a time, at most one per
 * interval) and checks once more. Used by the n8n trigger and the Slack app alike.
 */
export class WebhookVerifier {
	private secret?: string;
	private lastReadAt = Number.NEGATIVE_INFINITY;
	private reading?: Promise<string>;

	constructor(private readonly options: WebhookVerifierOptions) {
		this.secret = options.secret;
	}

	/**
	 * `readSecret` overrides the one given at construction for this call: n8n reads through the
	 * request helper of the execution at hand.
	 */
	async verify(
		headers: HeaderBag,
		rawBody: Buffer | string,
		readSecret = this.options.readSecret,
	): Promise<VerifiedWebhook> {
		const { clock, maxAgeMs, toleranceSeconds } = this.options;
		const nowSeconds = Math.floor(clock.now() / 1000);
		const check = (secret: string) =>
			verifyWebhook(secret, headers, rawBody, { nowSeconds, toleranceSeconds });
		const expired =
			readSecret !== undefined &&
			maxAgeMs !== undefined &&
			clock.now() - this.lastReadAt >= maxAgeMs;
		const secret = this.secret === undefined || expired ? await this.read(readSecret) : this.secret;
		try {
			return check(secret);
		} catch (error) {
			if (!(error instanceof WebhookVerificationError) || error.reason !== 'bad-signature')
				throw error;
			const fresh = await this.refreshed(readSecret);
			if (fresh === undefined || fresh === secret) throw error;
			return check(fresh);
		}
	}

	/** The secret read again, when a read is under way or allowed now; else undefined. */
	private refreshed(readSecret: (() => Promise<string>) | undefined): Promise<string> | undefined {
		if (this.reading) return this.reading;
		if (!readSecret) return undefined;
		const interval = this.options.minRefreshIntervalMs ?? 60_000;
		return this.options.clock.now() - this.lastReadAt >= interval
			? this.read(readSecret)
			: undefined;
	}

	private read(readSecret: (() => Promise<string>) | undefined): Promise<string> {
		const { clock } = this.options;
		if (!readSecret) {
			return Promise.reject(
				new WebhookVerificationError(
					'bad-secret',
					'No webhook secret is configured and none can be read.',
				),
			);
		}
		this.lastReadAt = clock.now();
		this.reading ??= readSecret()
			.then((secret) => {
				this.secret = secret;
				return secret;
			})
			.finally(() => {
				this.reading = undefined;
			});
		return this.reading;
	}
}

/** Parses a verified job-completion delivery; events keyed `type` are read as `action`. */
export function parseJobWebhook(rawBody: Buffer | string): JobWebhookPayload {
	let json: unknown;
	try {
		json = JSON.parse(rawBody.toString());
	} catch {
		throw new WebhookVerificationError('bad-payload', 'The webhook body is not valid JSON.');
	}
	return parseOrThrow(jobWebhookPayloadSchema, json, 'webhook payload');
}
