import type {
	ICredentialDataDecryptedObject,
	ICredentialTestRequest,
	ICredentialType,
	IHttpRequestOptions,
	Icon,
	INodeProperties,
} from 'n8n-workflow';

/** A deployed template workload (image generation or text generation) behind the container gateway. */
export class GpuCloudWorkloadApi implements ICredentialType {
	name = 'gpuCloudWorkloadApi';

	displayName = 'GPU Cloud Workload API';

	icon: Icon = { light: 'file:gpuCloud.svg', dark: 'file:gpuCloud.dark.svg' };

	documentationUrl = 'https://www.npmjs.com/package/n8n-nodes-gpu-cloud#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'Service URL',
			name: 'serviceUrl',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'https://my-workload.example.com',
			description: 'The access URL of the deployed container group',
		},
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			description:
				'Needed only when authentication is turned on for the container group; leave empty otherwise',
		},
	];

	/** A function rather than a generic header: the key must be left out entirely when it is empty. */
	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		requestOptions: IHttpRequestOptions,
	): Promise<IHttpRequestOptions> {
		const apiKey = typeof credentials.apiKey === 'string' ? credentials.apiKey.trim() : '';
		if (!apiKey) return requestOptions;
		return { ...requestOptions, headers: { ...requestOptions.headers, 'Service-Api-Key': apiKey } };
	}

	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.serviceUrl}}',
			url: '/health',
		},
		// n8n shows a rule's message instead of the bare status text, so each answer names the field to fix.
		rules: [
			{
				type: 'responseCode',
				properties: {
					value: 401,
					message:
						'This workload requires an API Key, and the one given is missing or wrong: its container group has authentication turned on, so fill in API Key with your GPU Cloud API key.',
				},
			},
			{
				type: 'responseCode',
				properties: {
					value: 404,
					message:
						'No GPU Cloud workload answers at this Service URL: use the access URL of the deployed container group, without a path.',
				},
			},
		],
	};
}
