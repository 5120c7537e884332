/**
 * Soak with faults: 1,000 jobs through the shared client against the emulator with every fault
 * switched on (seeded). Every job's final result must be obtained exactly once, no job may be
 * created twice, nothing may go unhandled, and every error that does surface must be typed.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ManagementClient, REQUEST_ID_METADATA_KEY } from '../../shared/client';
import { GpuCloudError } from '../../shared/errors';
import { mapWithConcurrency } from '../../shared/concurrency';
import { systemClock, UndiciTransport } from '../../shared/runtime';
import { parseJobWebhook, verifyWebhook } from '../../shared/webhooks';
import { startEmulator, type RunningEmulator } from '../../emulator';

const JOBS = 1000;
const FAULTS = {
	seed: 7,
	errorRate: 0.1,
	rateLimitRate: 0.05,
	resetRate: 0.02,
	malformedRate: 0.02,
	interruptionRate: 0.02,
	webhookFailureRate: 0.05,
};

describe('soak: 1,000 jobs under faults', () => {
	let emulator: RunningEmulator;
	const transport = new UndiciTransport();
	const unhandled: unknown[] = [];
	const onUnhandled = (reason: unknown) => unhandled.push(reason);

	beforeAll(async () => {
		process.on('unhandledRejection', onUnhandled);
		emulator = await startEmulator({ jobDurationMs: 150, rateLimitPerMinute: 0, faults: FAULTS });
	});
	afterAll(async () => {
		process.off('unhandledRejection', onUnhandled);
		await transport.close();
		await emulator.close();
	});

	it('obtains every result exactly once and creates no duplicate', async () => {
		const webhookResults = new Map<string, number>();
		const seenIds = new Set<string>();
		let duplicateDeliveries = 0;
		const receiver = createServer((req, res) => {
			const chunks: Buffer[] = [];
			req.on('data', (chunk: Buffer) => chunks.push(chunk));
			req.on('end', () => {
				const body = Buffer.concat(chunks);
				const { id } = verifyWebhook(emulator.webhookSecret, req.headers, body, {
					nowSeconds: Date.now() / 1000,
				});
				if (!seenIds.has(id)) {
					seenIds.add(id);
					const job = parseJobWebhook(body).data;
					webhookResults.set(job.id, (webhookResults.get(job.id) ?? 0) + 1);
				} else {
					duplicateDeliveries++;
				}
				res.writeHead(204).end();
			});
		});
		await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
		const webhookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/done`;

		const client = new ManagementClient({
			baseUrl: emulator.baseUrl,
			organization: emulator.organization,
			apiKey: emulator.apiKey,
			transport,
			clock: systemClock,
			rateLimit: false,
			timeoutMs: 5_000,
			retry: { maxRetries: 8, baseDelayMs: 50, maxDelayMs: 1_000 },
		});

		const started = Date.now();
		const outcomes = await mapWithConcurrency(
			Array.from({ length: JOBS }, (_, i) => i),
			50,
			async (i) => {
				const created = await client.jobs.create('echo', {
					input: { item: i },
					metadata: { item: i },
					webhook_url: webhookUrl,
				});
				return client.jobs.wait('echo', created.id, { initialDelayMs: 150, timeoutMs: 120_000 });
			},
		);
		const seconds = (Date.now() - started) / 1000;

		const failures = outcomes.filter((o) => !o.ok);
		for (const failure of failures) {
			expect(failure.ok ? undefined : failure.error).toBeInstanceOf(GpuCloudError);
		}
		const results = outcomes.flatMap((o) => (o.ok ? [o.value] : []));
		const resultIds = new Set(results.map((job) => job.id));

		// Every item's job was created once: the service holds exactly one job per request id.
		const all: Array<{ id: string; metadata?: Record<string, unknown> }> = [];
		for (let page = 1; ; page++) {
			const listed = await client.jobs.list('echo', { page, page_size: 100 });
			all.push(...listed.items);
			if (listed.items.length < 100) break;
		}
		const perRequestId = new Map<unknown, number>();
		for (const job of all)
			perRequestId.set(
				job.metadata?.[REQUEST_ID_METADATA_KEY],
				(perRequestId.get(job.metadata?.[REQUEST_ID_METADATA_KEY]) ?? 0) + 1,
			);
		const duplicateJobs = [...perRequestId.values()].filter((n) => n > 1).length;

		// Deliveries still being retried land (or give up): the emulator says when none is left.
		await emulator.deliveriesSettled();
		receiver.close();

		const faultsSeen = emulator.requests.filter((r) => r.status >= 500 || r.status === 429).length;
		const report = [
			`jobs: ${JOBS}; wall time: ${seconds.toFixed(1)} s; faults: ${JSON.stringify(FAULTS)}`,
			`results by polling: ${resultIds.size} (succeeded ${results.filter((j) => j.status === 'succeeded').length}); errors surfaced: ${failures.length}`,
			`jobs on the service: ${all.length}; duplicate jobs: ${duplicateJobs}`,
			`results by webhook (after de-duplication): ${webhookResults.size}; repeated deliveries dropped: ${duplicateDeliveries}`,
			`requests answered with 5xx or 429 by the emulator: ${faultsSeen} of ${emulator.requests.length}`,
			`unhandled rejections: ${unhandled.length}`,
		];
		// The figures for docs/reliability.md.
		console.info(report.join('\n'));

		expect(failures).toHaveLength(0);
		expect(resultIds.size).toBe(JOBS);
		expect(results.every((job) => job.status === 'succeeded')).toBe(true);
		expect(all).toHaveLength(JOBS);
		expect(duplicateJobs).toBe(0);
		expect(webhookResults.size).toBe(JOBS);
		expect([...webhookResults.values()].every((n) => n === 1)).toBe(true);
		expect(unhandled).toHaveLength(0);
	}, 240_000);
});
