import { createServer as createNetServer } from 'node:net';
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
import { AmbiguousOutcomeError } from '../../shared/request';
import type { UndiciTransport } from '../../shared/runtime/undici-transport';
import { FakeClock } from '../support/fake-clock';
import { jobFixture } from '../support/fixtures';
import {
	jsonReply,
	problem,
	scriptedManagementClient,
	useScriptedServer,
} from '../support/scripted-server';

const API_KEY = 'sk-test-secret-123456';
const JOB_PATH = '/api/public/organizations/acme/inference-endpoints/transcribe/jobs';

describe('management client over loopback HTTP', () => {
	const { server, transport } = useScriptedServer();
	let clock: FakeClock;
	let client: ManagementClient;

	beforeEach(() => {
		server.reset();
		clock = new FakeClock();
		client = scriptedManagementClient(server, transport, clock, { apiKey: API_KEY });
	});

	it('sends the API key header and parses the job', async () => {
		const job = jobFixture();
		server.script(jsonReply(200, job));
		await expect(client.jobs.get('transcribe', job.id)).resolves.toMatchObject({
			id: job.id,
			status: 'pending',
		});
		expect(server.received[0]).toMatchObject({ method: 'GET', url: `${JOB_PATH}/${job.id}` });
		expect(server.received[0].headers['service-api-key']).toBe(API_KEY);
	});

	it.each([
		[401, AuthenticationError],
		[403, PermissionError],
		[404, NotFoundError],
		[400, BadRequestError],
		[409, BadRequestError],
		[422, BadRequestError],
	])('maps %i to its error class without retrying', async (status, errorClass) => {
		server.script(problem(status, 'Some Title', 'What went wrong, exactly.'));
		const error = await client.jobs.get('transcribe', jobFixture().id).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(errorClass);
		expect(error).toMatchObject({
			status,
			title: 'Some Title',
			detail: 'What went wrong, exactly.',
		});
		expect(String((error as Error).message)).toContain('What went wrong, exactly.');
		expect(String((error as Error).message)).not.toContain(API_KEY);
		expect(server.received).toHaveLength(1);
	});

	it('retries 5xx reads with growing, jittered backoff and then succeeds', async () => {
		const job = jobFixture();
		server.script(
			problem(500, 'Internal'),
			problem(503, 'Unavailable'),
			problem(502, 'Bad gateway'),
			jsonReply(200, job),
		);
		await expect(client.jobs.get('transcribe', job.id)).resolves.toMatchObject({ id: job.id });
		expect(server.received).toHaveLength(4);
		expect(clock.sleeps).toEqual([188, 375, 750]);
	});

	it('gives up after the retry budget with the last error', async () => {
		server.always(problem(503, 'Unavailable', 'Try later'));
		const error = await client.jobs.get('transcribe', jobFixture().id).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(ServerError);
		expect(server.received).toHaveLength(6);
	});

	it('honours Retry-After on 429, even for a create', async () => {
		const job = jobFixture();
		server.script(
			problem(429, 'Too Many Requests', undefined, { 'retry-after': '7' }),
			jsonReply(201, job),
		);
		await expect(
			client.jobs.create('transcribe', { input: { url: 'https://x.io/a' } }),
		).resolves.toMatchObject({ id: job.id });
		expect(clock.sleeps).toEqual([7000]);
		expect(server.received).toHaveLength(2);
	});

	it('raises RateLimitError when Retry-After reaches past the time a call may wait for the rate limit', async () => {
		server.script(problem(429, 'Too Many Requests', undefined, { 'retry-after': '3600' }));
		await expect(client.jobs.get('transcribe', jobFixture().id)).rejects.toBeInstanceOf(
			RateLimitError,
		);
		expect(server.received).toHaveLength(1);
	});

	it('never fails a call on 429s while their waits fit its rate-limit budget, however many come', async () => {
		const job = jobFixture();
		const refusals = Array.from({ length: 12 }, () =>
			problem(429, 'Too Many Requests', undefined, { 'retry-after': '30' }),
		);
		server.script(...refusals, jsonReply(201, job));
		await expect(
			client.jobs.create('transcribe', { input: { url: 'https://x.io/a' } }),
		).resolves.toMatchObject({ id: job.id });
		expect(server.received).toHaveLength(13);
		expect(clock.sleeps).toEqual(Array.from({ length: 12 }, () => 30_000));
	});

	it('stops waiting out 429s once the next wait would pass the budget', async () => {
		server.always(problem(429, 'Too Many Requests', undefined, { 'retry-after': '60' }));
		await expect(client.jobs.get('transcribe', jobFixture().id)).rejects.toBeInstanceOf(
			RateLimitError,
		);
		// Ten minutes of budget: ten waits of 60 s, eleven requests.
		expect(server.received).toHaveLength(11);
	});

	it('reads an HTML error page as a readable error', async () => {
		server.script({
			status: 502,
			headers: { 'content-type': 'text/html' },
			body: '<html><body>Bad gateway</body></html>',
		});
		server.always({
			status: 502,
			headers: { 'content-type': 'text/html' },
			body: '<html>x</html>',
		});
		const error = await client.jobs.get('transcribe', jobFixture().id).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(ServerError);
		expect((error as Error).message).toContain('HTTP 502 Bad Gateway (an HTML error page)');
	});

	it('retries a read whose reply is not valid JSON', async () => {
		const job = jobFixture();
		server.script({ status: 200, body: '{"id": "trunc' }, jsonReply(200, job));
		await expect(client.jobs.get('transcribe', job.id)).resolves.toMatchObject({ id: job.id });
	});

	it('names the missing field when a reply lacks one', async () => {
		const { status: _status, ...incomplete } = jobFixture();
		server.always(jsonReply(200, incomplete));
		const error = await client.jobs.get('transcribe', incomplete.id).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(ResponseFormatError);
		expect((error as Error).message).toContain('status is required');
	});

	it('does not repeat a create that failed with 5xx, but finds the job it made by its request id', async () => {
		const job = jobFixture();
		server.script(problem(500, 'Internal'), () => {
			const sent = JSON.parse(server.received[0].body) as { metadata: Record<string, string> };
			const tagged = {
				...job,
				metadata: { [REQUEST_ID_METADATA_KEY]: sent.metadata[REQUEST_ID_METADATA_KEY] },
			};
			return jsonReply(200, {
				items: [jobFixture(), tagged],
				page: 1,
				page_size: 100,
				total_size: 2,
			});
		});
		await expect(
			client.jobs.create('transcribe', { input: { url: 'https://x.io/a' } }),
		).resolves.toMatchObject({ id: job.id });
		expect(server.received.map((r) => r.method)).toEqual(['POST', 'GET']);
		expect(server.received[1].url).toBe(`${JOB_PATH}?page=1&page_size=100`);
	});

	it('reports an unknown outcome when there is no room to tag the job', async () => {
		const metadata = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i]));
		server.script(problem(503, 'Unavailable'));
		const error = await client.jobs
			.create('transcribe', { input: 1, metadata })
			.catch((e: unknown) => e);
		expect(error).toBeInstanceOf(AmbiguousOutcomeError);
		expect((error as Error).message).toContain('unknown whether the request took effect');
		expect(server.received).toHaveLength(1);
	});

	it('retries a create whose connection was refused (it cannot have arrived)', async () => {
		const refused = new ManagementClient({
			baseUrl: 'http://127.0.0.1:1/api/public',
			organization: 'acme',
			transport,
			clock,
			rateLimit: false,
			retry: { maxRetries: 2 },
		});
		const error = await refused.jobs.create('transcribe', { input: 1 }).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(NetworkError);
		expect(clock.sleeps).toHaveLength(2);
	});

	it('times out a request that gets no answer', async () => {
		const silent = createNetServer(() => undefined);
		await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
		const port = (silent.address() as { port: number }).port;
		const mute = new ManagementClient({
			baseUrl: `http://127.0.0.1:${port}/api/public`,
			organization: 'acme',
			transport,
			clock,
			rateLimit: false,
			timeoutMs: 100,
			retry: { maxRetries: 0 },
		});
		await expect(mute.jobs.get('transcribe', jobFixture().id)).rejects.toBeInstanceOf(TimeoutError);
		silent.close();
	});

	it('rejects bad input before sending anything', async () => {
		await expect(client.jobs.get('Transcribe', jobFixture().id)).rejects.toThrow(
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
			() => new ManagementClient({ baseUrl: server.url, organization: 'A', transport, clock }),
		).toThrow('organization name "A"');
		expect(server.received).toHaveLength(0);
	});
});

