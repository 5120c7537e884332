import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { z } from 'zod/v4';
import {
	ValidationError,
	WebhookVerificationError,
	isTerminalStatus,
	mapWithConcurrency,
	parseJobWebhook,
	requireSucceeded,
	resourceNameSchema,
	uuidSchema,
	webhookUrlSchema,
	type CreateJobRequest,
	type Job,
	type ManagementClient,
} from '../../../shared';
import { managementClient } from '../transport';
import {
	organizationSecret,
	rawBodyOf,
	refuse,
	secretCacheKey,
	verifyDelivery,
} from '../webhook/verification';
import { toNodeError } from './errors';
import { inputSchemaCheck } from './input-schema';
import { jsonResult, runItems, type ItemResult, type ItemWork } from './items';
import type { MediaFiles } from './media-files';
import { check, readTimeoutMs } from './parameters';

export type FailurePolicy = 'error' | 'output';

export interface WaitSettings {
	mode: 'poll' | 'webhook';
	timeoutMs: number;
	onFailure: FailurePolicy;
}

const waitModeSchema = z.enum(['poll', 'webhook']);
const failurePolicySchema = z.enum(['error', 'output']);

export function readWaitSettings(
	context: IExecuteFunctions,
	itemIndex: number,
	withWebhookMode: boolean,
): WaitSettings {
	return {
		mode: withWebhookMode
			? check(waitModeSchema, context.getNodeParameter('waitMode', itemIndex, 'poll'), 'Wait Mode')
			: 'poll',
		timeoutMs: readTimeoutMs(context, 'timeoutMinutes', itemIndex),
		onFailure: check(
			failurePolicySchema,
			context.getNodeParameter('onJobFailure', itemIndex, 'error'),
			'On Failed or Cancelled Job',
		),
	};
}

/** The job as the item's output, or the error a failed or cancelled job becomes. */
export function finish(job: Job, onFailure: FailurePolicy): Job {
	return onFailure === 'error' ? requireSucceeded(job) : job;
}

export interface JobToRun {
	endpoint: string;
	request: CreateJobRequest;
	/** The input as the endpoint's fields, made into `request.input` by the input-schema check. */
	fields?: Record<string, unknown>;
	wait: WaitSettings;
	/** Keys of files put in the user's bucket for this job alone, to delete once it has ended. */
	uploadedObjects?: string[];
	/** Files for media fields, uploaded just before the job is created. */
	mediaFiles?: MediaFiles;
}

/** Uploads the item's files for its media fields; the keys of every file of the job. */
export async function attachFiles(
	job: Pick<JobToRun, 'request' | 'mediaFiles' | 'uploadedObjects'>,
): Promise<string[]> {
	const attached = job.mediaFiles ? await job.mediaFiles.attach(job.request) : [];
	return [...(job.uploadedObjects ?? []), ...attached];
}

/**
 * Create-and-wait for every item. Polling runs per item with bounded concurrency; webhook mode
 * creates every job and pauses the execution until GPU Cloud has reported the last one created
 * (see `resumeOnJobWebhook`).
 */
export async function createAndWaitForJobs(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	concurrency: number,
	prepare: (itemIndex: number) => JobToRun | Promise<JobToRun>,
	format: (job: Job) => IDataObject,
): Promise<INodeExecutionData[]> {
	const { client } = await managementClient(context);
	const check = inputSchemaCheck(context, client);
	const webhookMode =
		items.length > 0 && context.getNodeParameter('waitMode', 0, 'poll') === 'webhook';
	if (webhookMode)
		return await createJobsAndPause(
			context,
			items,
			concurrency,
			client,
			{ prepare, check },
			format,
		);
	return await runItems(context, items, concurrency, {
		prepare,
		check,
		run: async (prepared, _index, signal, jobs) => {
			const { endpoint, request, wait } = prepared;
			await attachFiles(prepared);
			const job = await client.jobs.createAndWait(endpoint, request, {
				createSignal: jobs.createSignal,
				onCreated: (created) => jobs.jobCreated(created.id),
				timeoutMs: wait.timeoutMs,
				signal,
			});
			return jsonResult(format(finish(job, wait.onFailure)));
		},
	});
}

/** What a paused execution keeps for each input item: the job to hear about, or why there is none. */
const pendingJobSchema = z.looseObject({
	id: uuidSchema,
	inference_endpoint_name: resourceNameSchema,
	waitDeadline: z.iso.datetime().optional(),
	uploadedObjects: z.array(z.string()).optional(),
});
const failedItemSchema = z.looseObject({ error: z.string() });
const pendingBatchSchema = z.array(z.union([pendingJobSchema, failedItemSchema]));

