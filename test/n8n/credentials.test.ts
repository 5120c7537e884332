import { startRig, type Rig } from './fixtures';

let rig: Rig;

beforeAll(async () => {
	rig = await startRig({ workloadAuth: true });
});

afterAll(async () => {
	await rig.close();
});

beforeEach(() => {
	rig.emulator.resetLogs();
});

describe('Credential tests (the "Test" button)', () => {
	test('GPU Cloud API: succeeds with a valid key by reading one page of the catalogue', async () => {
		const result = await rig.harness.testCredentials('gpuCloudApi', {
			apiKey: rig.emulator.apiKey,
			baseUrl: `${rig.emulator.baseUrl}/`,
			organizationName: rig.emulator.organization,
		});
		expect(result).toEqual({ status: 'OK', message: 'Connection successful!' });
		expect(
			rig.emulator.requests.map((request) => `${request.method} ${request.path} ${request.status}`),
		).toEqual([
			`GET /api/public/organizations/${rig.emulator.organization}/inference-endpoints 200`,
		]);
	});

	test('GPU Cloud API: fails with a wrong key', async () => {
		const result = await rig.harness.testCredentials('gpuCloudApi', {
			apiKey: 'wrong-key',
			baseUrl: rig.emulator.baseUrl,
			organizationName: rig.emulator.organization,
		});
		expect(result).toEqual({ status: 'Error', message: 'Received HTTP status code: 401' });
	});

	test('GPU Cloud Workload: sends the key only when one is set', async () => {
		const withKey = await rig.harness.testCredentials('gpuCloudWorkloadApi', {
			serviceUrl: rig.emulator.imageUrl,
			apiKey: rig.emulator.apiKey,
		});
		expect(withKey.status).toBe('OK');
		const withoutKey = await rig.harness.testCredentials('gpuCloudWorkloadApi', {
			serviceUrl: rig.emulator.imageUrl,
			apiKey: '',
		});
		expect(withoutKey).toEqual({ status: 'Error', message: 'Received HTTP status code: 401' });
	});
});
