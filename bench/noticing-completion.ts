/**
 * Scenario 3: how soon a finished job is noticed, and what it costs. Webhook mode: the emulator's
 * signed delivery reaches a loopback receiver that verifies it (the path an n8n resume URL or the
 * Slack app's route takes). Polling mode: the shared client's wait schedule. A 2-hour job runs on
 * a clock 1,000 times faster than real time, shared by the emulator and the client.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from '../shared/clock';
import { ManagementClient } from '../shared/client';
import { systemClock, UndiciTransport } from '../shared/runtime';
import type { Job } from '../shared/schemas';
import { parseJobWebhook, verifyWebhook } from '../shared/webhooks';
import { startEmulator } from '../emulator';
import { median, type Scenario } from './lib';

function finishedAt(job: Job): number {
	const event = job.events.find((e) => e.action === 'succeeded');
	if (!event) throw new Error(`job ${job.id} has no succeeded event`);
	return Date.parse(event.time);
}

/** Time that runs `scale` times faster than the wall clock, for long jobs in short runs. */
function acceleratedClock(scale: number): Clock {
	const realStart = Date.now();
	return {
		now: () => realStart + (Date.now() - realStart) * scale,
		sleep: (ms, signal) => delay(ms / scale, undefined, { signal }),
	};
}

async function webhookLatencies(jobs: number, jobMs: number): Promise<number[]> {
	const emulator = await startEmulator({ jobDurationMs: jobMs, rateLimitPerMinute: 0 });
	const received = new Map<string, number>();
	const receiver = createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			const arrived = Date.now();
			const body = Buffer.concat(chunks);
			verifyWebhook(emulator.webhookSecret, req.headers, body, { nowSeconds: arrived / 1000 });
			const payload = parseJobWebhook(body);
			received.set(payload.data.id, arrived - finishedAt(payload.data));
			res.writeHead(204).end();
		});
	});
	await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
	const transport = new UndiciTransport();
	const client = new ManagementClient({
		baseUrl: emulator.baseUrl,
		organization: emulator.organization,
		apiKey: emulator.apiKey,
		transport,
		clock: systemClock,
		rateLimit: false,
	});
	try {
		const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
		await Promise.all(
			Array.from({ length: jobs }, () =>
				client.jobs.create('echo', { input: { n: 1 }, webhook_url: url }),
			),
		);
		const deadline = Date.now() + jobMs + 10_000;
		while (received.size < jobs && Date.now() < deadline) await delay(20);
		return [...received.values()];
	} finally {
		await transport.close();
		receiver.close();
		await emulator.close();
	}
}

async function pollingRun(
	jobs: number,
	jobMs: number,
	clock: Clock,
): Promise<{ latencies: number[]; requestsPerJob: number[] }> {
	const emulator = await startEmulator({ jobDurationMs: jobMs, rateLimitPerMinute: 0, clock });
	const transport = new UndiciTransport();
	const client = new ManagementClient({
		baseUrl: emulator.baseUrl,
		organization: emulator.organization,
		apiKey: emulator.apiKey,
		transport,
		clock,
		rateLimit: false,
	});
	try {
		const results = await Promise.all(
			Array.from({ length: jobs }, async () => {
				const created = await client.jobs.create('echo', { input: { n: 1 } });
				const done = await client.jobs.wait('echo', created.id, { initialDelayMs: 250 });
				return { id: done.id, latency: clock.now() - finishedAt(done) };
			}),
		);
		const gets = (id: string) =>
			emulator.requests.filter((r) => r.method === 'GET' && r.path.includes(id)).length;
		return {
			latencies: results.map((r) => r.latency),
			requestsPerJob: results.map((r) => gets(r.id)),
		};
	} finally {
		await transport.close();
		await emulator.close();
	}
}

export const noticingCompletion: Scenario = async ({ smoke, runs }) => {
	const jobs = smoke ? 3 : 20;
	const jobMs = smoke ? 500 : 3_000;
	const webhook: number[] = [];
	const polling: number[] = [];
	const pollRequests: number[] = [];
	const longRequests: number[] = [];
	const longLatency: number[] = [];
	for (let run = 0; run < runs; run++) {
		webhook.push(median(await webhookLatencies(jobs, jobMs)));
		const poll = await pollingRun(jobs, jobMs, systemClock);
		polling.push(median(poll.latencies));
		pollRequests.push(Math.max(...poll.requestsPerJob));
		const long = await pollingRun(
			smoke ? 1 : 3,
			2 * 3600_000,
			acceleratedClock(smoke ? 20_000 : 1_000),
		);
		longRequests.push(Math.max(...long.requestsPerJob));
		longLatency.push(median(long.latencies) / 1000);
	}
	return {
		title: '3. Noticing completion',
		description: `${jobs} jobs of ${jobMs / 1000} s at once, per mode. Latency is from the job's \`succeeded\` event to the moment our side knows. The 2-hour job runs on a clock ${smoke ? '20,000' : '1,000'}x faster than real time, shared by the emulator and the client.`,
		figures: [
			{ name: 'webhook: p50 notice latency', unit: 'ms', samples: webhook, better: 'lower' },
			{ name: 'polling: p50 notice latency', unit: 'ms', samples: polling, better: 'lower' },
			{
				name: 'polling: GETs per short job (max)',
				unit: 'requests',
				samples: pollRequests,
				better: 'lower',
			},
			{
				name: 'polling: GETs for a 2-hour job (max)',
				unit: 'requests',
				samples: longRequests,
				better: 'lower',
			},
			{
				name: 'polling: 2-hour job notice latency (emulated time)',
				unit: 's',
				samples: longLatency,
				better: 'lower',
			},
		],
		comparisons: [],
		checks: [
			{ label: 'webhook p50 latency', value: median(webhook), unit: 'ms', op: '<=', target: 100 },
			{ label: 'polling p50 latency', value: median(polling), unit: 'ms', op: '<=', target: 1000 },
			{
				label: 'polling GETs per short job',
				value: Math.max(...pollRequests),
				unit: 'requests',
				op: '<=',
				target: 10,
			},
			{
				label: 'polling GETs for a 2-hour job',
				value: Math.max(...longRequests),
				unit: 'requests',
				op: '<=',
				target: 150,
			},
		],
	};
};
