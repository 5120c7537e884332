/**
 * Job > Get Many: an endpoint's jobs, newest first, with Return All or Limit and the filters the node
 * applies itself (the service's listing filters nothing), through the real n8n engine.
 */
import type { Job } from '../../shared/schemas';
import { byName, gpuCloudWorkflow, managementRequests, startRig, type Rig } from './fixtures';
import { errorOf, outputOf } from './harness';
import { cancelJobAt, createJobsAt } from './job-seed';

let rig: Rig;
let jobs: Job[];

beforeAll(async () => {
	// Jobs stay pending for the whole file unless cancelled.
	rig = await startRig({ jobDurationMs: 10 * 60_000, rateLimitPerMinute: false });
	jobs = await createJobsAt(rig.emulator, 'echo', 150);
	for (const job of [jobs[10], jobs[120], jobs[140]]) await cancelJobAt(rig.emulator, job);
});
afterAll(async () => {
	await rig.close();
});
beforeEach(() => rig.emulator.resetLogs());

const newestFirst = () => [...jobs].reverse().map((job) => job.id);

function getMany(parameters: Record<string, unknown>) {
	return rig.harness.run(
		gpuCloudWorkflow({
			resource: 'job',
			operation: 'getAll',
			endpoint: byName('echo'),
			...parameters,
		}),
	);
}

const listingQueries = () => managementRequests(rig.emulator).map((request) => request.query);

describe('Job > Get Many', () => {
	test('returns all 150 jobs newest first in two pages of 100', async () => {
		const execution = await getMany({ returnAll: true });
		expect(errorOf(execution)).toBeUndefined();
		expect(outputOf(execution, 'GPU Cloud').map((item) => item.json.id)).toEqual(newestFirst());
		expect(listingQueries()).toEqual(['page=1&page_size=100', 'page=2&page_size=100']);
	});

	test('returns the 3 newest jobs with one request of page size 3', async () => {
		const execution = await getMany({ returnAll: false, limit: 3 });
		expect(outputOf(execution, 'GPU Cloud').map((item) => item.json.id)).toEqual(
			newestFirst().slice(0, 3),
		);
		expect(listingQueries()).toEqual(['page=1&page_size=3']);
	});

	test('filters by status across pages', async () => {
		const execution = await getMany({ returnAll: true, filters: { status: ['cancelled'] } });
		expect(outputOf(execution, 'GPU Cloud').map((item) => item.json.id)).toEqual([
			jobs[140].id,
			jobs[120].id,
			jobs[10].id,
		]);
		expect(outputOf(execution, 'GPU Cloud').every((item) => item.json.status === 'cancelled')).toBe(
			true,
		);
	});

	test('stops reading at the first job older than Created After', async () => {
		const execution = await getMany({
			returnAll: true,
			filters: { createdAfter: jobs[60].create_time, createdBefore: jobs[140].create_time },
		});
		expect(outputOf(execution, 'GPU Cloud').map((item) => item.json.id)).toEqual(
			newestFirst().slice(10, 90),
		);
		// Jobs 60-149 are the newest 90: all on page 1, so page 2 is never read.
		expect(listingQueries()).toEqual(['page=1&page_size=100']);
	});

	test.each([
		[{ filters: { status: ['done'] } }, /Status/],
		[{ filters: { createdAfter: 'yesterday' } }, /Created After.*must be a date and time/],
		[{ returnAll: false, limit: 0 }, /Limit.*at least 1/],
	])('refuses %j before any request', async (parameters, message) => {
		const execution = await getMany(parameters);
		expect(execution.status).toBe('error');
		expect(errorOf(execution)?.message).toMatch(message);
		expect(managementRequests(rig.emulator)).toHaveLength(0);
	});
});
