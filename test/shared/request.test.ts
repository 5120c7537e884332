import { randomUUID } from 'node:crypto';
import type { RunningEmulator } from '../../emulator';
import {
	AuthenticationError,
	BadRequestError,
	NetworkError,
	NotFoundError,
	PermissionError,
	RateLimitError,
	ResponseFormatError,
	ServerError,
	TimeoutError,
} from '../../shared/errors';
import { ManagementClient, REQUEST_ID_METADATA_KEY, WorkloadClient } from '../../shared/client';
import { sharedRateLimiter } from '../../shared/rate-limiter';
import { AmbiguousOutcomeError, replyChecks, RequestExecutor } from '../../shared/request';
import type { UndiciTransport } from '../../shared/runtime/undici-transport';
import { jobSchema, type Job } from '../../shared/schemas';
import { emulatorClient, useEmulator } from '../support/emulator';
import { FakeClock } from '../support/fake-clock';
import { jobFixture } from '../support/fixtures';

const API_KEY = 'sk-test-secret-123456';
const JOB_PATH = '/api/public/organizations/acme/inference-endpoints/echo/jobs';

/** A job made the way any caller makes one, outside the client under test; the logs start after it. */
async function existingJob(emulator: RunningEmulator, transport: UndiciTransport): Promise<Job> {
	const job = await emulatorClient(emulator, transport, new FakeClock()).jobs.create('echo', {
		input: 'existing',
	});
	emulator.resetLogs();
	return job;
}

