import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startRig, type Rig } from './fixtures';

let rig: Rig;
/** A web site at a wrong Base URL: every path answers 200 with an HTML page. */
let website: Server;
let websiteUrl: string;

beforeAll(async () => {
	rig = await startRig({ workloadAuth: true });
	website = createServer((_request, response) => {
		response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
		response.end('<!doctype html><html><head><title>Welcome</title></head><body>Hi</body></html>');
	});
	await new Promise<void>((resolve) => website.listen(0, '127.0.0.1', resolve));
	websiteUrl = `http://127.0.0.1:${(website.address() as AddressInfo).port}`;
});

afterAll(async () => {
	await rig.close();
	website.closeAllConnections();
	await new Promise((resolve) => website.close(resolve));
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

	test('GPU Cloud API: a wrong key is named as the field to fix', async () => {
		const result = await rig.harness.testCredentials('gpuCloudApi', {
			apiKey: 'wrong-key',
			baseUrl: rig.emulator.baseUrl,
			organizationName: rig.emulator.organization,
		});
		expect(result).toEqual({
			status: 'Error',
			message: expect.stringMatching(/^GPU Cloud refused the API Key\b/),
		});
	});

	test('GPU Cloud API: an organization the key is not a member of is named as the field to fix', async () => {
		const result = await rig.harness.testCredentials('gpuCloudApi', {
			apiKey: rig.emulator.apiKey,
			baseUrl: rig.emulator.baseUrl,
			organizationName: 'another-org',
		});
		expect(rig.emulator.requests.map((request) => request.status)).toEqual([403]);
		expect(result).toEqual({
			status: 'Error',
			message: expect.stringMatching(/^This API Key is not a member of the Organization Name\b/),
		});
	});

	test('GPU Cloud API: a base URL without the API root is named as the field to fix', async () => {
		const result = await rig.harness.testCredentials('gpuCloudApi', {
			apiKey: rig.emulator.apiKey,
			baseUrl: new URL(rig.emulator.baseUrl).origin,
			organizationName: rig.emulator.organization,
		});
		expect(rig.emulator.requests.map((request) => request.status)).toEqual([404]);
		expect(result).toEqual({
			status: 'Error',
			message: expect.stringMatching(/^GPU Cloud has no such path: check API Base URL\b/),
		});
	});

	test('GPU Cloud API: a base URL answering 200 with a web page is named as the field to fix', async () => {
		const result = await rig.harness.testCredentials('gpuCloudApi', {
			apiKey: rig.emulator.apiKey,
			baseUrl: `${websiteUrl}/api/public`,
			organizationName: rig.emulator.organization,
		});
		expect(result).toEqual({
			status: 'Error',
			message: expect.stringMatching(/\bcheck API Base URL\b/),
		});
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
		expect(withoutKey).toEqual({
			status: 'Error',
			message: expect.stringMatching(/^This workload requires an API Key\b/),
		});
	});

	test('GPU Cloud Workload: a wrong key is named as the field to fix', async () => {
		const result = await rig.harness.testCredentials('gpuCloudWorkloadApi', {
			serviceUrl: rig.emulator.imageUrl,
			apiKey: 'wrong-key',
		});
		expect(result).toEqual({
			status: 'Error',
			message: expect.stringMatching(/\bAPI Key\b/),
		});
	});

	test('GPU Cloud Workload: a Service URL that is not a workload is named as the field to fix', async () => {
		const result = await rig.harness.testCredentials('gpuCloudWorkloadApi', {
			serviceUrl: `${new URL(rig.emulator.baseUrl).origin}/nowhere`,
			apiKey: '',
		});
		expect(result).toEqual({
			status: 'Error',
			message: expect.stringMatching(/^No GPU Cloud workload answers at this Service URL\b/),
		});
	});
});
