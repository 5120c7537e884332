import type { IWebhookFunctions } from 'n8n-workflow';
import { WebhookVerificationError, rateLimitKeyFor, verifyWebhook, type ManagementClient, type VerifiedWebhook } from '../../../shared';
import type { ManagementCredentials } from '../transport';

/**
 * Verifying GPU Cloud's signed deliveries (Standard Webhooks) in n8n: the raw body as received, and
 * the organization's signing secret fetched through the credential and kept in memory for a while
 * (never in workflow data, which n8n stores in its database).
 */

const SECRET_TTL_MS = 10 * 60_000;
/** A failed check may mean the secret was rotated; look again, but not for every forged request. */
const MIN_REFRESH_INTERVAL_MS = 60_000;

const secrets = new Map<string, { secret: string; fetchedAt: number }>();

/** One cached secret per key and organization, identified by a hash rather than the key itself. */
export function secretCacheKey(credentials: ManagementCredentials): string {
  return rateLimitKeyFor(credentials.apiKey, `${credentials.baseUrl}\n${credentials.organizationName}`);
}

export type SecretSource = (refresh: boolean) => Promise<string | undefined>;

/** The organization's secret, from memory or from GPU Cloud. */
export function organizationSecret(client: ManagementClient, cacheKey: string): SecretSource {
  return async (refresh) => {
    const cached = secrets.get(cacheKey);
    const now = Date.now();
    if (cached && now - cached.fetchedAt < SECRET_TTL_MS && !(refresh && now - cached.fetchedAt >= MIN_REFRESH_INTERVAL_MS)) {
      return refresh ? undefined : cached.secret;
    }
    const secret = await client.webhookSecret.get();
    secrets.set(cacheKey, { secret, fetchedAt: now });
    return secret;
  };
}

/** The exact bytes GPU Cloud signed. */
export async function rawBodyOf(context: IWebhookFunctions): Promise<Buffer> {
  const request = context.getRequestObject();
  if (!Buffer.isBuffer(request.rawBody) && typeof request.readRawBody === 'function') await request.readRawBody();
  if (Buffer.isBuffer(request.rawBody)) return request.rawBody;
  throw new WebhookVerificationError('bad-payload', 'The request body could not be read as sent.');
}

function attempt(secret: string, context: IWebhookFunctions, rawBody: Buffer, nowSeconds: number): VerifiedWebhook | WebhookVerificationError {
  try {
    return verifyWebhook(secret, context.getHeaderData(), rawBody, { nowSeconds });
  } catch (error) {
    return error instanceof WebhookVerificationError ? error : new WebhookVerificationError('bad-secret', 'The webhook secret could not be used.');
  }
}

/**
 * Checks the signature; on a mismatch looks the secret up once more (it may have been rotated)
 * when the one in memory is old enough to be worth it.
 */
export async function verifyDelivery(context: IWebhookFunctions, rawBody: Buffer, secretOf: SecretSource): Promise<VerifiedWebhook> {
  const nowSeconds = Math.floor(Date.now() / 1000);
  const secret = await secretOf(false);
  if (secret === undefined) throw new WebhookVerificationError('bad-secret', 'No webhook secret is available.');
  const first = attempt(secret, context, rawBody, nowSeconds);
  if (!(first instanceof WebhookVerificationError)) return first;
  if (first.reason !== 'bad-signature') throw first;
  const fresh = await secretOf(true);
  if (fresh === undefined || fresh === secret) throw first;
  const second = attempt(fresh, context, rawBody, nowSeconds);
  if (second instanceof WebhookVerificationError) throw second;
  return second;
}

/** Refuses a delivery without starting or resuming anything. */
export function refuse(context: IWebhookFunctions, status: 400 | 401, message: string): { noWebhookResponse: true } {
  context.getResponseObject().status(status).json({ error: message });
  return { noWebhookResponse: true };
}