describe('management client over loopback HTTP', () => {
	// Jobs stay pending: nothing in these tests waits for one.
	const setup = useEmulator({ apiKey: API_KEY, jobDurationMs: 3_600_000 });
	let emulator: RunningEmulator;
	let clock: FakeClock;
	let client: ManagementClient;

	beforeEach(() => {
		emulator = setup.emulator;
		clock = new FakeClock();
		client = emulatorClient(emulator, setup.transport, clock);
	});

	const paths = () => emulator.requests.map((r) => `${r.method} ${r.path}`);

	it('sends the API key header and parses the job', async () => {
		const job = await existingJob(emulator, setup.transport);
		await expect(client.jobs.get('echo', job.id)).resolves.toMatchObject({
			id: job.id,
			status: 'pending',
		});
		// The emulator answers 200 to this key only (401 without it; see the 401 case below).
		expect(emulator.requests).toEqual([
			expect.objectContaining({ method: 'GET', path: `${JOB_PATH}/${job.id}`, status: 200 }),
		]);
	});

	const WRONG_KEY = 'sk-wrong-secret-987654';
	const executor = (baseUrl: string) =>
		new RequestExecutor({
			baseUrl,
			transport: setup.transport,
			clock,
			apiKey: API_KEY,
			timeoutMs: 30_000,
			serviceName: 'GPU Cloud',
		});
	/** Each status as the emulator gives it for a real mistake, the request the client would send. */
	const mistakes: Array<
		[
			number,
			new (...args: never[]) => Error,
			{ title?: string; detail: string },
			() => Promise<unknown>,
		]
	> = [
		[
			401,
			AuthenticationError,
			{
				title: 'Unauthorized',
				detail: 'The Service-Api-Key header does not hold a valid API key.',
			},
			() =>
				emulatorClient(emulator, setup.transport, clock, { apiKey: WRONG_KEY }).jobs.get(
					'echo',
					randomUUID(),
				),
		],
		[
			403,
			PermissionError,
			{ title: 'Forbidden', detail: 'The API key is not a member of organization "bravo".' },
			() =>
				emulatorClient(emulator, setup.transport, clock, { organization: 'bravo' }).jobs.get(
					'echo',
					randomUUID(),
				),
		],
		[
			404,
			NotFoundError,
			{ title: 'Not Found', detail: 'Inference endpoint "no-such-endpoint" was not found.' },
			() => client.jobs.get('no-such-endpoint', randomUUID()),
		],
		[
			400,
			BadRequestError,
			{ title: 'Bad Request', detail: 'page_size 101 must be between 1 and 100' },
			// The client itself refuses this page size, so the request goes through its executor.
			() =>
				executor(emulator.baseUrl).json(
					{
						method: 'GET',
						path: '/organizations/acme/inference-endpoints',
						query: { page_size: 101 },
						idempotent: true,
					},
					jobSchema,
				),
		],
		[
			409,
			BadRequestError,
			{ title: 'Conflict', detail: 'A queue named "taken" already exists in project "default".' },
			async () => {
				await client.queues.create('default', { name: 'taken' });
				emulator.resetLogs();
				return client.queues.create('default', { name: 'taken' });
			},
		],
		[
			422,
			BadRequestError,
			// A workload's error body: `{error, location}`, no title.
			{ detail: 'input.width 100 must be 256-2048 pixels' },
			() =>
				executor(emulator.imageUrl).json(
					{
						method: 'POST',
						path: '/workflow/txt2img',
						body: { input: { prompt: 'a fox', width: 100 } },
						idempotent: true,
					},
					jobSchema,
				),
		],
	];

	it.each(mistakes)(
		'maps %i to its error class without retrying',
		async (status, errorClass, words, mistake) => {
			const error = await mistake().catch((e: unknown) => e);
			expect(error).toBeInstanceOf(errorClass);
			expect(error).toMatchObject({ status, title: words.title, detail: words.detail });
			expect(String((error as Error).message)).toContain(words.detail);
			expect(String((error as Error).message)).not.toContain(API_KEY);
			expect(String((error as Error).message)).not.toContain(WRONG_KEY);
			expect(emulator.requests.map((r) => r.status)).toEqual([status]);
		},
	);

	it('retries 5xx reads with growing, jittered backoff and then succeeds', async () => {
		const job = await existingJob(emulator, setup.transport);
		emulator.setFaults({ sequence: ['error', 'html-error', 'gateway-timeout'] });
		await expect(client.jobs.get('echo', job.id)).resolves.toMatchObject({ id: job.id });
		expect(emulator.requests.map((r) => r.status)).toEqual([503, 502, 504, 200]);
		expect(clock.sleeps).toEqual([188, 375, 750]);
	});

	it('gives up after the retry budget with the last error', async () => {
		emulator.setFaults({ errorRate: 1 });
		const error = await client.jobs.get('echo', randomUUID()).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(ServerError);
		expect(emulator.requests).toHaveLength(6);
	});

	it('honours Retry-After on 429, even for a create', async () => {
		emulator.setFaults({ sequence: ['rate-limit'], retryAfterSeconds: 7 });
		const job = await client.jobs.create('echo', { input: { url: 'https://x.io/a' } });
		expect(emulator.jobsOf('acme').map((made) => made.id)).toEqual([job.id]);
		expect(clock.sleeps).toEqual([7000]);
		expect(paths()).toEqual([`POST ${JOB_PATH}`, `POST ${JOB_PATH}`]);
	});

	it('raises RateLimitError when Retry-After reaches past the time a call may wait for the rate limit', async () => {
		emulator.setFaults({ rateLimitRate: 1, retryAfterSeconds: 3600 });
		await expect(client.jobs.get('echo', randomUUID())).rejects.toBeInstanceOf(RateLimitError);
		expect(emulator.requests).toHaveLength(1);
	});

	it('never fails a call on 429s while their waits fit its rate-limit budget, however many come', async () => {
		emulator.setFaults({
			sequence: Array.from({ length: 12 }, () => 'rate-limit' as const),
			retryAfterSeconds: 30,
		});
		const job = await client.jobs.create('echo', { input: { url: 'https://x.io/a' } });
		expect(emulator.jobsOf('acme').map((made) => made.id)).toEqual([job.id]);
		expect(emulator.requests).toHaveLength(13);
		expect(clock.sleeps).toEqual(Array.from({ length: 12 }, () => 30_000));
	});

	it('stops waiting out 429s once the next wait would pass the budget', async () => {
		emulator.setFaults({ rateLimitRate: 1, retryAfterSeconds: 60 });
		await expect(client.jobs.get('echo', randomUUID())).rejects.toBeInstanceOf(RateLimitError);
		// Ten minutes of budget: ten waits of 60 s, eleven requests.
		expect(emulator.requests).toHaveLength(11);
	});

	it('reads an HTML error page as a readable error', async () => {
		emulator.setFaults({ htmlErrorRate: 1 });
		const error = await client.jobs.get('echo', randomUUID()).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(ServerError);
		expect((error as Error).message).toContain('HTTP 502 Bad Gateway (an HTML error page)');
	});

	it('retries a read whose reply is not valid JSON', async () => {
		const job = await existingJob(emulator, setup.transport);
		emulator.setFaults({ sequence: ['malformed'] });
		await expect(client.jobs.get('echo', job.id)).resolves.toMatchObject({ id: job.id });
		expect(emulator.requests.map((r) => r.fault ?? 'none')).toEqual(['malformed', 'none']);
	});

	it('gives up with a format error when every reply to a read is garbled', async () => {
		const job = await existingJob(emulator, setup.transport);
		emulator.setFaults({ malformedRate: 1 });
		const error = await client.jobs.get('echo', job.id).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(ResponseFormatError);
		expect((error as Error).message).toContain('is not valid JSON (HTTP 200)');
		expect(emulator.requests).toHaveLength(6);
	});

	it('does not repeat a create that failed with 5xx, but finds the job it made by its request id', async () => {
		// The edge answered 502 after the service had made the job.
		emulator.setFaults({ sequence: ['html-error'], lateArrivalMs: 0 });
		const job = await client.jobs.create('echo', { input: { url: 'https://x.io/a' } });
		expect(emulator.jobsOf('acme').map((made) => made.id)).toEqual([job.id]);
		expect(emulator.requests.map((r) => [r.method, r.status, r.query])).toEqual([
			['POST', 502, undefined],
			['GET', 200, 'page=1&page_size=100'],
		]);
		expect(job.metadata).toEqual({ [REQUEST_ID_METADATA_KEY]: expect.any(String) });
	});

	it('reports an unknown outcome when there is no room to tag the job', async () => {
		const metadata = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i]));
		emulator.setFaults({ sequence: ['error'] });
		const error = await client.jobs.create('echo', { input: 1, metadata }).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(AmbiguousOutcomeError);
		expect((error as Error).message).toContain('unknown whether the request took effect');
		expect(emulator.requests).toHaveLength(1);
	});

	it('retries a create whose connection was refused (it cannot have arrived)', async () => {
		const refused = new ManagementClient({
			baseUrl: 'http://127.0.0.1:1/api/public',
			organization: 'acme',
			transport: setup.transport,
			clock,
			rateLimit: false,
			retry: { maxRetries: 2 },
		});
		const error = await refused.jobs.create('echo', { input: 1 }).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(NetworkError);
		expect(clock.sleeps).toHaveLength(2);
	});

	it('times out a request that gets no answer', async () => {
		emulator.setFaults({ hangRate: 1 });
		const mute = emulatorClient(emulator, setup.transport, clock, {
			timeoutMs: 100,
			retry: { maxRetries: 0 },
		});
		await expect(mute.jobs.get('echo', randomUUID())).rejects.toBeInstanceOf(TimeoutError);
		expect(emulator.requests).toEqual([expect.objectContaining({ status: 0, fault: 'hang' })]);
	});

	it('rejects bad input before sending anything', async () => {
		await expect(client.jobs.get('Transcribe', randomUUID())).rejects.toThrow(
			'endpoint name "Transcribe" must be 2-63 lower-case',
		);
		await expect(client.jobs.get('transcribe', 'nope')).rejects.toThrow(
			'job id "nope" must be a job id',
		);
		await expect(client.endpoints.list({ page_size: 101 })).rejects.toThrow(
			'page_size 101 must be between 1 and 100',
		);
		await expect(
			client.queues.create('default', { name: 'qq', description: 'x'.repeat(501) }),
		).rejects.toThrow('queue description');
		expect(
			() =>
				new ManagementClient({
					baseUrl: emulator.baseUrl,
					organization: 'A',
					transport: setup.transport,
					clock,
				}),
		).toThrow('organization name "A"');
		expect(emulator.requests).toHaveLength(0);
	});
});

