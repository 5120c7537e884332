/**
 * One paging iterator (shared/paging.ts) behind every listing of the client: an endpoint's jobs and
 * the catalogue. Pages are read only as the caller iterates, so leaving the loop early sends no more
 * requests. Runs the real client against the emulator over loopback.
 */
import { startEmulator, type RunningEmulator } from '../../emulator';
import { ManagementClient } from '../../shared/client';
import { ValidationError } from '../../shared/errors';
import { UndiciTransport } from '../../shared/runtime/undici-transport';
import { systemClock } from '../../shared/runtime/system-clock';
import type { Job } from '../../shared/schemas';

let emulator: RunningEmulator;
let transport: UndiciTransport;
let client: ManagementClient;
const created: Job[] = [];

beforeAll(async () => {
	emulator = await startEmulator({ jobDurationMs: 60_000 });
	transport = new UndiciTransport();
	client = new ManagementClient({
		baseUrl: emulator.baseUrl,
		organization: emulator.organization,
		apiKey: emulator.apiKey,
		transport,
		clock: systemClock,
		rateLimit: false,
	});
	for (let i = 0; i < 7; i++) created.push(await client.jobs.create('echo', { input: { i } }));
});
afterAll(async () => {
	await transport.close();
	await emulator.close();
});
beforeEach(() => emulator.resetLogs());

const listings = () => emulator.requests.filter((request) => request.method === 'GET');

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
	const all: T[] = [];
	for await (const item of iterable) all.push(item);
	return all;
}

describe('jobs.listAll', () => {
	it('yields every job of the endpoint newest first, reading ceil(7 / 3) = 3 pages', async () => {
		const jobs = await collect(client.jobs.listAll('echo', { pageSize: 3 }));
		expect(jobs.map((job) => job.id)).toEqual(created.map((job) => job.id).reverse());
		expect(listings().map((request) => request.query)).toEqual([
			'page=1&page_size=3',
			'page=2&page_size=3',
			'page=3&page_size=3',
		]);
	});

	it('reads no further page once the caller leaves the loop', async () => {
		for await (const job of client.jobs.listAll('echo', { pageSize: 3 })) {
			if (job.id === created[4].id) break;
		}
		expect(listings()).toHaveLength(1);
	});

	it('stops at maxPages and starts at firstPage', async () => {
		const jobs = await collect(
			client.jobs.listAll('echo', { pageSize: 2, firstPage: 2, maxPages: 2 }),
		);
		expect(jobs.map((job) => job.id)).toEqual(
			created
				.map((job) => job.id)
				.reverse()
				.slice(2, 6),
		);
		expect(listings()).toHaveLength(2);
	});

	it('reads one page when the listing fits in it exactly', async () => {
		expect(await collect(client.jobs.listAll('echo', { pageSize: 7 }))).toHaveLength(7);
		expect(listings()).toHaveLength(1);
	});

	it('refuses a page size of 101 before any request, naming the rule', () => {
		expect(() => client.jobs.listAll('echo', { pageSize: 101 })).toThrow(ValidationError);
		expect(() => client.jobs.listAll('echo', { pageSize: 101 })).toThrow(
			/page size.*between 1 and 100/,
		);
		expect(() => client.jobs.listAll('Bad Name')).toThrow(/endpoint name/);
		expect(emulator.requests).toHaveLength(0);
	});
});

describe('endpoints.listAll', () => {
	it('yields the whole catalogue through the same iterator', async () => {
		const names = (await collect(client.endpoints.listAll({ pageSize: 2 }))).map((e) => e.name);
		expect(names).toEqual(emulator.endpoints.map((endpoint) => endpoint.name));
		expect(listings()).toHaveLength(Math.ceil(emulator.endpoints.length / 2));
	});
});
