import { request } from 'undici';
import { inferenceEndpointPageSchema, jobPageSchema, jobSchema } from '../../shared/schemas';
import type { FaultOptions, RunningEmulator } from '../../emulator';
import { api, call, emulatorFor, expectProblem, ManualClock, orgPath, settle } from './helpers';
import { eventually } from '../support/eventually';

let emulator: RunningEmulator;
afterEach(() => emulator.close());

async function faulty(faults: FaultOptions, clock?: ManualClock) {
	emulator = await emulatorFor({ faults, ...(clock ? { clock } : {}) });
	return emulator;
}

const listPath = () => orgPath(emulator, '/inference-endpoints');
const jobsPath = () => orgPath(emulator, '/inference-endpoints/echo/jobs');

async function jobCount(): Promise<number> {
	return jobPageSchema.parse((await api(emulator, 'GET', jobsPath())).json()).total_size;
}

describe('request faults on the management API', () => {
	it('errorRate: a 503 problem, and nothing is created', async () => {
		await faulty({ errorRate: 1 });
		expectProblem(await api(emulator, 'POST', jobsPath(), { body: { input: 1 } }), 503);
		expectProblem(await api(emulator, 'GET', listPath()), 503);
		expect(emulator.requests.map((r) => r.fault)).toEqual(['error', 'error']);
		emulator.setFaults({ errorRate: 0 });
		expect(await jobCount()).toBe(0);
	});

	it('rateLimitRate: a 429 problem with Retry-After: 1', async () => {
		await faulty({ rateLimitRate: 1 });
		const reply = await api(emulator, 'GET', listPath());
		expectProblem(reply, 429);
		expect(reply.headers['retry-after']).toBe('1');
	});

	it('htmlErrorRate: a 502 with an HTML page, not JSON', async () => {
		await faulty({ htmlErrorRate: 1 });
		const reply = await api(emulator, 'GET', listPath());
		expect(reply.status).toBe(502);
		expect(reply.headers['content-type']).toMatch(/^text\/html/);
		expect(reply.text).toMatch(/^<!DOCTYPE html>/);
		expect(() => reply.json()).toThrow();
	});

	it('resetRate: the connection dies mid-reply, but a create has still created the job', async () => {
		await faulty({ resetRate: 1 });
		await expect(api(emulator, 'POST', jobsPath(), { body: { input: 'reset' } })).rejects.toThrow();
		await expect(api(emulator, 'GET', listPath())).rejects.toThrow();
		expect(emulator.requests.map((r) => [r.method, r.status, r.fault])).toEqual([
			['POST', 201, 'reset'],
			['GET', 200, 'reset'],
		]);
		emulator.setFaults({ resetRate: 0 });
		expect(await jobCount()).toBe(1);
	});

	it('resetRate: an empty reply (cancel) is cut before the status line', async () => {
		await faulty({});
		const job = jobSchema.parse(
			(await api(emulator, 'POST', jobsPath(), { body: { input: 1 } })).json(),
		);
		emulator.setFaults({ resetRate: 1 });
		await expect(api(emulator, 'DELETE', `${jobsPath()}/${job.id}`)).rejects.toThrow();
		emulator.setFaults({ resetRate: 0 });
		expect(
			jobSchema.parse((await api(emulator, 'GET', `${jobsPath()}/${job.id}`)).json()).status,
		).toBe('cancelled');
	});

	it('malformedRate: a truncated JSON body with the success status; the job exists', async () => {
		await faulty({ malformedRate: 1 });
		const reply = await api(emulator, 'POST', jobsPath(), { body: { input: 'malformed' } });
		expect(reply.status).toBe(201);
		expect(reply.headers['content-type']).toBe('application/json');
		expect(() => reply.json()).toThrow();
		expect(reply.text.startsWith('{"id":"')).toBe(true);
		// Errors are not made malformed: only successful JSON replies are.
		expectProblem(await api(emulator, 'GET', orgPath(emulator, '/inference-endpoints/nope')), 404);
		emulator.setFaults({ malformedRate: 0 });
		expect(await jobCount()).toBe(1);
	});

	it('latencyMs: the reply waits for the configured time on the emulator clock', async () => {
		const clock = new ManualClock();
		await faulty({ latencyMs: 2000 }, clock);
		let answered = false;
		const pending = api(emulator, 'GET', listPath()).then((reply) => {
			answered = true;
			return reply;
		});
		// The request has reached the emulator once its latency timer is waiting on the clock.
		await eventually('the latency timer', () => clock.pendingTimers === 1);
		await clock.advance(1999);
		expect(answered).toBe(false);
		await clock.advance(1);
		expect((await pending).status).toBe(200);
	});

	it('leaves the workloads alone unless they are listed in surfaces', async () => {
		await faulty({ errorRate: 1 });
		expect((await call(`${emulator.imageUrl}/health`, 'GET', null)).status).toBe(200);
		expect((await call(`${emulator.chatUrl}/health`, 'GET', null)).status).toBe(200);
		emulator.setFaults({ surfaces: ['image', 'chat'] });
		expectProblem(await call(`${emulator.imageUrl}/health`, 'GET', null), 503);
		expectProblem(await call(`${emulator.chatUrl}/health`, 'GET', null), 503);
		expect((await api(emulator, 'GET', listPath())).status).toBe(200);
	});

	it('is deterministic under a seed and differs across seeds', async () => {
		const statuses = async (seed: number) => {
			const instance = await emulatorFor({ faults: { seed, errorRate: 0.5 } });
			try {
				const result: number[] = [];
				for (let i = 0; i < 24; i++)
					result.push(
						(await api(instance, 'GET', orgPath(instance, '/inference-endpoints'))).status,
					);
				return result;
			} finally {
				await instance.close();
			}
		};
		emulator = await emulatorFor();
		const first = await statuses(11);
		expect(first).toContain(200);
		expect(first).toContain(503);
		expect(await statuses(11)).toEqual(first);
		expect(await statuses(12)).not.toEqual(first);
	});

	it('restarts the sequence when setFaults is given a seed', async () => {
		await faulty({ seed: 3, errorRate: 0.5 });
		const run = async () => {
			const result: number[] = [];
			for (let i = 0; i < 12; i++) result.push((await api(emulator, 'GET', listPath())).status);
			return result;
		};
		const first = await run();
		emulator.setFaults({ seed: 3 });
		expect(await run()).toEqual(first);
	});

	it('costs nothing when off: every reply parses', async () => {
		await faulty({});
		const replies = await Promise.all(
			Array.from({ length: 50 }, () => api(emulator, 'GET', `${listPath()}?page_size=3`)),
		);
		for (const reply of replies) inferenceEndpointPageSchema.parse(reply.json());
		expect(emulator.requests.every((r) => r.fault === undefined)).toBe(true);
	});
});

describe('refused requests', () => {
	it('leave the keep-alive connection usable when refused before their body was read', async () => {
		await faulty({});
		for (let i = 0; i < 5; i++) {
			const refused = await request(`${emulator.baseUrl}${jobsPath()}`, {
				method: 'POST',
				body: JSON.stringify({ input: i }),
				headers: { 'content-type': 'application/json' },
			});
			expect(refused.statusCode).toBe(401);
			await refused.body.dump();
			const fine = await request(`${emulator.baseUrl}${listPath()}`, {
				headers: { 'service-api-key': emulator.apiKey },
			});
			expect(fine.statusCode).toBe(200);
			await fine.body.dump();
		}
		await settle();
	});
});

describe('setFaults', () => {
	it('refuses nonsense with a message naming the setting', async () => {
		await faulty({});
		expect(() => emulator.setFaults({ errorRate: -1 })).toThrow(/errorRate must be 0-1/);
		expect(emulator.faults.errorRate).toBe(0);
	});
});
