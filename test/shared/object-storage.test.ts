import {
	ObjectStorage,
	ObjectStorageError,
	type ObjectStorageSettingsInput,
} from '../../shared/object-storage';
import { UndiciStorageTransport } from '../../shared/runtime/undici-storage-transport';
import { startS3Server, type S3Server } from '../support/s3-server';
import { wavBytes } from '../support/media-server';

let s3: S3Server;
beforeAll(async () => {
	s3 = await startS3Server();
});
afterAll(() => s3.close());

const transport = new UndiciStorageTransport();
const systemTime = { now: () => Date.now() };

function settings(overrides: Partial<ObjectStorageSettingsInput> = {}): ObjectStorageSettingsInput {
	return { ...s3.settings(), ...overrides };
}

function storageWith(overrides: Partial<ObjectStorageSettingsInput> = {}, clock = systemTime) {
	return new ObjectStorage(settings(overrides), { transport, clock });
}

/** The bytes in pieces, produced only as the upload reads them. */
async function* pieces(bytes: Buffer, size = 64 * 1024): AsyncIterable<Uint8Array> {
	for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

async function get(url: string): Promise<{ status: number; body: Buffer }> {
	const response = await fetch(url);
	return { status: response.status, body: Buffer.from(await response.arrayBuffer()) };
}

/** The same signature with one hex digit changed. */
function tampered(url: string): string {
	const parsed = new URL(url);
	const signature = parsed.searchParams.get('X-Amz-Signature') ?? '';
	parsed.searchParams.set(
		'X-Amz-Signature',
		`${signature[0] === 'a' ? 'b' : 'a'}${signature.slice(1)}`,
	);
	return parsed.href;
}

describe('object storage on an S3-compatible server that checks Signature V4', () => {
	it('puts a file as a stream, serves it by presigned URL to anyone without a header, and deletes it', async () => {
		const storage = storageWith();
		const wav = wavBytes(30);
		const key = storage.keyFor('calls/standup 1.wav');
		expect(key).toBe('gpu-cloud/calls/standup 1.wav');
		await storage.put(key, pieces(wav), { size: wav.length, contentType: 'audio/wav' });
		const url = storage.presignedGetUrl(key, 600);
		expect(url).toContain('/recordings/gpu-cloud/calls/standup%201.wav?');
		const downloaded = await get(url);
		expect(downloaded.status).toBe(200);
		expect(downloaded.body.equals(wav)).toBe(true);
		await storage.delete(key);
		expect((await get(url)).status).toBe(404);
		await storage.delete(key); // already gone: no error
	});

	it('the server refuses the object with a tampered signature and after expiry', async () => {
		const storage = storageWith();
		const key = storage.keyFor('private.wav');
		const wav = wavBytes(1);
		await storage.put(key, pieces(wav), { size: wav.length, contentType: 'audio/wav' });
		const url = storage.presignedGetUrl(key, 60);
		const forged = await get(tampered(url));
		expect(forged.status).toBe(403);
		expect(forged.body.toString()).toContain('<Code>SignatureDoesNotMatch</Code>');
		const hourAgo = { now: () => Date.now() - 3_600_000 };
		const expired = await get(storageWith({}, hourAgo).presignedGetUrl(key, 60));
		expect(expired.status).toBe(403);
		expect(expired.body.toString()).toContain('Request has expired');
	});

	it('addresses the bucket virtual-hosted style as Amazon’s presigned example does', () => {
		// The test server canonicalises virtual-hosted V4 requests as /bucket/key (a V2 habit), so
		// this style is proven against Amazon's own worked example, which is virtual-hosted.
		const storage = new ObjectStorage(
			{
				endpoint: 'https://s3.amazonaws.com',
				region: 'us-east-1',
				bucket: 'examplebucket',
				accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
				secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
				addressing: 'virtual-hosted',
			},
			{ transport, clock: { now: () => Date.UTC(2013, 4, 24) } },
		);
		const url = new URL(storage.presignedGetUrl('test.txt', 86400));
		expect(`${url.origin}${url.pathname}`).toBe('https://examplebucket.s3.amazonaws.com/test.txt');
		expect(url.searchParams.get('X-Amz-Signature')).toBe(
			'aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404',
		);
	});

	it('check() proves good settings and names the field of bad ones', async () => {
		await storageWith().check();
		const failures: [Partial<ObjectStorageSettingsInput>, string, RegExp][] = [
			[
				{ bucket: 'no-such-bucket' },
				'bucket',
				/^The bucket "no-such-bucket" does not exist there: check the Bucket\.$/,
			],
			[{ accessKeyId: 'AKIAUNKNOWN' }, 'accessKeyId', /check the Access Key ID\.$/],
			[
				{ secretAccessKey: 'not-the-secret' },
				'secretAccessKey',
				/signature: check the Secret Access Key\.$/,
			],
			[
				{ endpoint: 'http://127.0.0.1:1' },
				'endpoint',
				/^Could not reach the object storage at 127\.0\.0\.1:1: check the Endpoint/,
			],
		];
		for (const [overrides, field, message] of failures) {
			const storage = new ObjectStorage(settings(overrides), {
				transport,
				clock: systemTime,
				labels: {
					endpoint: 'Endpoint',
					region: 'Region',
					bucket: 'Bucket',
					keyPrefix: 'Key Prefix',
					accessKeyId: 'Access Key ID',
					secretAccessKey: 'Secret Access Key',
					addressing: 'Addressing Style',
				},
			});
			const error = await storage.check().then(
				() => undefined,
				(thrown: unknown) => thrown,
			);
			expect(error).toBeInstanceOf(ObjectStorageError);
			expect(error).toMatchObject({ field, message: expect.stringMatching(message) });
			expect(String((error as Error).message)).not.toContain('not-the-secret');
		}
	});

	it('refuses settings that cannot work before any request, naming the field and the rule', () => {
		for (const [overrides, message] of [
			[{ bucket: 'My_Bucket' }, 'Object storage bucket must be 3-63 lower-case letters'],
			[
				{ endpoint: 's3.amazonaws.com' },
				'Object storage endpoint must be a full http:// or https:// URL',
			],
			[{ region: '' }, 'Object storage region must be the bucket’s region'],
			[{ keyPrefix: '/uploads/' }, 'Object storage key prefix must not start with /'],
			[{ accessKeyId: ' ' }, 'Object storage access key ID must be the access key ID'],
		] as const) {
			expect(() => storageWith(overrides)).toThrow(message);
		}
	});

	it('refuses a presigned URL living longer than 7 days, S3’s maximum', () => {
		expect(() => storageWith().presignedGetUrl('k', 7 * 24 * 3600 + 1)).toThrow(
			'7 days, the most S3 allows',
		);
	});
});
