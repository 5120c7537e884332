import { jobSchema, webhookSecretKeySchema } from '../../shared/schemas';
import { parseJobWebhook, verifyWebhook } from '../../shared/webhooks';
import type { RunningEmulator } from '../../emulator';
import { eventually } from '../support/eventually';
import { api, emulatorFor, orgPath, startReceiver, waitFor, type Received } from './helpers';

let emulator: RunningEmulator;
beforeEach(async () => {
	emulator = await emulatorFor({ jobDurationMs: 60 });
});
afterEach(() => emulator.close());

async function createJob(endpoint: string, body: Record<string, unknown>) {
	const reply = await api(
		emulator,
		'POST',
		orgPath(emulator, `/inference-endpoints/${endpoint}/jobs`),
		{ body },
	);
	expect(reply.status).toBe(201);
	return jobSchema.parse(reply.json());
}

function verify(received: Received, secret = emulator.webhookSecret) {
	return verifyWebhook(secret, received.headers, received.body, { nowSeconds: Date.now() / 1000 });
}

describe('job completion webhooks', () => {
	it('POSTs a signed inference_endpoint.job.succeeded delivery with the finished job', async () => {
		const receiver = await startReceiver();
		try {
			const job = await createJob('echo', { input: { hello: 'hook' }, webhook_url: receiver.url });
			await waitFor(() => receiver.received.length === 1, 'the delivery');
			const [delivery] = receiver.received;
			if (!delivery) throw new Error('no delivery');
			expect(delivery.headers['content-type']).toBe('application/json');
			// The secret a receiver would fetch from the API verifies the signature.
			const { secret_key } = webhookSecretKeySchema.parse(
				(await api(emulator, 'GET', orgPath(emulator, '/webhook-secret-key'))).json(),
			);
			const verified = verify(delivery, secret_key);
			expect(verified.id).toBe(delivery.headers['webhook-id']);
			expect(Math.abs(verified.timestampSeconds - Date.now() / 1000)).toBeLessThan(60);
			const payload = parseJobWebhook(delivery.body);
			expect(payload.type).toBe('inference_endpoint.job.succeeded');
			expect(payload.data).toEqual(
				expect.objectContaining({
					id: job.id,
					status: 'succeeded',
					output: { echo: { hello: 'hook' } },
				}),
			);
			expect(payload.timestamp).toBe(payload.data.update_time);
			// As in captured deliveries, events carry their action under `type`; the parser reads both.
			const raw = JSON.parse(delivery.body) as { data: { events: unknown[] } };
			expect(raw.data.events.map((event) => Object.keys(event as object).sort())).toEqual([
				['time', 'type'],
				['time', 'type'],
				['time', 'type'],
			]);
			expect(payload.data.events.map((event) => event.action)).toEqual([
				'created',
				'started',
				'succeeded',
			]);
			await emulator.deliveriesSettled();
			expect(emulator.deliveries).toEqual([
				expect.objectContaining({
					url: receiver.url,
					type: 'inference_endpoint.job.succeeded',
					jobId: job.id,
					attempt: 1,
					status: 200,
					ok: true,
					signed: true,
				}),
			]);
		} finally {
			await receiver.close();
		}
	});

	it('rejects a tampered delivery and one checked with another secret', async () => {
		const receiver = await startReceiver();
		try {
			await createJob('echo', { input: 1, webhook_url: receiver.url });
			await waitFor(() => receiver.received.length === 1, 'the delivery');
			const [delivery] = receiver.received;
			if (!delivery) throw new Error('no delivery');
			expect(() =>
				verify({ ...delivery, body: delivery.body.replace('succeeded', 'failed') }),
			).toThrow(/signature/);
			expect(() =>
				verify(delivery, Buffer.from('another secret entirely').toString('base64')),
			).toThrow(/signature/);
		} finally {
			await receiver.close();
		}
	});

	it('reports failed and cancelled jobs with their own types (note the single l in canceled)', async () => {
		const receiver = await startReceiver();
		try {
			await createJob('sentiment', { input: { no: 'text' }, webhook_url: receiver.url });
			const slow = await createJob(emulator.slowEndpoint, { input: 1, webhook_url: receiver.url });
			expect(
				(
					await api(
						emulator,
						'DELETE',
						orgPath(emulator, `/inference-endpoints/${emulator.slowEndpoint}/jobs/${slow.id}`),
					)
				).status,
			).toBe(202);
			await waitFor(() => receiver.received.length === 2, 'two deliveries');
			const types = receiver.received.map((delivery) => parseJobWebhook(delivery.body).type).sort();
			expect(types).toEqual(['inference_endpoint.job.canceled', 'inference_endpoint.job.failed']);
			for (const delivery of receiver.received) verify(delivery);
		} finally {
			await receiver.close();
		}
	});

	it('uses the deprecated webhook field when webhook_url is absent, and webhook_url when both are set', async () => {
		const [old, current] = [await startReceiver(), await startReceiver()];
		try {
			await createJob('echo', { input: 'old', webhook: old.url });
			await createJob('echo', { input: 'both', webhook: old.url, webhook_url: current.url });
			await waitFor(() => old.received.length + current.received.length === 2, 'two deliveries');
			await emulator.deliveriesSettled();
			expect(old.received.map((d) => parseJobWebhook(d.body).data.input)).toEqual(['old']);
			expect(current.received.map((d) => parseJobWebhook(d.body).data.input)).toEqual(['both']);
		} finally {
			await old.close();
			await current.close();
		}
	});

	it('retries a refused delivery with backoff, keeping the webhook-id, until the receiver takes it', async () => {
		const receiver = await startReceiver((_, index) => (index < 2 ? 500 : 204));
		try {
			const job = await createJob('echo', { input: 1, webhook_url: receiver.url });
			await waitFor(() => receiver.received.length === 3, 'three attempts');
			await emulator.deliveriesSettled();
			expect(emulator.deliveries.map((d) => [d.attempt, d.status, d.ok])).toEqual([
				[1, 500, false],
				[2, 500, false],
				[3, 204, true],
			]);
			expect(new Set(receiver.received.map((d) => d.headers['webhook-id'])).size).toBe(1);
			for (const delivery of receiver.received)
				expect(verify(delivery).id).toBe(emulator.deliveries[0]?.webhookId);
			expect(emulator.deliveries.every((d) => d.jobId === job.id)).toBe(true);
		} finally {
			await receiver.close();
		}
	});

	it('gives up after a bounded number of attempts, and records connection errors', async () => {
		const receiver = await startReceiver(() => 503);
		const gone = await startReceiver();
		await gone.close();
		try {
			await createJob('echo', { input: 1, webhook_url: receiver.url });
			await createJob('echo', { input: 2, webhook_url: gone.url });
			await waitFor(() => emulator.deliveries.length === 8, 'eight attempts');
			await emulator.deliveriesSettled();
			expect(receiver.received).toHaveLength(4);
			const refused = emulator.deliveries.filter((d) => d.url === gone.url);
			expect(refused.map((d) => d.attempt)).toEqual([1, 2, 3, 4]);
			expect(
				refused.every((d) => d.status === undefined && d.error === 'ECONNREFUSED' && !d.ok),
			).toBe(true);
		} finally {
			await receiver.close();
		}
	});

	it('records injected delivery failures without sending, and retries them', async () => {
		emulator.setFaults({ webhookFailureRate: 1 });
		const receiver = await startReceiver();
		try {
			await createJob('echo', { input: 1, webhook_url: receiver.url });
			await waitFor(() => emulator.deliveries.length === 4, 'four attempts');
			await emulator.deliveriesSettled();
			expect(
				emulator.deliveries.every((d) => d.error === 'injected webhook failure' && !d.ok),
			).toBe(true);
			expect(receiver.received).toHaveLength(0);
		} finally {
			await receiver.close();
		}
	});

	it('sends nothing for jobs without a webhook', async () => {
		const job = await createJob('echo', { input: 1 });
		// A delivery starts as the job ends: wait for the end, then for any delivery under way.
		await eventually('the job to succeed', async () => {
			const reply = await api(
				emulator,
				'GET',
				orgPath(emulator, `/inference-endpoints/echo/jobs/${job.id}`),
			);
			return jobSchema.parse(reply.json()).status === 'succeeded';
		});
		await emulator.deliveriesSettled();
		expect(emulator.deliveries).toHaveLength(0);
	});
});