describe('rate limiting', () => {
	const { server, transport } = useScriptedServer();

	/** The loopback transport, noting the virtual time each request leaves. */
	function timedTransport() {
		const clock = new FakeClock();
		const sentAt: number[] = [];
		const timed = {
			send: (request: Parameters<UndiciTransport['send']>[0]) => {
				sentAt.push(clock.now());
				return transport.send(request);
			},
		};
		return { clock, sentAt, timed };
	}

	it('never lets more than the limit through in any minute, shared by clients of the same key', async () => {
		const { clock, sentAt, timed } = timedTransport();
		server.always(jsonReply(200, { items: [], page: 1, page_size: 1, total_size: 0 }));
		const make = () =>
			new ManagementClient({
				baseUrl: `${server.url}/api/public`,
				organization: 'acme',
				transport: timed,
				clock,
				rateLimit: { requestsPerMinute: 5, key: 'test-key-shared' },
			});
		const [a, b] = [make(), make()];
		await Promise.all(
			Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).endpoints.list({ page_size: 1 })),
		);
		expect(sentAt).toHaveLength(12);
		for (const t of sentAt)
			expect(sentAt.filter((u) => u > t - 60_000 && u <= t).length).toBeLessThanOrEqual(5);
		expect(sentAt[11] - sentAt[0]).toBeGreaterThanOrEqual(120_000);
	});

	it('after a 429 to one client, every client of the key waits out Retry-After and sends at a lower, even pace', async () => {
		const { clock, sentAt, timed } = timedTransport();
		const job = jobFixture();
		server.script(problem(429, 'Too Many Requests', undefined, { 'retry-after': '7' }));
		server.always(jsonReply(200, job));
		const key = 'test-key-throttled';
		const make = () =>
			new ManagementClient({
				baseUrl: `${server.url}/api/public`,
				organization: 'acme',
				transport: timed,
				clock,
				rateLimit: { requestsPerMinute: 240, key },
			});
		const [a, b] = [make(), make()];
		await a.jobs.get('transcribe', job.id);
		expect(sentAt[1] - sentAt[0]).toBeGreaterThanOrEqual(7_000);
		const limiter = sharedRateLimiter(key, 240, clock);
		expect(limiter.requestsPerMinute).toBeLessThan(240);
		await Promise.all([
			b.jobs.get('transcribe', job.id),
			b.jobs.get('transcribe', job.id),
			a.jobs.get('transcribe', job.id),
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
	const { server, transport } = useScriptedServer();

	it('reports the gateway timeout with advice to use webhooks', async () => {
		server.script({
			status: 504,
			headers: { 'content-type': 'text/html' },
			body: '<html>timeout</html>',
		});
		const client = new WorkloadClient({
			serviceUrl: server.url,
			transport,
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
		server.script(
			jsonReply(400, { error: 'Prompt must contain a save-image node', location: 'prompt' }),
		);
		const client = new WorkloadClient({
			serviceUrl: server.url,
			transport,
			clock: new FakeClock(),
		});
		await expect(
			client.images.generate({
				kind: 'graph',
				request: { prompt: { '9': { class_type: 'SaveImage', inputs: { filename_prefix: 'x' } } } },
			}),
		).rejects.toThrow('Prompt must contain a save-image node');
	});
});