describe('reading replies', () => {
	// The emulator answers by the published schema, as real-behaviour.md says the service does, so a
	// reply lacking a field is checked on its text: the same check every reply goes through.
	it('names the missing field when a reply lacks one', () => {
		const { status: _status, ...incomplete } = jobFixture();
		const checks = replyChecks('GPU Cloud', { method: 'GET', path: `${JOB_PATH}/x` }, 200);
		let error: unknown;
		try {
			checks.parse(jobSchema, JSON.stringify(incomplete));
		} catch (caught) {
			error = caught;
		}
		expect(error).toBeInstanceOf(ResponseFormatError);
		expect((error as Error).message).toContain('status is required');
	});
});

describe('rate limiting', () => {
	const setup = useEmulator();

	/** The loopback transport, noting the virtual time each request leaves. */
	function timedTransport() {
		const clock = new FakeClock();
		const sentAt: number[] = [];
		const timed = {
			send: (request: Parameters<UndiciTransport['send']>[0]) => {
				sentAt.push(clock.now());
				return setup.transport.send(request);
			},
		};
		return { clock, sentAt, timed };
	}

	it('never lets more than the limit through in any minute, shared by clients of the same key', async () => {
		const { clock, sentAt, timed } = timedTransport();
		const make = () =>
			emulatorClient(setup.emulator, timed, clock, {
				rateLimit: { requestsPerMinute: 5, key: 'test-key-shared' },
			});
		const [a, b] = [make(), make()];
		await Promise.all(
			Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).endpoints.list({ page_size: 1 })),
		);
		expect(sentAt).toHaveLength(12);
		expect(setup.emulator.requests).toHaveLength(12);
		for (const t of sentAt)
			expect(sentAt.filter((u) => u > t - 60_000 && u <= t).length).toBeLessThanOrEqual(5);
		expect(sentAt[11] - sentAt[0]).toBeGreaterThanOrEqual(120_000);
	});

	it('after a 429 to one client, every client of the key waits out Retry-After and sends at a lower, even pace', async () => {
		const { clock, sentAt, timed } = timedTransport();
		const job = await existingJob(setup.emulator, setup.transport);
		setup.emulator.setFaults({ sequence: ['rate-limit'], retryAfterSeconds: 7 });
		const key = 'test-key-throttled';
		const make = () =>
			emulatorClient(setup.emulator, timed, clock, {
				rateLimit: { requestsPerMinute: 240, key },
			});
		const [a, b] = [make(), make()];
		await a.jobs.get('echo', job.id);
		expect(setup.emulator.requests.map((r) => r.status)).toEqual([429, 200]);
		expect(sentAt[1] - sentAt[0]).toBeGreaterThanOrEqual(7_000);
		const limiter = sharedRateLimiter(key, 240, clock);
		expect(limiter.requestsPerMinute).toBeLessThan(240);
		await Promise.all([
			b.jobs.get('echo', job.id),
			b.jobs.get('echo', job.id),
			a.jobs.get('echo', job.id),
		]);
		const gaps = sentAt
			.slice(1)
			.map((time, n) => time - sentAt[n])
			.slice(1);
		expect(gaps).toHaveLength(3);
		// The rate climbs back a little with every answer: the last pace is the quickest.
		for (const gap of gaps)
			expect(gap).toBeGreaterThanOrEqual(Math.floor(60_000 / limiter.requestsPerMinute));
	});
});

