import { randomBytes } from 'node:crypto';
import {
  WebhookDeduplicator,
  WebhookVerificationError,
  parseJobWebhook,
  signWebhook,
  verifyWebhook,
} from '../../shared/webhooks';
import { jobFixture } from '../support/fixtures';

const secret = randomBytes(32).toString('base64');
const now = 1_800_000_000;
const body = JSON.stringify({
  type: 'inference_endpoint.job.succeeded',
  timestamp: '2027-01-15T08:00:00Z',
  data: jobFixture({ status: 'succeeded', output: { text: 'hello' } }),
});

function reasonOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    throw error;
  }
  return 'accepted';
}

describe('webhook signatures', () => {
  const signed = signWebhook(secret, body, { id: 'msg_1', timestampSeconds: now });

  it('accepts a valid delivery and returns its id', () => {
    expect(verifyWebhook(secret, signed.headers, body, { nowSeconds: now })).toEqual({ id: 'msg_1', timestampSeconds: now });
  });

  it('accepts the secret with a whsec_ prefix and raw Buffer bodies', () => {
    expect(reasonOf(() => verifyWebhook(`whsec_${secret}`, signed.headers, Buffer.from(body), { nowSeconds: now }))).toBe('accepted');
  });

  it('rejects a tampered body', () => {
    expect(reasonOf(() => verifyWebhook(secret, signed.headers, body.replace('hello', 'hullo'), { nowSeconds: now }))).toBe('bad-signature');
  });

  it('rejects the wrong key', () => {
    expect(reasonOf(() => verifyWebhook(randomBytes(32).toString('base64'), signed.headers, body, { nowSeconds: now }))).toBe('bad-signature');
  });

  it('rejects a signature made for another id', () => {
    const other = signWebhook(secret, body, { id: 'msg_2', timestampSeconds: now });
    expect(reasonOf(() => verifyWebhook(secret, { ...signed.headers, 'webhook-signature': other.headers['webhook-signature'] }, body, { nowSeconds: now }))).toBe(
      'bad-signature',
    );
  });

  it('accepts within 5 minutes either way and rejects beyond', () => {
    expect(reasonOf(() => verifyWebhook(secret, signed.headers, body, { nowSeconds: now + 300 }))).toBe('accepted');
    expect(reasonOf(() => verifyWebhook(secret, signed.headers, body, { nowSeconds: now - 300 }))).toBe('accepted');
    expect(reasonOf(() => verifyWebhook(secret, signed.headers, body, { nowSeconds: now + 301 }))).toBe('stale');
    expect(reasonOf(() => verifyWebhook(secret, signed.headers, body, { nowSeconds: now - 301 }))).toBe('future');
  });

  it('accepts when any of several v1 signatures matches (key rotation)', () => {
    const rotated = `v1,${randomBytes(32).toString('base64')} v2,abc ${signed.headers['webhook-signature']}`;
    expect(reasonOf(() => verifyWebhook(secret, { ...signed.headers, 'webhook-signature': rotated }, body, { nowSeconds: now }))).toBe('accepted');
  });

  it.each([
    [{ 'webhook-id': 'msg_1', 'webhook-timestamp': String(now) }, 'missing-headers'],
    [{ ...signed.headers, 'webhook-timestamp': 'yesterday' }, 'bad-timestamp'],
    [{ ...signed.headers, 'webhook-signature': 'v1,' }, 'bad-signature'],
    [{ ...signed.headers, 'webhook-signature': 'garbage' }, 'bad-signature'],
  ])('rejects malformed headers %j', (headers, reason) => {
    expect(reasonOf(() => verifyWebhook(secret, headers, body, { nowSeconds: now }))).toBe(reason);
  });

  it('reads headers in any case and as arrays', () => {
    const upper = { 'Webhook-Id': ['msg_1'], 'WEBHOOK-TIMESTAMP': String(now), 'Webhook-Signature': signed.headers['webhook-signature'] };
    expect(reasonOf(() => verifyWebhook(secret, upper, body, { nowSeconds: now }))).toBe('accepted');
  });

  it('never puts the secret in its messages', () => {
    try {
      verifyWebhook(secret, signed.headers, 'x', { nowSeconds: now });
    } catch (error) {
      expect(String(error)).not.toContain(secret);
    }
  });

  it('rejects a secret that is not base64', () => {
    expect(reasonOf(() => verifyWebhook('not base64!', signed.headers, body, { nowSeconds: now }))).toBe('bad-secret');
  });
});

describe('webhook payloads and duplicates', () => {
  it('parses the job out of a delivery', () => {
    expect(parseJobWebhook(body).data.output).toEqual({ text: 'hello' });
  });

  it('rejects a body that is not JSON', () => {
    expect(reasonOf(() => parseJobWebhook('{oops'))).toBe('bad-payload');
  });

  it('lets each webhook id through once and forgets the oldest beyond capacity', () => {
    const dedup = new WebhookDeduplicator(2);
    expect([dedup.firstDelivery('a'), dedup.firstDelivery('a'), dedup.firstDelivery('b')]).toEqual([true, false, true]);
    dedup.firstDelivery('c');
    expect(dedup.firstDelivery('a')).toBe(true);
    expect(dedup.firstDelivery('c')).toBe(false);
  });
});
