/**
 * A create whose reply is lost is looked up by its request id instead of being repeated. Whether
 * "not found" means "no job" depends on how the create failed: only an answer from the service
 * itself proves it has finished with the request. After a lost connection, a timeout, a gateway
 * error or a garbled 2xx the job may still appear later, and a second create would be a paid job
 * run twice. The emulator plays each failure: its edge faults reach the service at once, later
 * (lateArrivalMs, on a clock the client's pauses move) or never.
 */
import type { RequestFaultKind } from '../../emulator';
import {
	CreateOutcomeUnknownError,
	REQUEST_ID_METADATA_KEY,
	type ManagementClient,
} from '../../shared/client';
import { ServerError } from '../../shared/errors';
import { AmbiguousOutcomeError } from '../../shared/request';
import type { Transport } from '../../shared/transport';
import { ClientClock } from '../support/client-clock';
import { emulatorClient, useEmulator } from '../support/emulator';
import { ManualClock } from '../support/manual-clock';

/** The edge failed: whether the request reached the service, the client cannot tell. */
const edgeFaults: Array<[string, RequestFaultKind]> = [
	['the connection is dropped before any reply', 'drop'],
	['no reply comes before the timeout', 'hang'],
	['the gateway answers 502 with an HTML page', 'html-error'],
	['the gateway times out (504)', 'gateway-timeout'],
];

/** The service made the job; its reply was spoiled on the way back. */
const spoiledReplies: Array<[string, RequestFaultKind]> = [
	['the connection is cut mid-reply', 'reset'],
	['a 201 arrives with a garbled body', 'malformed'],
	['a 201 stops arriving half-way', 'stall'],
];

