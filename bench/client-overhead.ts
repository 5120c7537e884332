/**
 * Scenario 1: what our client costs per request. A separate process serves a fixed, realistic job
 * body, so the client side (rate limiter off, response validation on) is what is measured: ours
 * against a raw undici Pool and against Node's global fetch doing the same requests.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { Pool } from 'undici';
import { ManagementClient } from '../shared/client';
import { systemClock, UndiciTransport } from '../shared/runtime';
import { jobSchema } from '../shared/schemas';
import { throughput, type Scenario } from './lib';

const JOB_ID = '3f2a9c1e-8b4d-4e6f-9a0b-1c2d3e4f5a6b';
const SERVER_SOURCE = `
const http = require('node:http');
const time = '2026-01-01T00:00:00.000Z';
const body = JSON.stringify({
  id: '${JOB_ID}', inference_endpoint_name: 'transcribe', organization_name: 'acme',
  input: { url: 'https://files.example/interview.mp3?signature=abc', language_code: 'en', summarize: 100 },
  status: 'succeeded',
  events: [{ action: 'created', time }, { action: 'started', time }, { action: 'succeeded', time }],
  create_time: time, update_time: time, metadata: { team: 'research', run: 42 },
  output: { text: 'Hello and welcome to the show. Today we talk about GPUs.', duration_in_seconds: 12.5, duration: 0.0035, processing_time: 1.2 },
});
const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.send(server.address().port));
`;

async function startServer(): Promise<{ url: string; child: ChildProcess }> {
	const child = fork('-e', [SERVER_SOURCE], {
		execArgv: ['-e', SERVER_SOURCE],
		stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
	});
	const port = await new Promise<number>((resolve, reject) => {
		child.once('message', (message) => resolve(Number(message)));
		child.once('error', reject);
	});
	return { url: `http://127.0.0.1:${port}`, child };
}

export const clientOverhead: Scenario = async ({ smoke, runs }) => {
	const total = smoke ? 300 : 10_000;
	const concurrency = 32;
	const { url, child } = await startServer();
	const path = `/api/public/organizations/acme/inference-endpoints/transcribe/jobs/${JOB_ID}`;
	const transport = new UndiciTransport({ connections: concurrency });
	const client = new ManagementClient({
		baseUrl: `${url}/api/public`,
		organization: 'acme',
		apiKey: 'bench-key',
		transport,
		clock: systemClock,
		rateLimit: false,
	});
	const pool = new Pool(url, { connections: concurrency });
	const samples = { ours: [] as number[], undici: [] as number[], fetch: [] as number[] };
	try {
		for (let run = 0; run < runs; run++) {
			samples.undici.push(
				await throughput(total, concurrency, async () => {
					const response = await pool.request({
						method: 'GET',
						path,
						headers: { 'service-api-key': 'bench-key' },
					});
					jobSchema.parse(await response.body.json());
				}),
			);
			samples.ours.push(
				await throughput(total, concurrency, async () => {
					await client.jobs.get('transcribe', JOB_ID);
				}),
			);
			samples.fetch.push(
				await throughput(total, concurrency, async () => {
					const response = await fetch(url + path, { headers: { 'service-api-key': 'bench-key' } });
					jobSchema.parse(await response.json());
				}),
			);
		}
	} finally {
		await pool.close();
		await transport.close();
		child.kill();
	}
	return {
		title: '1. Client overhead',
		description: `${total.toLocaleString('en-US')} \`GET job\` calls at concurrency ${concurrency} against a fixed-body server in its own process; rate limiting off, response validation on in all three (the baselines parse with the same zod schema, so only the client machinery differs).`,
		figures: [
			{ name: 'shared client', unit: 'requests/s', samples: samples.ours, better: 'higher' },
			{ name: 'raw undici Pool', unit: 'requests/s', samples: samples.undici, better: 'higher' },
			{ name: 'global fetch', unit: 'requests/s', samples: samples.fetch, better: 'higher' },
		],
		comparisons: [
			{ subject: 'shared client', baseline: 'raw undici Pool', target: { op: '>=', value: 0.8 } },
			{ subject: 'shared client', baseline: 'global fetch', target: { op: '>=', value: 3 } },
		],
		checks: [],
	};
};
