import type { IWebhookFunctions } from 'n8n-workflow';
import {
	WebhookVerificationError,
	WebhookVerifier,
	rateLimitKeyFor,
	type ManagementClient,
	type VerifiedWebhook,
} from '../../../shared';
import { n8nClock, type ManagementCredentials } from '../transport';

/**
 * Verifying GPU Cloud's signed deliveries (Standard Webhooks) in n8n with the shared verifier: the
 * raw body as received, and the organization's signing secret read through the credential, kept in
 * memory for a while and read again when it was rotated (never in workflow data, which n8n stores
 * in its database).
 */

const SECRET_TTL_MS = 10 * 60_000;

/** One verifier (and so one remembered secret) per key and organization. */
const verifiers = new Map<string, WebhookVerifier>();

/** Identified by a hash rather than the key itself. */
export function secretCacheKey(credentials: ManagementCredentials): string {
	return rateLimitKeyFor(
		credentials.apiKey,
		`${credentials.baseUrl}\n${credentials.organizationName}`,
	);
}

export interface SecretSource {
	verifier: WebhookVerifier;
	/** How this execution reads the organization's secret (n8n's request helper); none for a pasted one. */
	readSecret?: () => Promise<string>;
}

/** The organization's secret, from memory or from GPU Cloud. */
export function organizationSecret(client: ManagementClient, cacheKey: string): SecretSource {
	let verifier = verifiers.get(cacheKey);
	if (!verifier) {
		verifier = new WebhookVerifier({ clock: n8nClock, maxAgeMs: SECRET_TTL_MS });
		verifiers.set(cacheKey, verifier);
	}
	return { verifier, readSecret: () => client.webhookSecret.get() };
}

/** A secret pasted into the node: used as it is. */
export function pastedSecret(secret: unknown): SecretSource {
	return {
		verifier: new WebhookVerifier({
			secret: typeof secret === 'string' ? secret : '',
			clock: n8nClock,
		}),
	};
}

/** The exact bytes GPU Cloud signed. */
export async function rawBodyOf(context: IWebhookFunctions): Promise<Buffer> {
	const request = context.getRequestObject();
	if (!Buffer.isBuffer(request.rawBody) && typeof request.readRawBody === 'function')
		await request.readRawBody();
	if (Buffer.isBuffer(request.rawBody)) return request.rawBody;
	throw new WebhookVerificationError('bad-payload', 'The request body could not be read as sent.');
}

/** Checks the signature; a mismatch reads the organization's secret again (bounded), as it may have been rotated. */
export function verifyDelivery(
	context: IWebhookFunctions,
	rawBody: Buffer,
	source: SecretSource,
): Promise<VerifiedWebhook> {
	return source.verifier.verify(context.getHeaderData(), rawBody, source.readSecret);
}

/** Refuses a delivery without starting or resuming anything. */
export function refuse(
	context: IWebhookFunctions,
	status: 400 | 401,
	message: string,
): { noWebhookResponse: true } {
	context.getResponseObject().status(status).json({ error: message });
	return { noWebhookResponse: true };
}
