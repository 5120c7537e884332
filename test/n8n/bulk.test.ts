import {
	byName,
	gpuCloudWorkflow,
	managementRequests,
	startProxy,
	startRig,
	type Rig,
} from './fixtures';
import { errorOf, outputOf } from './harness';

let rig: Rig;
/** A pass-through proxy in front of the emulator that counts requests in flight. */
let proxy: { close(): Promise<void> };
let inFlight = 0;
let maxInFlight = 0;

beforeAll(async () => {
	// Every management request takes a little while, so overlapping requests really overlap.
	rig = await startRig({ faults: { latencyMs: 15, surfaces: ['management'] } });
	proxy = await startProxy(rig, {
		before: () => {
			inFlight++;
			maxInFlight = Math.max(maxInFlight, inFlight);
		},
		after: () => inFlight--,
	});
});

afterAll(async () => {
	await proxy.close();
	await rig.close();
});

function bulkCreate(count: number, concurrency: number) {
	const spec = gpuCloudWorkflow(
		{
			resource: 'job',
			operation: 'create',
			endpoint: byName('sentiment'),
			input: '={{ { "text": "item " + $json.index } }}',
			options: { metadata: '={{ { "index": $json.index } }}', concurrency },
		},
		{ items: Array.from({ length: count }, (_, index) => ({ index })) },
	);
	spec.nodes[1].credentials = { gpuCloudApi: 'proxied' };
	return spec;
}

describe('Many input items', () => {
	test('200 items run at most "Concurrency" at a time and come out in input order, each paired with its item', async () => {
		maxInFlight = 0;
		const execution = await rig.harness.run(bulkCreate(200, 8));
		expect(errorOf(execution)).toBeUndefined();
		const output = outputOf(execution, 'GPU Cloud');
		expect(output).toHaveLength(200);
		output.forEach((item, index) => {
			expect(item.pairedItem).toEqual({ item: index });
			expect(item.json).toMatchObject({
				status: 'pending',
				input: { text: `item ${index}` },
				metadata: { index },
			});
		});
		expect(new Set(output.map((item) => item.json.id)).size).toBe(200);
		expect(maxInFlight).toBeLessThanOrEqual(8);
		expect(maxInFlight).toBeGreaterThan(1);
		expect(
			managementRequests(rig.emulator).filter((entry) => entry.method === 'POST'),
		).toHaveLength(200);
	});

	test('a concurrency of 1 sends one request at a time', async () => {
		maxInFlight = 0;
		const execution = await rig.harness.run(bulkCreate(10, 1));
		expect(outputOf(execution, 'GPU Cloud')).toHaveLength(10);
		expect(maxInFlight).toBe(1);
	});
});