async function createJobsAndPause(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	concurrency: number,
	client: ManagementClient,
	{ prepare, check }: Pick<ItemWork<JobToRun>, 'prepare' | 'check'>,
	format: (job: Job) => IDataObject,
): Promise<INodeExecutionData[]> {
	const resumeUrl = context.evaluateExpression('{{ $execution.resumeUrl }}', 0);
	const webhookUrl = webhookUrlSchema.safeParse(resumeUrl);
	if (!webhookUrl.success) {
		throw new ValidationError([
			{
				field: 'Wait Mode',
				rule: 'needs the execution\'s resume URL, which n8n did not provide; use "Poll"',
			},
		]);
	}
	let timeoutMs = 0;
	let onFailure: FailurePolicy = 'error';
	// n8n resumes a waiting execution once: a report after that is refused (500 while it resumes, 409
	// after), and GPU Cloud counts it as a failed delivery. So one job, the last created and likely
	// the last to end, carries the resume URL; the others are read when it reports.
	const carrier = items.length - 1;
	const created = await runItems(context, items, concurrency, {
		prepare: async (index) => {
			const job = await prepare(index);
			timeoutMs = Math.max(timeoutMs, job.wait.timeoutMs);
			onFailure = job.wait.onFailure;
			return job;
		},
		check,
		run: async (prepared, index, _signal, jobs): Promise<ItemResult> => {
			const { endpoint, request } = prepared;
			const uploadedObjects = await attachFiles(prepared);
			const job = await client.jobs.create(
				endpoint,
				index === carrier ? { ...request, webhook_url: webhookUrl.data } : request,
				{ signal: jobs.createSignal },
			);
			jobs.jobCreated(job.id);
			return [
				{
					json: {
						id: job.id,
						inference_endpoint_name: job.inference_endpoint_name,
						status: job.status,
						// Kept with the paused execution, so the resumed node can delete the file.
						...(uploadedObjects.length === 0 ? {} : { uploadedObjects }),
					},
				},
			];
		},
	});

	// A job can end before the execution is saved as waiting; its report would then be refused.
	// One look before pausing returns at once when everything has already ended. It is only a
	// shortcut: if the look fails, pausing is still right.
	const ended = await readJobs(client, created).catch(() => undefined);
	if (ended) {
		return await runItems(context, created, concurrency, {
			prepare: (index) => created[index].json,
			run: async (entry) => {
				const job = ended.get(String(entry.id));
				return jsonResult(job ? format(finish(job, onFailure)) : entry);
			},
		});
	}

	const deadline = new Date(Date.now() + timeoutMs);
	if (typeof created[carrier]?.json.error === 'string') {
		// No job carries the resume URL: wait here, by polling, for the ones that were created.
		return await runItems(context, created, concurrency, {
			prepare: (index) => created[index].json,
			run: async (entry, _index, signal) => {
				const parsed = pendingJobSchema.safeParse(entry);
				if (!parsed.success) return jsonResult(entry);
				const job = await client.jobs.wait(parsed.data.inference_endpoint_name, parsed.data.id, {
					timeoutMs: Math.max(0, deadline.getTime() - Date.now()),
					signal,
				});
				return jsonResult(format(finish(job, onFailure)));
			},
		});
	}
	const pending = created.map((item): INodeExecutionData => {
		if (typeof item.json.error === 'string') return item;
		return {
			json: {
				...item.json,
				waitDeadline: deadline.toISOString(),
				waitTimedOut: true,
				message: `GPU Cloud had not reported the end of this job by ${deadline.toISOString()}. It may still finish: read it with the "Get" operation.`,
			},
			pairedItem: item.pairedItem,
		};
	});
	// n8n resumes a paused node by passing its input on (with what `webhook()` returned in its place).
	// Making that input the list of jobs lets `webhook()` find them, and lets the workflow go on with
	// the job IDs, marked as timed out, if GPU Cloud never reports back before the deadline.
	context.getExecuteData().data.main = [pending];
	await context.putExecutionToWait(deadline);
	return pending;
}

/** Every job read at once when all have ended; undefined as soon as one is still running. */
async function readJobs(
	client: ManagementClient,
	created: INodeExecutionData[],
): Promise<Map<string, Job> | undefined> {
	const ids = created.flatMap((item) => {
		const parsed = pendingJobSchema.safeParse(item.json);
		return parsed.success ? [parsed.data] : [];
	});
	const jobs = new Map<string, Job>();
	for (const entry of ids) {
		const job = await client.jobs.get(entry.inference_endpoint_name, entry.id);
		if (!isTerminalStatus(job.status)) return undefined;
		jobs.set(job.id, job);
	}
	return jobs;
}

type BatchEntry = { job: z.infer<typeof pendingJobSchema> } | { error: string };

/** The jobs a paused execution waits for, as `createJobsAndPause` left them, in input order. */
function pendingBatch(context: IWebhookFunctions): BatchEntry[] {
	const serialized = context.evaluateExpression(
		'{{ JSON.stringify($input.all().map((item) => item.json)) }}',
		0,
	);
	const parsed =
		typeof serialized === 'string'
			? pendingBatchSchema.safeParse(JSON.parse(serialized))
			: undefined;
	if (!parsed?.success)
		throw new ValidationError([{ field: 'execution', rule: 'is not waiting for GPU Cloud jobs' }]);
	return parsed.data.map((entry) => {
		const job = pendingJobSchema.safeParse(entry);
		return job.success ? { job: job.data } : { error: String(entry.error) };
	});
}

