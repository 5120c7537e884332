import type {
	ICredentialDataDecryptedObject,
	ICredentialTestRequest,
	ICredentialType,
	IHttpRequestOptions,
	Icon,
	INodeProperties,
} from 'n8n-workflow';
import { signedStorageHeaders } from '../shared/object-storage/request-signing';
import { OBJECT_STORAGE_LABELS } from '../nodes/GpuCloud/transport/storage';

/**
 * The user's own S3-compatible bucket (AWS S3, Cloudflare R2, MinIO, Backblaze B2, ...), where the
 * node puts a binary file so GPU Cloud can download it from a presigned, expiring URL.
 */
export class GpuCloudObjectStorageApi implements ICredentialType {
	name = 'gpuCloudObjectStorageApi';

	displayName = 'GPU Cloud Object Storage API';

	icon: Icon = { light: 'file:gpuCloud.svg', dark: 'file:gpuCloud.dark.svg' };

	documentationUrl = 'https://www.npmjs.com/package/n8n-nodes-gpu-cloud#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'Endpoint',
			name: 'endpoint',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'e.g. https://s3.eu-west-1.amazonaws.com',
			description:
				'The S3 API URL of your storage: https://s3.&lt;region&gt;.amazonaws.com, https://&lt;account&gt;.r2.cloudflarestorage.com, https://s3.&lt;region&gt;.backblazeb2.com, or your MinIO server',
		},
		{
			displayName: 'Region',
			name: 'region',
			type: 'string',
			default: 'us-east-1',
			required: true,
			description: 'The region of the bucket (auto for Cloudflare R2)',
		},
		{
			displayName: 'Bucket',
			name: 'bucket',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'e.g. team-recordings',
		},
		{
			displayName: 'Key Prefix',
			name: 'keyPrefix',
			type: 'string',
			default: 'gpu-cloud/',
			description:
				'Where in the bucket files for GPU Cloud go; give the access key rights to put and delete objects under it',
		},
		{
			displayName: 'Access Key ID',
			name: 'accessKeyId',
			type: 'string',
			default: '',
			required: true,
		},
		{
			displayName: 'Secret Access Key',
			name: 'secretAccessKey',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
		},
		{
			displayName: 'Addressing Style',
			name: 'addressing',
			type: 'options',
			options: [
				{
					name: 'Path (Endpoint/Bucket/Key)',
					value: 'path',
					description: 'Works with every S3-compatible storage',
				},
				{
					name: 'Virtual-Hosted (Bucket.Endpoint/Key)',
					value: 'virtual-hosted',
					description: 'What AWS recommends',
				},
			],
			default: 'path',
		},
	];

	/** Signs each request with AWS Signature Version 4 (the payload unsigned, as S3 allows). */
	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		requestOptions: IHttpRequestOptions,
	): Promise<IHttpRequestOptions> {
		return {
			...requestOptions,
			headers: {
				...requestOptions.headers,
				...signedStorageHeaders(credentials, requestOptions, Date.now(), OBJECT_STORAGE_LABELS),
			},
		};
	}

	/** Puts a small object under the key prefix: what a transcription of a binary file needs. */
	test: ICredentialTestRequest = {
		request: {
			method: 'PUT',
			url: '={{ $credentials.addressing === "virtual-hosted" ? $credentials.endpoint.replace("://", "://" + $credentials.bucket + ".").replace(/\\/+$/, "") + "/" : $credentials.endpoint.replace(/\\/+$/, "") + "/" + $credentials.bucket + "/" }}{{ $credentials.keyPrefix }}.gpu-cloud-credential-check',
			body: 'GPU Cloud credential check',
			json: false,
		},
		rules: [
			{
				type: 'responseCode',
				properties: {
					value: 403,
					message:
						'The storage refused the key: check Access Key ID and Secret Access Key, and that the key may put objects under the Key Prefix.',
				},
			},
			{
				type: 'responseCode',
				properties: {
					value: 404,
					message: 'The storage has no such bucket: check Bucket (and Endpoint).',
				},
			},
			{
				type: 'responseCode',
				properties: {
					value: 400,
					message: 'The storage refused the request: check Region (the bucket’s own region).',
				},
			},
			{
				type: 'responseCode',
				properties: {
					value: 301,
					message: 'The bucket is in another region: check Region (the bucket’s own region).',
				},
			},
		],
	};
}
