import { z } from 'zod/v4';
import { randomUUID } from 'node:crypto';
import type { Clock } from '../shared/clock';
import {
	LIMITS,
	isHttpUrl,
	type CreateJobRequest,
	type Job,
	type JobEvent,
	type JobStatus,
} from '../shared/schemas';
import type { Endpoint, ProcessResult } from './endpoints/types';
import type { Faults } from './faults';
import type { FileStore } from './files';
import { downloadMedia, type DownloadOutcome, type MediaFile } from './media-download';
import type { WebhookSender } from './webhooks';

const inputFieldsSchema = z.record(z.string(), z.unknown());

/** A job is pending for this share of its duration, then running for the rest. */
const PENDING_SHARE = 0.25;
/** Interruptions per job are bounded so a job always finishes, whatever the fault rate. */
const MAX_INTERRUPTIONS = 3;

const WEBHOOK_TYPES = {
	succeeded: 'inference_endpoint.job.succeeded',
	failed: 'inference_endpoint.job.failed',
	cancelled: 'inference_endpoint.job.canceled',
} as const;

interface JobRecord {
	job: Job;
	endpoint: Endpoint;
	stop: AbortController;
	interruptions: number;
}

/** Appends an event, dropping the oldest after `created` once the list holds the maximum the API allows. */
export function appendEvent(events: JobEvent[], event: JobEvent): void {
	if (events.length >= LIMITS.jobEventsMax)
		events.splice(1, events.length - LIMITS.jobEventsMax + 1);
	events.push(event);
}

/** Captured deliveries carry each event's action under the key `type`; the emulator sends the same. */
function webhookData(job: Job): Record<string, unknown> {
	return { ...job, events: job.events.map((event) => ({ type: event.action, time: event.time })) };
}

interface JobStoreOptions {
	clock: Clock;
	faults: Faults;
	files: FileStore;
	webhooks: WebhookSender;
	organization: string;
	/** The organization's webhook secret: its jobs' deliveries are signed with it. */
	webhookSecret: string;
	duration: (endpoint: string, input: unknown) => number;
	/** Origins whose media is downloaded from another origin (a test's loopback file host). */
	mediaHosts: Readonly<Record<string, string>>;
	log: (line: string) => void;
	signal: AbortSignal;
}

export type CancelOutcome = 'cancelled' | 'already-cancelled' | 'finished';

/** Jobs and their clock-driven lifecycle: pending -> running -> succeeded | failed, or cancelled. */
export class JobStore {
	private readonly byId = new Map<string, JobRecord>();
	private readonly byEndpoint = new Map<string, JobRecord[]>();

	constructor(private readonly options: JobStoreOptions) {}

	private timestamp(): string {
		return new Date(this.options.clock.now()).toISOString();
	}

	create(endpoint: Endpoint, request: CreateJobRequest): Job {
		const now = this.timestamp();
		// Keys in the order the real API sends them; unset optional fields are left out, never null.
		const job: Job = {
			id: randomUUID(),
			inference_endpoint_name: endpoint.name,
			organization_name: this.options.organization,
			input: request.input,
			status: 'pending',
			events: [{ action: 'created', time: now }],
			create_time: now,
			update_time: now,
		};
		if (request.metadata !== undefined) job.metadata = request.metadata;
		if (request.webhook !== undefined) job.webhook = request.webhook;
		if (request.webhook_url !== undefined) job.webhook_url = request.webhook_url;
		const record: JobRecord = { job, endpoint, stop: new AbortController(), interruptions: 0 };
		this.byId.set(job.id, record);
		const list = this.byEndpoint.get(endpoint.name);
		if (list) list.push(record);
		else this.byEndpoint.set(endpoint.name, [record]);
		void this.run(record);
		return job;
	}

	get(endpointName: string, id: string): Job | undefined {
		const record = this.byId.get(id);
		return record && record.endpoint.name === endpointName ? record.job : undefined;
	}

	find(id: string): Job | undefined {
		return this.byId.get(id)?.job;
	}

	/** Every job of this store (one organization), oldest first. */
	all(): Job[] {
		return [...this.byId.values()].map((record) => record.job);
	}

	/** Newest first, as the real listing. */
	page(endpointName: string, page: number, pageSize: number): { items: Job[]; total: number } {
		const list = this.byEndpoint.get(endpointName) ?? [];
		const end = list.length - (page - 1) * pageSize;
		if (end <= 0) return { items: [], total: list.length };
		const items = list
			.slice(Math.max(0, end - pageSize), end)
			.reverse()
			.map((record) => record.job);
		return { items, total: list.length };
	}

