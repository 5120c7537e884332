import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from '@20minutes/s3rver';

/**
 * An S3-compatible server on loopback that checks AWS Signature Version 4 as S3 does (header and
 * presigned query, expiry, the 7-day maximum) and answers S3's XML errors: @20minutes/s3rver, the
 * maintained fork of s3rver (s3rver 3.x accepts any V4 signature). Its one key pair is S3RVER/S3RVER.
 * What it does not check as S3 does: the region (any region signs), anonymous reads (a bucket is
 * public), virtual-hosted V4 paths (it signs them as /bucket/key).
 */
export interface S3Server {
	/** Path-style endpoint, http://127.0.0.1:<port>. */
	endpoint: string;
	port: number;
	bucket: string;
	accessKeyId: string;
	secretAccessKey: string;
	/** Object storage settings (as the n8n credential and the shared client take them) for this server. */
	settings(keyPrefix?: string): StorageSettings;
	close(): Promise<void>;
}

/** A type, not an interface, so it also fits n8n's credential data (an index signature). */
export type StorageSettings = {
	endpoint: string;
	region: string;
	bucket: string;
	keyPrefix: string;
	accessKeyId: string;
	secretAccessKey: string;
	addressing: 'path';
};

export async function startS3Server(bucket = 'recordings'): Promise<S3Server> {
	const directory = await mkdtemp(join(tmpdir(), 'gpu-cloud-s3-'));
	const server = new S3rver({
		address: '127.0.0.1',
		port: 0,
		silent: true,
		directory,
		configureBuckets: [{ name: bucket }],
	});
	const { port } = await server.run();
	return {
		endpoint: `http://127.0.0.1:${port}`,
		port,
		bucket,
		accessKeyId: 'S3RVER',
		secretAccessKey: 'S3RVER',
		settings: (keyPrefix = 'gpu-cloud/') => ({
			endpoint: `http://127.0.0.1:${port}`,
			region: 'us-east-1',
			bucket,
			keyPrefix,
			accessKeyId: 'S3RVER',
			secretAccessKey: 'S3RVER',
			addressing: 'path',
		}),
		close: async () => {
			await server.close();
			await rm(directory, { recursive: true, force: true });
		},
	};
}