/** Jobs read at once while the others are waited for. */
const LOOK_GROUP = 8;
/** Waiting for the others stops this long before the execution's own deadline, which then resumes it. */
const DEADLINE_MARGIN_MS = 5_000;

/**
 * Handles GPU Cloud's report that a job of a paused execution ended (the job that carries the
 * resume URL; older executions gave it to every job). Checks the signature over the raw body.
 * When every other job has ended too, the execution resumes at once. Otherwise the report is
 * answered first (so GPU Cloud records it delivered), the others are waited for by polling, and
 * the execution resumes when they have all ended; should the deadline come first, n8n resumes it
 * with the jobs marked as timed out. The resumed node outputs every job in input order.
 */
export async function resumeOnJobWebhook(
	context: IWebhookFunctions,
	format: (job: Job) => IDataObject,
	/** Runs once every job has ended, with the files uploaded for them (see JobToRun.uploadedObjects). */
	onAllEnded: (uploadedObjects: string[]) => Promise<void> = async () => {},
): Promise<IWebhookResponseData> {
	const { client, credentials } = await managementClient(context);
	let job: Job;
	let batch: BatchEntry[];
	try {
		const rawBody = await rawBodyOf(context);
		await verifyDelivery(context, rawBody, organizationSecret(client, secretCacheKey(credentials)));
		job = parseJobWebhook(rawBody).data;
		batch = pendingBatch(context);
	} catch (error) {
		if (error instanceof WebhookVerificationError)
			return refuse(context, error.reason === 'bad-payload' ? 400 : 401, error.message);
		if (error instanceof ValidationError) return refuse(context, 400, error.message);
		throw toNodeError(context.getNode(), error, 0);
	}
	if (!batch.some((entry) => 'job' in entry && entry.job.id === job.id)) {
		return {
			webhookResponse: {
				received: true,
				resumed: false,
				reason: 'The job is not one this execution waits for.',
			},
		};
	}
	if (!isTerminalStatus(job.status)) {
		return {
			webhookResponse: { received: true, resumed: false, reason: 'The job has not ended yet.' },
		};
	}

	const jobs = new Map<string, Job>([[job.id, job]]);
	const others = batch.flatMap((entry) =>
		'job' in entry && entry.job.id !== job.id ? [entry.job] : [],
	);
	const running: Array<z.infer<typeof pendingJobSchema>> = [];
	const read = await mapWithConcurrency(others, LOOK_GROUP, (entry) =>
		client.jobs.get(entry.inference_endpoint_name, entry.id),
	);
	for (const [index, result] of read.entries()) {
		if (!result.ok) throw toNodeError(context.getNode(), result.error, 0);
		if (isTerminalStatus(result.value.status)) jobs.set(result.value.id, result.value);
		else running.push(others[index]);
	}
	const output = () =>
		batch.map((entry, index): INodeExecutionData => {
			const ended = 'job' in entry ? jobs.get(entry.job.id) : undefined;
			return {
				json: ended
					? format(ended)
					: { error: 'error' in entry ? entry.error : 'The job could not be read.' },
				pairedItem: { item: index },
			};
		});
	const uploadedObjects = batch.flatMap((entry) =>
		'job' in entry ? (entry.job.uploadedObjects ?? []) : [],
	);
	if (running.length === 0) {
		await onAllEnded(uploadedObjects);
		return { workflowData: [output()], webhookResponse: { received: true, resumed: true } };
	}

	const deadline = Math.min(
		...running.map((entry) =>
			entry.waitDeadline ? Date.parse(entry.waitDeadline) : Number.POSITIVE_INFINITY,
		),
	);
	const timeoutMs = Number.isFinite(deadline)
		? deadline - Date.now() - DEADLINE_MARGIN_MS
		: undefined;
	context
		.getResponseObject()
		.status(200)
		.json({
			received: true,
			resumed: false,
			reason: `Waiting for ${running.length} other job(s) of this execution.`,
		});
	if (timeoutMs !== undefined && timeoutMs <= 0) return { noWebhookResponse: true };
	const waited = await mapWithConcurrency(running, LOOK_GROUP, (entry) =>
		client.jobs.wait(entry.inference_endpoint_name, entry.id, { timeoutMs }),
	);
	for (const result of waited) {
		// Not ended before the deadline, or unreadable: n8n's deadline resumes the execution instead.
		if (!result.ok) return { noWebhookResponse: true };
		jobs.set(result.value.id, result.value);
	}
	await onAllEnded(uploadedObjects);
	return { noWebhookResponse: true, workflowData: [output()] };
}
