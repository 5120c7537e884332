import {
	PRESIGN_MAX_SECONDS,
	presignedGetUrl,
	sha256Hex,
	signedHeaders,
} from '../../shared/object-storage/sigv4';

/**
 * The worked examples of Amazon's "Authenticating Requests (AWS Signature Version 4)" pages
 * (Authorization header, single chunk; query parameters): the signatures S3 computes for them.
 */
const KEYS = {
	accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
	secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
	region: 'us-east-1',
};
const NOW = new Date('2013-05-24T00:00:00Z');
const BUCKET = 'https://examplebucket.s3.amazonaws.com';

describe('AWS Signature Version 4', () => {
	it('signs GET Object with a Range header as Amazon’s example does', () => {
		const headers = signedHeaders(
			{
				method: 'GET',
				url: new URL(`${BUCKET}/test.txt`),
				headers: { Range: 'bytes=0-9' },
				payloadHash: sha256Hex(''),
			},
			KEYS,
			NOW,
		);
		expect(headers.authorization).toBe(
			'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
		);
		expect(headers['x-amz-date']).toBe('20130524T000000Z');
	});

	it('signs PUT Object with a path needing escapes as Amazon’s example does', () => {
		const body = 'Welcome to Amazon S3.';
		const headers = signedHeaders(
			{
				method: 'PUT',
				url: new URL(`${BUCKET}/test$file.text`),
				headers: {
					Date: 'Fri, 24 May 2013 00:00:00 GMT',
					'x-amz-storage-class': 'REDUCED_REDUNDANCY',
				},
				payloadHash: sha256Hex(body),
			},
			KEYS,
			NOW,
		);
		expect(headers.authorization).toBe(
			'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd',
		);
	});

	it('presigns a GET URL for a day as Amazon’s example does', () => {
		const url = new URL(presignedGetUrl(new URL(`${BUCKET}/test.txt`), KEYS, NOW, 86400));
		expect(url.searchParams.get('X-Amz-Signature')).toBe(
			'aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404',
		);
		expect(url.searchParams.get('X-Amz-Expires')).toBe('86400');
		expect(url.searchParams.get('X-Amz-Credential')).toBe(
			'AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request',
		);
	});

	it('refuses a lifetime over 7 days, S3’s maximum, or under a second', () => {
		for (const seconds of [0, PRESIGN_MAX_SECONDS + 1, 1.5])
			expect(() => presignedGetUrl(new URL(`${BUCKET}/a`), KEYS, NOW, seconds)).toThrow(
				/from 1 to 604800 \(7 days, the most S3 allows\)/,
			);
		expect(() =>
			presignedGetUrl(new URL(`${BUCKET}/a`), KEYS, NOW, PRESIGN_MAX_SECONDS),
		).not.toThrow();
	});
});