	cancel(endpointName: string, id: string): CancelOutcome | undefined {
		const record = this.byId.get(id);
		if (!record || record.endpoint.name !== endpointName) return undefined;
		const status = record.job.status;
		if (status === 'cancelled') return 'already-cancelled';
		if (status === 'succeeded' || status === 'failed') return 'finished';
		record.stop.abort();
		this.finish(record, 'cancelled');
		return 'cancelled';
	}

	private transition(record: JobRecord, status: JobStatus, action?: string): void {
		const now = this.timestamp();
		record.job.status = status;
		record.job.update_time = now;
		if (action) appendEvent(record.job.events, { action, time: now });
		this.options.log(`job ${record.job.id} (${record.endpoint.name}) ${status}`);
	}

	private finish(
		record: JobRecord,
		status: 'succeeded' | 'failed' | 'cancelled',
		output?: unknown,
	): void {
		if (output !== undefined) record.job.output = output;
		this.transition(record, status, status);
		const url = record.job.webhook_url ?? record.job.webhook;
		if (url) {
			this.options.webhooks.send({
				url,
				type: WEBHOOK_TYPES[status],
				payload: {
					type: WEBHOOK_TYPES[status],
					timestamp: record.job.update_time,
					data: webhookData(record.job),
				},
				signed: true,
				jobId: record.job.id,
				maxAttempts: this.options.webhooks.maxAttempts,
				organization: this.options.organization,
				secret: this.options.webhookSecret,
			});
		}
	}

	/** An endpoint that throws fails its job instead of taking the emulator down. */
	private process(record: JobRecord, runningMs: number, media?: MediaFile): ProcessResult {
		try {
			return record.endpoint.run(record.job.input, {
				jobId: record.job.id,
				processingSeconds: runningMs / 1000,
				files: this.options.files,
				...(media ? { media } : {}),
			});
		} catch (error) {
			this.options.log(`job ${record.job.id} (${record.endpoint.name}) crashed: ${String(error)}`);
			return { ok: false, error: 'The endpoint failed while processing the job.' };
		}
	}

	private async run(record: JobRecord): Promise<void> {
		const { clock, faults } = this.options;
		const signal = AbortSignal.any([this.options.signal, record.stop.signal]);
		const total = Math.max(
			0,
			this.options.duration(record.endpoint.name, record.job.input) *
				record.endpoint.durationFactor,
		);
		const pendingMs = Math.round(total * PENDING_SHARE);
		const runningMs = total - pendingMs;
		try {
			await clock.sleep(pendingMs, signal);
			for (;;) {
				this.transition(record, 'running', 'started');
				if (record.interruptions < MAX_INTERRUPTIONS && faults.roll('interruption')) {
					// The node was lost part-way: the job waits for another node and starts again.
					record.interruptions++;
					await clock.sleep(Math.round(runningMs / 2), signal);
					this.transition(record, 'pending');
					await clock.sleep(pendingMs, signal);
					continue;
				}
				break;
			}
		} catch {
			// Cancelled or the emulator is closing; cancel() has already recorded the outcome.
			return;
		}
		// The file is read while the job runs; a file that cannot be read fails the job as soon as that is known.
		const startedAt = clock.now();
		const working = new AbortController();
		const running = clock.sleep(runningMs, AbortSignal.any([signal, working.signal]));
		running.catch(() => undefined);
		let media: MediaFile | undefined;
		try {
			const download = await this.download(record, signal);
			if (download && !download.ok) {
				working.abort();
				this.finish(record, 'failed', {
					error: download.error,
					duration: (clock.now() - startedAt) / 1000,
				});
				return;
			}
			media = download?.file;
			await running;
		} catch {
			return;
		}
		const result = this.process(record, runningMs, media);
		if (result.ok) this.finish(record, 'succeeded', result.output);
		else this.finish(record, 'failed', { error: result.error, duration: runningMs / 1000 });
	}

	/**
	 * Downloads the job's media file, as the service does before it works. Input the endpoint
	 * rejects is not downloaded for: the endpoint fails the job naming the field.
	 */
	private async download(
		record: JobRecord,
		signal: AbortSignal,
	): Promise<DownloadOutcome | undefined> {
		const [media] = record.endpoint.mediaFields;
		if (!media || !record.endpoint.accepts(record.job.input)) return undefined;
		const fields = inputFieldsSchema.safeParse(record.job.input);
		const url = fields.success ? fields.data[media.field] : undefined;
		if (typeof url !== 'string' || !isHttpUrl(url)) return undefined;
		return downloadMedia({
			media,
			url,
			expected: record.endpoint.mediaDescription,
			hosts: this.options.mediaHosts,
			clock: this.options.clock,
			faults: this.options.faults,
			signal,
		});
	}
}
