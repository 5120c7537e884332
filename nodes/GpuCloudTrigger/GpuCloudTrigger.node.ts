import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeConnectionTypes, NodeOperationError } from 'n8n-workflow';
import {
	ValidationError,
	WebhookVerificationError,
	parseJobWebhook,
	webhookOutcome,
	type JobWebhookPayload,
} from '../../shared';
import { checkName } from '../GpuCloud/helpers/parameters';
import { DeliveryRecord, firstRuns } from './deliveries';
import { EVENTS, jobItem } from './job-item';
import { managementClient } from '../GpuCloud/transport';
import { nothingToRegister } from '../GpuCloud/webhook/lifecycle';
import {
	organizationSecret,
	pastedSecret,
	rawBodyOf,
	refuse,
	secretCacheKey,
	verifyDelivery,
	type SecretSource,
} from '../GpuCloud/webhook/verification';

const records = new Map<string, DeliveryRecord>();

/** Whether this delivery id is new to the trigger node, in any n8n process (see DeliveryRecord). */
function firstDelivery(context: IWebhookFunctions, deliveryId: string): boolean {
	const key = `${context.getWorkflow().id ?? ''}:${context.getNode().id}`;
	let record = records.get(key);
	if (!record) {
		record = new DeliveryRecord();
		records.set(key, record);
	}
	return record.firstDelivery(
		context.getWorkflowStaticData('node'),
		deliveryId,
		Math.floor(Date.now() / 1000),
	);
}

export class GpuCloudTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'GPU Cloud Trigger',
		name: 'gpuCloudTrigger',
		icon: { light: 'file:gpuCloud.svg', dark: 'file:gpuCloud.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle: '=Jobs: {{ $parameter["events"].join(", ") }}',
		// n8n's node panel lists this trigger inside GPU Cloud's item and shows this sentence for it, also
		// where a user looks for the actions: so it names both.
		description:
			'Run inference jobs, transcribe audio, generate images and chat on GPU Cloud, or start the workflow when a job ends',
		defaults: { name: 'GPU Cloud Trigger' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [
			{
				name: 'gpuCloudApi',
				required: true,
				displayOptions: { show: { verification: ['credential'] } },
			},
		],
		webhooks: [
			{ name: 'default', httpMethod: 'POST', responseMode: 'onReceived', path: 'job-events' },
		],
		properties: [
			{
				displayName:
					'Copy this node\'s Production URL (under "Webhook URLs" above) into the webhook URL of your jobs, for example the "Webhook URL" option of the GPU Cloud node\'s Job > Create. GPU Cloud then reports here each time one of those jobs ends. If GPU Cloud cannot reach this n8n, use the GPU Cloud Poll Trigger instead.',
				name: 'setupNotice',
				type: 'notice',
				default: '',
			},
			{
				displayName: 'Signature Check',
				name: 'verification',
				type: 'options',
				noDataExpression: true,
				options: [
					{
						name: 'Using the Credential',
						value: 'credential',
						description:
							"Fetch your organization's webhook secret with the GPU Cloud API credential",
					},
					{
						name: 'Using a Pasted Secret',
						value: 'secret',
						description: "Paste your organization's webhook secret",
					},
					{
						name: 'Off (Not Recommended)',
						value: 'off',
						description:
							'Accept any request to this URL, signed or not: anyone who knows the URL can start the workflow',
					},
				],
				default: 'credential',
				description:
					'How to make sure a request really comes from GPU Cloud. Unsigned, tampered or older than 5 minutes requests are refused.',
			},
			{
				displayName: 'Webhook Secret',
				name: 'webhookSecret',
				type: 'string',
				typeOptions: { password: true },
				default: '',
				required: true,
				placeholder: 'e.g. whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
				displayOptions: { show: { verification: ['secret'] } },
				description:
					"Your organization's webhook signing secret (base64, with or without the whsec_ prefix)",
			},
			{
				displayName: 'Events',
				name: 'events',
				type: 'multiOptions',
				options: EVENTS,
				default: ['succeeded', 'failed', 'cancelled'],
				required: true,
				description: 'Which job endings start the workflow',
			},
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				placeholder: 'Add option',
				default: {},
				options: [
					{
						displayName: 'Only Endpoints',
						name: 'endpoints',
						type: 'string',
						default: '',
						placeholder: 'e.g. transcribe, summarize',
						description:
							'Comma-separated endpoint names; jobs of other endpoints are ignored. Leave empty for all.',
					},
				],
			},
		],
	};

	webhookMethods = { default: nothingToRegister };

	/**
	 * Runs first in each execution the webhook started (n8n runs a webhook node's `execute` with what
	 * `webhook()` returned): drops a repeated delivery the webhook method could not recognise, using
	 * n8n's database-backed de-duplication, which only executions can reach.
	 */
	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return [await firstRuns(this, this.getInputData())];
	}

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		const verification = this.getNodeParameter('verification', 'credential');
		const events = this.getNodeParameter('events', []);
		const endpointsOption = this.getNodeParameter('options.endpoints', '');
		let endpoints: string[];
		try {
			endpoints =
				typeof endpointsOption === 'string' && endpointsOption.trim() !== ''
					? endpointsOption.split(',').map((name) => checkName(name, 'Only Endpoints'))
					: [];
		} catch (error) {
			throw new NodeOperationError(
				this.getNode(),
				error instanceof Error ? error.message : String(error),
			);
		}

		let payload: JobWebhookPayload;
		let webhookId: string | undefined;
		try {
			const rawBody = await rawBodyOf(this);
			if (verification !== 'off') {
				let source: SecretSource;
				if (verification === 'secret') {
					source = pastedSecret(this.getNodeParameter('webhookSecret', ''));
				} else {
					const { client, credentials } = await managementClient(this);
					source = organizationSecret(client, secretCacheKey(credentials));
				}
				webhookId = (await verifyDelivery(this, rawBody, source)).id;
			}
			payload = parseJobWebhook(rawBody);
		} catch (error) {
			if (error instanceof WebhookVerificationError)
				return refuse(this, error.reason === 'bad-payload' ? 400 : 401, error.message);
			if (error instanceof ValidationError) return refuse(this, 400, error.message);
			throw new NodeOperationError(
				this.getNode(),
				error instanceof Error ? error.message : String(error),
			);
		}

		const deliveryId = webhookId ?? headerValue(this.getHeaderData()['webhook-id']);
		const outcome = webhookOutcome(payload.type);
		if (!outcome || !Array.isArray(events) || !events.includes(outcome)) {
			return {
				webhookResponse: { received: true, ignored: `event ${payload.type} is not selected` },
			};
		}
		if (endpoints.length > 0 && !endpoints.includes(payload.data.inference_endpoint_name)) {
			return {
				webhookResponse: {
					received: true,
					ignored: `endpoint ${payload.data.inference_endpoint_name} is not selected`,
				},
			};
		}
		if (deliveryId && !firstDelivery(this, deliveryId))
			return { webhookResponse: { received: true, duplicate: true } };
		return {
			workflowData: [
				this.helpers.returnJsonArray(
					jobItem(payload.data, {
						event: payload.type,
						reportedAt: payload.timestamp,
						webhookId: deliveryId,
					}),
				),
			],
			webhookResponse: { received: true },
		};
	}
}

function headerValue(value: string | string[] | undefined): string | undefined {
	return Array.isArray(value) ? value[0] : value;
}
