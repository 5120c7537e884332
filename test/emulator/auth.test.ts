import { randomUUID } from 'node:crypto';
import type { RunningEmulator } from '../../emulator';
import { api, call, emulatorFor, expectProblem, orgPath } from './helpers';

let emulator: RunningEmulator;
beforeAll(async () => {
	emulator = await emulatorFor();
});
afterAll(() => emulator.close());

const JOB = `/inference-endpoints/echo/jobs/${randomUUID()}`;
// Every row has three entries: jest treats a missing last argument as a `done` callback.
const ROUTES: readonly ['GET' | 'POST' | 'DELETE', string, unknown][] = [
	['GET', '/inference-endpoints', undefined],
	['GET', '/inference-endpoints/transcribe', undefined],
	['POST', '/inference-endpoints/echo/jobs', { input: { a: 1 } }],
	['GET', '/inference-endpoints/echo/jobs', undefined],
	['GET', JOB, undefined],
	['DELETE', JOB, undefined],
	['POST', '/projects/default/queues', { name: 'auth-queue' }],
	['GET', '/webhook-secret-key', undefined],
];

describe('management API authentication', () => {
	it.each(ROUTES)(
		'refuses %s %s without Service-Api-Key: 401 problem, nothing done',
		async (method, path, body) => {
			emulator.resetLogs();
			const full = orgPath(emulator, path);
			const problem = expectProblem(
				await api(emulator, method, full, { key: null, body }),
				401,
				`/api/public${full}`,
			);
			expect(problem.detail).toMatch(/Service-Api-Key/);
		},
	);

	it.each(ROUTES)(
		'refuses %s %s with a wrong key: 401 problem that does not repeat the key',
		async (method, path, body) => {
			const reply = await api(emulator, method, orgPath(emulator, path), {
				key: 'wrong-key-123456',
				body,
			});
			expectProblem(reply, 401);
			expect(reply.text).not.toContain('wrong-key-123456');
			expect(reply.text).not.toContain(emulator.apiKey);
		},
	);

	it.each(ROUTES)(
		'refuses %s %s in an organization the key is not a member of: 403 problem',
		async (method, path, body) => {
			const problem = expectProblem(
				await api(emulator, method, `/organizations/other-org${path}`, { body }),
				403,
			);
			expect(problem.detail).toContain('other-org');
		},
	);

	it('creates nothing when the key is missing or wrong', async () => {
		await api(emulator, 'POST', orgPath(emulator, '/inference-endpoints/echo/jobs'), {
			key: null,
			body: { input: 1 },
		});
		await api(emulator, 'POST', orgPath(emulator, '/inference-endpoints/echo/jobs'), {
			key: 'nope',
			body: { input: 1 },
		});
		const jobs = (
			await api(emulator, 'GET', orgPath(emulator, '/inference-endpoints/echo/jobs'))
		).json();
		expect(jobs).toEqual(expect.objectContaining({ items: [], total_size: 0 }));
	});

	it('answers an unknown project with 404 and unknown endpoints with 404 on every job path', async () => {
		expect(
			expectProblem(
				await api(emulator, 'POST', orgPath(emulator, '/projects/nope/queues'), {
					body: { name: 'q1' },
				}),
				404,
			).detail,
		).toContain('nope');
		expectProblem(
			await api(emulator, 'POST', orgPath(emulator, '/inference-endpoints/ghost/jobs'), {
				body: { input: {} },
			}),
			404,
		);
		expectProblem(
			await api(emulator, 'GET', orgPath(emulator, '/inference-endpoints/ghost/jobs')),
			404,
		);
		expectProblem(
			await api(
				emulator,
				'GET',
				orgPath(emulator, `/inference-endpoints/ghost/jobs/${randomUUID()}`),
			),
			404,
		);
		expectProblem(
			await api(
				emulator,
				'DELETE',
				orgPath(emulator, `/inference-endpoints/ghost/jobs/${randomUUID()}`),
			),
			404,
		);
	});
});

describe('workload gateway authentication', () => {
	it('needs no key when gateway authentication is off', async () => {
		expect((await call(`${emulator.imageUrl}/health`, 'GET', null)).status).toBe(200);
		expect((await call(`${emulator.chatUrl}/health`, 'GET', null)).status).toBe(200);
	});

	it('requires the key on every workload path when it is on', async () => {
		const guarded = await emulatorFor({ workloadAuth: true });
		try {
			for (const url of [
				`${guarded.imageUrl}/health`,
				`${guarded.imageUrl}/ready`,
				`${guarded.chatUrl}/health`,
				`${guarded.chatUrl}/v1/models`,
			]) {
				expectProblem(await call(url, 'GET', null), 401);
				expectProblem(await call(url, 'GET', 'wrong'), 401);
				expect((await call(url, 'GET', guarded.apiKey)).status).toBe(200);
			}
			const chat = await call(`${guarded.chatUrl}/v1/chat/completions`, 'POST', null, {
				body: { messages: [{ role: 'user', content: 'hi' }] },
			});
			expectProblem(chat, 401);
		} finally {
			await guarded.close();
		}
	});
});
