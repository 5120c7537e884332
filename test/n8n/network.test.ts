import { gpuCloudWorkflow, startRig, type Rig } from './fixtures';
import { errorOf } from './harness';

/** Failures below HTTP, as n8n's request helper reports them to the node; each is retried first (a few seconds). */

let rig: Rig;

beforeAll(async () => {
	rig = await startRig();
});

afterAll(async () => {
	await rig.close();
});

const listEndpoints = (credential: string) => {
	const spec = gpuCloudWorkflow({ resource: 'inferenceEndpoint', operation: 'getAll', limit: 1 });
	spec.nodes[1].credentials = { gpuCloudApi: credential };
	return spec;
};

describe('Network failures', () => {
	test('a service that refuses connections fails the item naming the service, the request and the cause', async () => {
		rig.harness.setCredentials('closed-port', 'gpuCloudApi', {
			apiKey: 'key',
			baseUrl: 'http://127.0.0.1:9/api/public',
			organizationName: 'acme',
		});
		const execution = await rig.harness.run(listEndpoints('closed-port'));
		expect(errorOf(execution)).toMatchObject({
			message:
				'Could not reach GPU Cloud for GET /organizations/acme/inference-endpoints?page=1&page_size=1: Could not connect (ECONNREFUSED).',
			description: expect.stringMatching(/refused the connection/),
		});
	});

	test('a connection closed before the reply is reported as such', async () => {
		rig.emulator.setFaults({ resetRate: 1, surfaces: ['management'] });
		try {
			const execution = await rig.harness.run(listEndpoints('management'));
			expect(errorOf(execution)?.message).toMatch(
				/^Could not reach GPU Cloud for GET .*: The connection was closed before the reply was complete\.$/,
			);
		} finally {
			rig.emulator.setFaults({ resetRate: 0 });
		}
	});
});
