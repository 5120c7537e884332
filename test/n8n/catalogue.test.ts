import { byName, gpuCloudWorkflow, managementRequests, startRig, type Rig } from './fixtures';
import { errorOf, outputOf } from './harness';

let rig: Rig;

beforeAll(async () => {
	rig = await startRig();
});

afterAll(async () => {
	await rig.close();
});

afterEach(() => {
	rig.emulator.resetLogs();
});

describe('Inference endpoints', () => {
	test('gets every endpoint of the catalogue, one item each', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow({
				resource: 'inferenceEndpoint',
				operation: 'getAll',
				returnAll: true,
				options: { pageSize: 4 },
			}),
		);
		expect(errorOf(execution)).toBeUndefined();
		const names = outputOf(execution, 'GPU Cloud').map((item) => item.json.name);
		expect(names).toEqual(rig.emulator.endpoints.map((endpoint) => endpoint.name));
		expect(managementRequests(rig.emulator)).toHaveLength(
			Math.ceil(rig.emulator.endpoints.length / 4),
		);
	});

	test('gets only as many endpoints as the limit, in one request', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow({
				resource: 'inferenceEndpoint',
				operation: 'getAll',
				returnAll: false,
				limit: 3,
			}),
		);
		expect(outputOf(execution, 'GPU Cloud').map((item) => item.json.name)).toEqual(
			rig.emulator.endpoints.slice(0, 3).map((endpoint) => endpoint.name),
		);
		expect(managementRequests(rig.emulator)).toHaveLength(1);
	});

	test('gets one endpoint by name with its input schema', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow({
				resource: 'inferenceEndpoint',
				operation: 'get',
				endpoint: byName('transcribe'),
			}),
		);
		const [{ json }] = outputOf(execution, 'GPU Cloud');
		expect(json).toMatchObject({
			name: 'transcribe',
			organization_name: rig.emulator.organization,
		});
		expect(JSON.parse(String(json.input_schema))).toHaveProperty('properties.url');
	});

	test('reports an unknown endpoint as the service words it', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow({
				resource: 'inferenceEndpoint',
				operation: 'get',
				endpoint: byName('no-such-endpoint'),
			}),
		);
		expect(execution.status).toBe('error');
		expect(errorOf(execution)?.message).toMatch(
			/^GPU Cloud: .*no-such-endpoint.* \[HTTP 404 Not Found, GET \/organizations\/acme\/inference-endpoints\/no-such-endpoint\]$/,
		);
	});

	test('lists endpoints for the "From List" picker, filtered by what the user types', async () => {
		const spec = gpuCloudWorkflow({ resource: 'job', operation: 'create' });
		const all = await rig.harness.listSearch(spec, 'GPU Cloud', 'searchEndpoints');
		expect(all.results.map((result) => result.value)).toEqual(
			rig.emulator.endpoints.map((endpoint) => endpoint.name),
		);
		expect(all.paginationToken).toBeUndefined();

		const filtered = await rig.harness.listSearch(spec, 'GPU Cloud', 'searchEndpoints', 'TRANS');
		expect(filtered.results.map((result) => result.value).sort()).toEqual([
			'transcribe',
			'translate-text',
		]);
		expect(filtered.results.find((result) => result.value === 'transcribe')?.name).toMatch(
			/\(transcribe\)$/,
		);
	});
});

describe('Queues', () => {
	test("creates a queue in the credential's default project", async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow({
				resource: 'queue',
				operation: 'create',
				name: 'image-jobs',
				options: { displayName: 'Image Jobs', description: 'Render requests from the shop' },
			}),
		);
		expect(errorOf(execution)).toBeUndefined();
		expect(outputOf(execution, 'GPU Cloud')[0].json).toMatchObject({
			name: 'image-jobs',
			display_name: 'Image Jobs',
			description: 'Render requests from the shop',
			container_groups: [],
		});
		expect(
			managementRequests(rig.emulator).map((request) => `${request.method} ${request.path}`),
		).toEqual([`POST /api/public/organizations/acme/projects/${rig.emulator.project}/queues`]);
	});

	test('reports a duplicate name and an unknown project with the status and the service detail', async () => {
		const duplicate = await rig.harness.run(
			gpuCloudWorkflow({ resource: 'queue', operation: 'create', name: 'image-jobs' }),
		);
		expect(errorOf(duplicate)?.message).toMatch(/already exists.*\[HTTP 409 Conflict, POST /);

		const unknown = await rig.harness.run(
			gpuCloudWorkflow({
				resource: 'queue',
				operation: 'create',
				project: 'elsewhere',
				name: 'other-jobs',
			}),
		);
		expect(errorOf(unknown)?.message).toMatch(
			/Project "elsewhere" was not found.*\[HTTP 404 Not Found, POST /,
		);
		expect(errorOf(unknown)?.description).toMatch(/Project "elsewhere" was not found/);
	});
});
