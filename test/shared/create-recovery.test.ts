/**
 * A create whose reply is lost is looked up by its request id instead of being repeated. Whether
 * "not found" means "no job" depends on how the create failed: only an answer from the service
 * itself proves it has finished with the request. After a lost connection, a timeout, a gateway
 * error or a garbled 2xx the job may still appear later, and a second create would be a paid job
 * run twice.
 */
import {
	CreateOutcomeUnknownError,
	REQUEST_ID_METADATA_KEY,
	type ManagementClient,
} from '../../shared/client';
import { ServerError } from '../../shared/errors';
import { AmbiguousOutcomeError } from '../../shared/request';
import { FakeClock } from '../support/fake-clock';
import { jobFixture } from '../support/fixtures';
import {
	jsonReply,
	problem,
	scriptedManagementClient,
	useScriptedServer,
	type ScriptedReply,
} from '../support/scripted-server';

const emptyPage = jsonReply(200, { items: [], page: 1, page_size: 100, total_size: 0 });

const lostReplies: Array<[string, ScriptedReply]> = [
	['the connection is dropped before any reply', { status: 0, reset: true }],
	['no reply comes before the timeout', { status: 0, hang: true }],
	[
		'the gateway answers 502',
		{ status: 502, headers: { 'content-type': 'text/html' }, body: '<html>Bad gateway</html>' },
	],
	['the gateway times out (504)', problem(504, 'Gateway Timeout')],
	['a 201 arrives with a garbled body', { status: 201, body: '{"id": "trunc' }],
];

describe('jobs.create when the outcome of the create is unknown', () => {
	const { server, transport } = useScriptedServer();
	let clock: FakeClock;
	let client: ManagementClient;

	beforeEach(() => {
		server.reset();
		clock = new FakeClock();
		client = scriptedManagementClient(server, transport, clock, { timeoutMs: 300 });
	});

	const sentRequestId = () =>
		(JSON.parse(server.received[0].body) as { metadata: Record<string, string> }).metadata[
			REQUEST_ID_METADATA_KEY
		];
	const methods = () => server.received.map((r) => r.method);

	it.each(lostReplies)(
		'finds the job that appears only after the first look-up when %s, creating once',
		async (_, lost) => {
			const job = jobFixture();
			const listingTheJob = () =>
				jsonReply(200, {
					items: [{ ...job, metadata: { [REQUEST_ID_METADATA_KEY]: sentRequestId() } }],
					page: 1,
					page_size: 100,
					total_size: 1,
				});
			server.script(lost, emptyPage, listingTheJob);
			server.always(problem(500, 'Not part of the script'));
			await expect(client.jobs.create('transcribe', { input: 1 })).resolves.toMatchObject({
				id: job.id,
			});
			expect(methods()).toEqual(['POST', 'GET', 'GET']);
			expect(clock.sleeps).toEqual([500]);
		},
	);

	it.each(lostReplies)(
		'reports the request id instead of creating twice when %s and the job never shows',
		async (_, lost) => {
			server.script(lost);
			server.always(emptyPage);
			const error = await client.jobs.create('transcribe', { input: 1 }).catch((e: unknown) => e);
			expect(methods()).toEqual(['POST', 'GET', 'GET', 'GET', 'GET']);
			expect(clock.sleeps).toEqual([500, 2_000, 5_000]);
			expect(error).toBeInstanceOf(AmbiguousOutcomeError);
			expect(error).toBeInstanceOf(CreateOutcomeUnknownError);
			expect((error as CreateOutcomeUnknownError).clientRequestId).toBe(sentRequestId());
			expect((error as Error).message).toContain(`${REQUEST_ID_METADATA_KEY} "${sentRequestId()}"`);
		},
	);

	it('takes the first job made with the request id, not a later copy of its metadata', async () => {
		// Anyone with the key can copy a job's metadata, request id included, onto a job of their own:
		// the create made the oldest job carrying it.
		const original = jobFixture({ create_time: '2026-01-01T00:00:00.000Z' });
		const copy = jobFixture({ create_time: '2026-01-01T00:00:03.000Z' });
		const tagged = (job: typeof original) => ({
			...job,
			metadata: { [REQUEST_ID_METADATA_KEY]: sentRequestId() },
		});
		server.script({ status: 0, reset: true }, () =>
			jsonReply(200, {
				items: [tagged(copy), tagged(original)],
				page: 1,
				page_size: 100,
				total_size: 2,
			}),
		);
		server.always(problem(500, 'Not part of the script'));
		await expect(client.jobs.create('transcribe', { input: 1 })).resolves.toMatchObject({
			id: original.id,
		});
	});

	it('reports the request id when the look-up itself fails', async () => {
		server.script({ status: 0, reset: true });
		server.always(problem(503, 'Unavailable'));
		const error = await client.jobs.create('transcribe', { input: 1 }).catch((e: unknown) => e);
		expect(methods().filter((method) => method === 'POST')).toHaveLength(1);
		expect((error as CreateOutcomeUnknownError).clientRequestId).toBe(sentRequestId());
	});

	it("reports the service's own error, not an unknown outcome, when every create is answered 503 and no job was made", async () => {
		for (let attempt = 0; attempt < 10; attempt++)
			server.script(problem(503, 'Unavailable'), emptyPage);
		const error = await client.jobs.create('transcribe', { input: 1 }).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(ServerError);
		expect(error).not.toBeInstanceOf(CreateOutcomeUnknownError);
		expect((error as ServerError).status).toBe(503);
		expect(methods().filter((method) => method === 'POST').length).toBeGreaterThan(1);
	});

	it('creates again, with the same request id, when the service itself answered 503 and the look-up finds nothing', async () => {
		const job = jobFixture();
		server.script(problem(503, 'Unavailable'), emptyPage, jsonReply(201, job));
		await expect(client.jobs.create('transcribe', { input: 1 })).resolves.toMatchObject({
			id: job.id,
		});
		expect(methods()).toEqual(['POST', 'GET', 'POST']);
		const [first, , second] = server.received.map(
			(r) => JSON.parse(r.body || '{}') as { metadata?: Record<string, string> },
		);
		expect(second.metadata?.[REQUEST_ID_METADATA_KEY]).toBe(
			first.metadata?.[REQUEST_ID_METADATA_KEY],
		);
	});
});
