import { Container } from '@n8n/di';
import { BinaryDataService } from 'n8n-core';
import { ObjectStorage } from '../../shared';
import { UndiciStorageTransport } from '../../shared/runtime/undici-storage-transport';
import { startS3Server, type S3Server } from '../support/s3-server';
import { startRig, useFilesystemBinaryData, type Rig } from './fixtures';
import { errorOf, NODE_TYPE, outputOf, RECORDING_TYPE, type WorkflowSpec } from './harness';

let rig: Rig;
let restoreBinaryData: () => void;
let s3: S3Server;
beforeAll(async () => {
	restoreBinaryData = await useFilesystemBinaryData();
	rig = await startRig();
	s3 = await startS3Server();
	rig.harness.setCredentials('storage', 'gpuCloudObjectStorageApi', storageCredential());
});
afterAll(async () => {
	await rig.close();
	await s3.close();
	restoreBinaryData();
});

function storageCredential(overrides: Record<string, string> = {}) {
	return { ...s3.settings(), ...overrides };
}

let workflows = 0;

/** Test Recording (a WAV of `seconds`, as binary data) -> GPU Cloud Transcribe with Source "Binary File". */
function recordingIntoTranscribe(
	seconds: number,
	parameters: Record<string, unknown> = {},
	storage: string | null = 'storage',
): WorkflowSpec {
	return {
		id: `binary-${++workflows}`,
		nodes: [
			{
				name: 'Recording',
				type: RECORDING_TYPE,
				parameters: { seconds, fileName: 'weekly sync.wav' },
			},
			{
				name: 'GPU Cloud',
				type: NODE_TYPE,
				parameters: {
					resource: 'transcription',
					operation: 'transcribe',
					source: 'binaryFile',
					binaryPropertyName: 'data',
					...parameters,
				},
				credentials: {
					gpuCloudApi: 'management',
					...(storage === null ? {} : { gpuCloudObjectStorageApi: storage }),
				},
			},
		],
		connections: [['Recording', 'GPU Cloud']],
	};
}

function jobInputUrl(jobId: unknown): URL {
	const input = rig.emulator.getJob(String(jobId))?.input;
	const url = typeof input === 'object' && input !== null && 'url' in input ? input.url : undefined;
	return new URL(String(url));
}