describe('jobs.create when the outcome of the create is unknown', () => {
	let timeline: ManualClock;
	const setup = useEmulator(() => {
		timeline = new ManualClock();
		return { clock: timeline };
	});
	const running = () => setup.emulator;
	let clock: ClientClock;
	let client: ManagementClient;

	beforeEach(() => {
		clock = new ClientClock(timeline);
		client = emulatorClient(running(), setup.transport, clock, { timeoutMs: 300 });
	});

	const posts = () => running().requests.filter((r) => r.method === 'POST');
	const requestIdOf = (body: string | undefined) =>
		(JSON.parse(body ?? '{}') as { metadata?: Record<string, string> }).metadata?.[
			REQUEST_ID_METADATA_KEY
		];
	const sentRequestId = () => requestIdOf(posts()[0]?.body);
	const methods = () => running().requests.map((r) => r.method);
	const jobs = () => running().jobsOf(running().organization);

	it.each(edgeFaults)(
		'finds the job that appears only after the first look-up when %s, creating once',
		async (_name, fault) => {
			running().setFaults({ sequence: [fault], lateArrivalMs: 300 });
			const job = await client.jobs.create('echo', { input: 1 });
			expect(jobs().map((made) => made.id)).toEqual([job.id]);
			expect(job.metadata?.[REQUEST_ID_METADATA_KEY]).toBe(sentRequestId());
			expect(methods()).toEqual(['POST', 'GET', 'GET']);
			expect(clock.sleeps).toEqual([500]);
		},
	);

	it.each(spoiledReplies)(
		'finds the job the create made when %s, at the first look-up, creating once',
		async (_name, fault) => {
			running().setFaults({ sequence: [fault] });
			const job = await client.jobs.create('echo', { input: 1 });
			expect(jobs().map((made) => made.id)).toEqual([job.id]);
			expect(methods()).toEqual(['POST', 'GET']);
			expect(clock.sleeps).toEqual([]);
		},
	);

	it.each(edgeFaults)(
		'reports the request id instead of creating twice when %s and the job never shows',
		async (_name, fault) => {
			running().setFaults({ sequence: [fault] });
			const error = await client.jobs.create('echo', { input: 1 }).catch((e: unknown) => e);
			expect(methods()).toEqual(['POST', 'GET', 'GET', 'GET', 'GET']);
			expect(clock.sleeps).toEqual([500, 2_000, 5_000]);
			expect(error).toBeInstanceOf(AmbiguousOutcomeError);
			expect(error).toBeInstanceOf(CreateOutcomeUnknownError);
			expect((error as CreateOutcomeUnknownError).clientRequestId).toBe(sentRequestId());
			expect((error as Error).message).toContain(`${REQUEST_ID_METADATA_KEY} "${sentRequestId()}"`);
			expect(jobs()).toEqual([]);
		},
	);

	it('names the request id that finds a job arriving after the client stopped looking', async () => {
		running().setFaults({ sequence: ['gateway-timeout'], lateArrivalMs: 60_000 });
		const error = await client.jobs.create('echo', { input: 1 }).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(CreateOutcomeUnknownError);
		expect(jobs()).toEqual([]);
		await timeline.advance(60_000);
		expect(jobs().map((job) => job.metadata?.[REQUEST_ID_METADATA_KEY])).toEqual([
			(error as CreateOutcomeUnknownError).clientRequestId,
		]);
	});

	it('takes the first job made with the request id, not a later copy of its metadata', async () => {
		// Anyone with the key can copy a job's metadata, request id included, onto a job of their own:
		// the create made the oldest job carrying it. Here the copy is made while the reply is lost.
		const copying: Transport = {
			send: async (request) => {
				try {
					return await setup.transport.send(request);
				} catch (error) {
					if (request.method !== 'POST') throw error;
					await timeline.advance(3_000);
					await emulatorClient(running(), setup.transport, clock).jobs.create('echo', {
						input: 'copy',
						metadata: { [REQUEST_ID_METADATA_KEY]: sentRequestId() },
					});
					throw error;
				}
			},
		};
		running().setFaults({ sequence: ['reset'] });
		const copied = emulatorClient(running(), copying, clock);
		const job = await copied.jobs.create('echo', { input: 'original' });
		expect(job.input).toBe('original');
		expect(jobs().map((made) => made.input)).toEqual(['original', 'copy']);
		expect(methods()).toEqual(['POST', 'POST', 'GET']);
	});

	it('reports the request id when the look-up itself fails', async () => {
		running().setFaults({ sequence: ['drop'], errorRate: 1 });
		const error = await client.jobs.create('echo', { input: 1 }).catch((e: unknown) => e);
		expect(posts()).toHaveLength(1);
		expect(error).toBeInstanceOf(CreateOutcomeUnknownError);
		expect((error as CreateOutcomeUnknownError).clientRequestId).toBe(sentRequestId());
	});

	it("reports the service's own error, not an unknown outcome, when every create is answered 503 and no job was made", async () => {
		// The service refuses each create and answers each look-up.
		running().setFaults({
			sequence: Array.from({ length: 10 }, () => ['error', 'none'] as const).flat(),
		});
		const error = await client.jobs.create('echo', { input: 1 }).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(ServerError);
		expect(error).not.toBeInstanceOf(CreateOutcomeUnknownError);
		expect((error as ServerError).status).toBe(503);
		expect(posts().length).toBeGreaterThan(1);
		expect(running().requests.every((r) => r.method === 'GET' || r.fault === 'error')).toBe(true);
		expect(jobs()).toEqual([]);
	});

	it('creates again, with the same request id, when the service itself answered 503 and the look-up finds nothing', async () => {
		running().setFaults({ sequence: ['error'] });
		const job = await client.jobs.create('echo', { input: 1 });
		expect(methods()).toEqual(['POST', 'GET', 'POST']);
		const [first, second] = posts().map((post) => requestIdOf(post.body));
		expect(first).toEqual(expect.any(String));
		expect(second).toBe(first);
		expect(jobs().map((made) => made.id)).toEqual([job.id]);
	});
});