describe('workload client errors', () => {
	const setup = useEmulator();

	it('reports the gateway timeout with advice to use webhooks', async () => {
		setup.emulator.setFaults({ surfaces: ['image'], sequence: ['gateway-timeout'] });
		const client = new WorkloadClient({
			serviceUrl: setup.emulator.imageUrl,
			transport: setup.transport,
			clock: new FakeClock(),
			retry: { maxRetries: 0 },
		});
		const error = await client.images
			.generate({ kind: 'text', workflow: 'txt2img', request: { input: { prompt: 'a fox' } } })
			.catch((e: unknown) => e);
		expect(error).toBeInstanceOf(TimeoutError);
		expect((error as Error).message).toContain('use webhook delivery');
	});

	it('shows the workload `error` text of a 400', async () => {
		const client = new WorkloadClient({
			serviceUrl: setup.emulator.imageUrl,
			transport: setup.transport,
			clock: new FakeClock(),
		});
		await expect(
			client.images.generate({
				kind: 'graph',
				request: {
					prompt: {
						'5': {
							class_type: 'EmptyLatentImage',
							inputs: { width: 100, height: 512, batch_size: 1 },
						},
						'9': { class_type: 'SaveImage', inputs: { filename_prefix: 'x', images: ['5', 0] } },
					},
				},
			}),
		).rejects.toThrow('node "5" input width 100 must be a whole number of pixels from 256 to 2048');
		expect(setup.emulator.requests.map((r) => r.status)).toEqual([400]);
	});
});