describe('Transcription of a binary file through object storage', () => {
	test('uploads the binary, GPU Cloud reads it by presigned URL and reports its length, and the file is deleted after', async () => {
		const execution = await rig.harness.run(recordingIntoTranscribe(12.5));
		expect(errorOf(execution)).toBeUndefined();
		// A file in n8n's binary data store, which the node streams rather than loads.
		expect(outputOf(execution, 'Recording')[0]?.binary?.data?.id).toMatch(/^filesystem/);
		const [{ json }] = outputOf(execution, 'GPU Cloud');
		expect(json).toMatchObject({ status: 'succeeded', durationSeconds: 12.5 });
		const url = jobInputUrl(json.jobId);
		expect(url.origin).toBe(s3.endpoint);
		expect(url.pathname).toMatch(
			/^\/recordings\/gpu-cloud\/transcriptions\/[0-9a-f-]{36}\/weekly-sync\.wav$/,
		);
		// The node waited for the job, then the link was given 60 minutes (its Timeout) and the object deleted.
		expect(url.searchParams.get('X-Amz-Expires')).toBe('3600');
		expect((await fetch(url)).status).toBe(404);
	});

	test('in webhook wait mode the file stays while the execution is paused and is deleted when it resumes', async () => {
		const execution = await rig.harness.run(recordingIntoTranscribe(5, { waitMode: 'webhook' }));
		expect(execution.status).toBe('waiting');
		const finished = await rig.harness.finished(execution.id);
		expect(errorOf(finished)).toBeUndefined();
		const [{ json }] = outputOf(finished, 'GPU Cloud');
		// The job could read the file after the node paused: it was not deleted then.
		expect(json).toMatchObject({ status: 'succeeded', durationSeconds: 5 });
		expect((await fetch(jobInputUrl(json.jobId))).status).toBe(404);
	});

	test('keeps the file when asked, and gives the link the lifetime set', async () => {
		const execution = await rig.harness.run(
			recordingIntoTranscribe(3, { options: { keepUploadedFile: true, linkLifetimeMinutes: 15 } }),
		);
		expect(errorOf(execution)).toBeUndefined();
		const [{ json }] = outputOf(execution, 'GPU Cloud');
		const url = jobInputUrl(json.jobId);
		expect(url.searchParams.get('X-Amz-Expires')).toBe('900');
		const kept = await fetch(url);
		expect(kept.status).toBe(200);
		expect((await kept.arrayBuffer()).byteLength).toBe(44 + 3 * 8000);
		await new ObjectStorage(storageCredential(), {
			transport: new UndiciStorageTransport(),
			clock: { now: () => Date.now() },
		}).delete(decodeURIComponent(url.pathname.replace(`/${s3.bucket}/`, '')));
	});

	test('a wrong bucket is named as the credential field to fix, before any job', async () => {
		rig.harness.setCredentials(
			'no-bucket',
			'gpuCloudObjectStorageApi',
			storageCredential({ bucket: 'no-such-bucket' }),
		);
		rig.emulator.resetLogs();
		const execution = await rig.harness.run(recordingIntoTranscribe(1, {}, 'no-bucket'));
		expect(errorOf(execution)?.message).toBe(
			'The bucket "no-such-bucket" does not exist there: check the Bucket.',
		);
		expect(rig.emulator.requests.filter((r) => r.method === 'POST')).toEqual([]);
	});

	test('a wrong secret is named as the field to fix, and never shown', async () => {
		const secret = 'Wrong/Secret+Value1234567890';
		rig.harness.setCredentials(
			'wrong-secret',
			'gpuCloudObjectStorageApi',
			storageCredential({ secretAccessKey: secret }),
		);
		const execution = await rig.harness.run(recordingIntoTranscribe(1, {}, 'wrong-secret'));
		const error = errorOf(execution);
		expect(error?.message).toBe(
			'The storage refused the request’s signature: check the Secret Access Key.',
		);
		expect(JSON.stringify(execution.run?.data)).not.toContain(secret);
	});

	test('without a storage credential, Source is named with what it needs, before any request', async () => {
		rig.emulator.resetLogs();
		const execution = await rig.harness.run(recordingIntoTranscribe(1, {}, null));
		expect(errorOf(execution)?.message).toBe(
			'Source is Binary File, which needs a GPU Cloud Object Storage API credential on this node (the bucket GPU Cloud downloads the file from)',
		);
		expect(rig.emulator.requests).toEqual([]);
	});

	test('an Input Binary Field the item does not have is named with the fields it has, before any request', async () => {
		rig.emulator.resetLogs();
		const execution = await rig.harness.run(
			recordingIntoTranscribe(1, { binaryPropertyName: 'audio' }),
		);
		expect(errorOf(execution)?.message).toBe(
			'Input Binary Field is "audio", but the input item has no binary field of that name (it has: data)',
		);
		expect(rig.emulator.requests).toEqual([]);
	});

	test('a bucket setting that breaks S3’s rules is refused before any request', async () => {
		rig.harness.setCredentials(
			'bad-bucket',
			'gpuCloudObjectStorageApi',
			storageCredential({ bucket: 'Team_Recordings' }),
		);
		const execution = await rig.harness.run(recordingIntoTranscribe(1, {}, 'bad-bucket'));
		expect(errorOf(execution)?.message).toMatch(
			/^Object storage Bucket must be 3-63 lower-case letters, digits, dots or hyphens/,
		);
	});

	test('an expired link is refused by the storage server, and the job’s failure reaches the user as a sentence', async () => {
		const storage = new ObjectStorage(storageCredential(), {
			transport: new UndiciStorageTransport(),
			clock: { now: () => Date.now() - 2 * 3600_000 },
		});
		const key = storage.keyFor('old.wav');
		await storage.put(key, Buffer.from('RIFF'), { size: 4, contentType: 'audio/wav' });
		const expired = storage.presignedGetUrl(key, 3600);
		const execution = await rig.harness.run({
			id: `binary-${++workflows}`,
			nodes: [
				{ name: 'Items', type: 'harness.items', parameters: { items: '[{}]' } },
				{
					name: 'GPU Cloud',
					type: NODE_TYPE,
					parameters: { resource: 'transcription', operation: 'transcribe', url: expired },
					credentials: { gpuCloudApi: 'management' },
				},
			],
			connections: [['Items', 'GPU Cloud']],
		});
		expect(errorOf(execution)?.message).toMatch(
			/Could not download input\.url from 127\.0\.0\.1:\d+: the server answered 403 Forbidden\. The URL must be a direct-download link/,
		);
		expect(errorOf(execution)?.message).not.toContain('X-Amz-Signature');
	});

	test('refuses a file of 3 GB or more before uploading it, naming the limit', async () => {
		// n8n's binary metadata as a 3.2 GB file would have it; the bytes are never read.
		const service = Container.get(BinaryDataService);
		const original = service.getMetadata.bind(service);
		service.getMetadata = async (id) => ({ ...(await original(id)), fileSize: 3_200_000_000 });
		try {
			const execution = await rig.harness.run(recordingIntoTranscribe(1));
			expect(errorOf(execution)?.message).toContain(
				'Input Binary Field is a file of 3.20 GB; GPU Cloud takes files smaller than 3 GB',
			);
		} finally {
			service.getMetadata = original;
		}
	});
});

describe('The GPU Cloud Object Storage credential test', () => {
	test('succeeds by putting a small object under the key prefix', async () => {
		expect(
			await rig.harness.testCredentials('gpuCloudObjectStorageApi', storageCredential()),
		).toEqual({
			status: 'OK',
			message: 'Connection successful!',
		});
	});

	test('names the fields to fix when the storage refuses', async () => {
		expect(
			await rig.harness.testCredentials(
				'gpuCloudObjectStorageApi',
				storageCredential({ secretAccessKey: 'wrong' }),
			),
		).toEqual({
			status: 'Error',
			message: expect.stringMatching(
				/^The storage refused the key: check Access Key ID and Secret Access Key/,
			),
		});
		expect(
			await rig.harness.testCredentials(
				'gpuCloudObjectStorageApi',
				storageCredential({ bucket: 'no-such-bucket' }),
			),
		).toEqual({
			status: 'Error',
			message: 'The storage has no such bucket: check Bucket (and Endpoint).',
		});
	});
});
