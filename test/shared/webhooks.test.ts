import { randomBytes } from 'node:crypto';
import {
	WebhookVerificationError,
	parseJobWebhook,
	signWebhook,
	verifyWebhook,
	WebhookVerifier,
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
		expect(verifyWebhook(secret, signed.headers, body, { nowSeconds: now })).toEqual({
			id: 'msg_1',
			timestampSeconds: now,
		});
	});

	it('accepts the secret with a whsec_ prefix and raw Buffer bodies', () => {
		expect(
			reasonOf(() =>
				verifyWebhook(`whsec_${secret}`, signed.headers, Buffer.from(body), { nowSeconds: now }),
			),
		).toBe('accepted');
	});

	it('rejects a tampered body', () => {
		expect(
			reasonOf(() =>
				verifyWebhook(secret, signed.headers, body.replace('hello', 'hullo'), { nowSeconds: now }),
			),
		).toBe('bad-signature');
	});

	it('rejects the wrong key', () => {
		expect(
			reasonOf(() =>
				verifyWebhook(randomBytes(32).toString('base64'), signed.headers, body, {
					nowSeconds: now,
				}),
			),
		).toBe('bad-signature');
	});

	it('rejects a signature made for another id', () => {
		const other = signWebhook(secret, body, { id: 'msg_2', timestampSeconds: now });
		expect(
			reasonOf(() =>
				verifyWebhook(
					secret,
					{ ...signed.headers, 'webhook-signature': other.headers['webhook-signature'] },
					body,
					{ nowSeconds: now },
				),
			),
		).toBe('bad-signature');
	});

	it('accepts within 5 minutes either way and rejects beyond', () => {
		expect(
			reasonOf(() => verifyWebhook(secret, signed.headers, body, { nowSeconds: now + 300 })),
		).toBe('accepted');
		expect(
			reasonOf(() => verifyWebhook(secret, signed.headers, body, { nowSeconds: now - 300 })),
		).toBe('accepted');
		expect(
			reasonOf(() => verifyWebhook(secret, signed.headers, body, { nowSeconds: now + 301 })),
		).toBe('stale');
		expect(
			reasonOf(() => verifyWebhook(secret, signed.headers, body, { nowSeconds: now - 301 })),
		).toBe('future');
	});

	it('accepts when any of several v1 signatures matches (key rotation)', () => {
		const rotated = `v1,${randomBytes(32).toString('base64')} v2,abc ${signed.headers['webhook-signature']}`;
		expect(
			reasonOf(() =>
				verifyWebhook(secret, { ...signed.headers, 'webhook-signature': rotated }, body, {
					nowSeconds: now,
				}),
			),
		).toBe('accepted');
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
		const upper = {
			'Webhook-Id': ['msg_1'],
			'WEBHOOK-TIMESTAMP': String(now),
			'Webhook-Signature': signed.headers['webhook-signature'],
		};
		expect(reasonOf(() => verifyWebhook(secret, upper, body, { nowSeconds: now }))).toBe(
			'accepted',
		);
	});

	it('never puts the secret in its messages', () => {
		// The rejection must happen, or there is no message to check.
		let message: string | undefined;
		try {
			verifyWebhook(secret, signed.headers, 'x', { nowSeconds: now });
		} catch (error) {
			expect(error).toBeInstanceOf(WebhookVerificationError);
			message = String(error);
		}
		expect(message).toContain('signature does not match');
		expect(message).not.toContain(secret);
	});

	it('rejects a secret that is not base64', () => {
		expect(
			reasonOf(() => verifyWebhook('not base64!', signed.headers, body, { nowSeconds: now })),
		).toBe('bad-secret');
	});
});

describe('webhook payloads', () => {
	it('parses the job out of a delivery', () => {
		expect(parseJobWebhook(body).data.output).toEqual({ text: 'hello' });
	});

	it('rejects a body that is not JSON', () => {
		expect(reasonOf(() => parseJobWebhook('{oops'))).toBe('bad-payload');
	});
});

describe('WebhookVerifier: one verifier with secret rotation', () => {
	const OLD = Buffer.from('the organization secret before rotation').toString('base64');
	const NEW = Buffer.from('the organization secret after rotation').toString('base64');
	const body = '{"type":"inference_endpoint.job.succeeded"}';

	function setup(options: { start?: string; current: string; minRefreshIntervalMs?: number }) {
		let now = 1_700_000_000_000;
		let current = options.current;
		let reads = 0;
		const verifier = new WebhookVerifier({
			secret: options.start,
			readSecret: async () => {
				reads++;
				return current;
			},
			clock: { now: () => now },
			minRefreshIntervalMs: options.minRefreshIntervalMs,
		});
		const signed = (secret: string) =>
			signWebhook(secret, body, { timestampSeconds: now / 1000 }).headers;
		return {
			verifier,
			signed,
			reads: () => reads,
			rotate: (secret: string) => (current = secret),
			advance: (ms: number) => (now += ms),
		};
	}

	it('reads the secret on first use, then keeps it', async () => {
		const s = setup({ current: OLD });
		await expect(s.verifier.verify(s.signed(OLD), body)).resolves.toMatchObject({
			id: expect.any(String),
		});
		await s.verifier.verify(s.signed(OLD), body);
		expect(s.reads()).toBe(1);
	});

	it('accepts deliveries signed with a rotated secret: one re-read on the first mismatch', async () => {
		const s = setup({ start: OLD, current: NEW });
		await expect(s.verifier.verify(s.signed(NEW), body)).resolves.toMatchObject({
			id: expect.any(String),
		});
		expect(s.reads()).toBe(1);
		await s.verifier.verify(s.signed(NEW), body);
		expect(s.reads()).toBe(1);
	});

	it('re-reads at most once per interval however many forgeries arrive, and refuses them', async () => {
		const s = setup({ start: OLD, current: OLD, minRefreshIntervalMs: 60_000 });
		const forged = s.signed(Buffer.from('a guess').toString('base64'));
		const attempts = await Promise.allSettled(
			Array.from({ length: 20 }, () => s.verifier.verify(forged, body)),
		);
		expect(
			attempts.every(
				(attempt) =>
					attempt.status === 'rejected' && attempt.reason instanceof WebhookVerificationError,
			),
		).toBe(true);
		expect(s.reads()).toBe(1);
		await expect(s.verifier.verify(forged, body)).rejects.toThrow('does not match');
		expect(s.reads()).toBe(1);
		s.advance(60_000);
		s.rotate(NEW);
		await expect(s.verifier.verify(s.signed(NEW), body)).resolves.toBeDefined();
		expect(s.reads()).toBe(2);
	});

	it('does not re-read for a stale or malformed delivery', async () => {
		const s = setup({ start: OLD, current: NEW });
		const stale = signWebhook(NEW, body, { timestampSeconds: 1_700_000_000 - 3600 }).headers;
		await expect(s.verifier.verify(stale, body)).rejects.toMatchObject({ reason: 'stale' });
		await expect(s.verifier.verify({}, body)).rejects.toMatchObject({ reason: 'missing-headers' });
		expect(s.reads()).toBe(0);
	});

	it('with a pasted secret and nothing to read from, refuses what that secret does not sign', async () => {
		const verifier = new WebhookVerifier({ secret: OLD, clock: { now: () => 1_700_000_000_000 } });
		await expect(
			verifier.verify(signWebhook(NEW, body, { timestampSeconds: 1_700_000_000 }).headers, body),
		).rejects.toMatchObject({ reason: 'bad-signature' });
	});
});
