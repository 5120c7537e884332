import type {
	IAuthenticateGeneric,
	IAuthenticateRuleResponseCode,
	IAuthenticateRuleResponseSuccessBody,
	ICredentialTestRequest,
	ICredentialType,
	Icon,
	INodeProperties,
} from 'n8n-workflow';

/**
 * The credential test's answers, each naming the field to fix (n8n shows a rule's message instead of
 * the bare status text). n8n's typings allow rules of one kind per list, but its credential tester
 * (packages/cli/src/services/credentials-tester.service.ts, the same in 2.8.4 and 2.41.3) reads
 * every rule by its own `type`: `responseCode` rules for a refused request, `responseSuccessBody`
 * rules for a 200. Hence the one cast, to the list type the tester accepts.
 */
const RULES = [
	{
		type: 'responseCode',
		properties: {
			value: 401,
			message:
				'GPU Cloud refused the API Key: copy it again from the API Access area of your GPU Cloud account profile.',
		},
	},
	{
		type: 'responseCode',
		properties: {
			value: 403,
			message:
				'This API Key is not a member of the Organization Name: check the name as the portal URL shows it, or use a key of a member of that organization.',
		},
	},
	{
		type: 'responseCode',
		properties: {
			value: 404,
			message:
				'GPU Cloud has no such path: check API Base URL (the public API root, ending in /api/public) and Organization Name.',
		},
	},
	{
		// A 200 without the list's "items" (a web page, another API) is not GPU Cloud's API.
		type: 'responseSuccessBody',
		properties: {
			key: 'items',
			value: undefined,
			message:
				'The API Base URL answers, but not as the GPU Cloud API: check API Base URL (the public API root, ending in /api/public).',
		},
	},
] satisfies Array<
	IAuthenticateRuleResponseCode | IAuthenticateRuleResponseSuccessBody
> as ICredentialTestRequest['rules'];

/** The management API: jobs, the endpoint catalogue, queues and the webhook secret. */
export class GpuCloudApi implements ICredentialType {
	name = 'gpuCloudApi';

	displayName = 'GPU Cloud API';

	icon: Icon = { light: 'file:gpuCloud.svg', dark: 'file:gpuCloud.dark.svg' };

	documentationUrl = 'https://www.npmjs.com/package/n8n-nodes-gpu-cloud#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description: 'The key from the API Access area of your GPU Cloud account profile',
		},
		{
			displayName: 'API Base URL',
			name: 'baseUrl',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'https://api.example.com/api/public',
			description: 'The public API root of your GPU Cloud account, ending in /api/public',
		},
		{
			displayName: 'Organization Name',
			name: 'organizationName',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'e.g. acme-research',
			hint: '2-63 lower-case letters, digits or hyphens, as shown in the portal URL',
		},
		{
			displayName: 'Default Project',
			name: 'defaultProject',
			type: 'string',
			default: '',
			placeholder: 'e.g. default',
			description:
				'Used by operations that need a project (such as creating a queue) when the node does not name one',
		},
		{
			displayName: 'Requests per Minute',
			name: 'requestsPerMinute',
			type: 'number',
			typeOptions: { minValue: 1, numberPrecision: 0 },
			default: 240,
			description:
				'How many management requests this n8n process may send per minute with this key. The service allows 240 per key; raise it only if your plan allows more. Every workflow in one process shares this budget. In queue mode each worker and webhook processor has its own: when the service answers 429 a process waits out Retry-After and slows down, so together they settle at the limit. To avoid 429s entirely, divide the limit between them (240 with 3 workers: 80 each), at the price of budget left idle when some workers are.',
		},
	];

	authenticate: IAuthenticateGeneric = {
		type: 'generic',
		properties: {
			headers: {
				'Service-Api-Key': '={{$credentials.apiKey}}',
			},
		},
	};

	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.baseUrl}}',
			url: '=/organizations/{{$credentials.organizationName}}/inference-endpoints',
			qs: { page: 1, page_size: 1 },
		},
		rules: RULES,
	};
}
