import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import type { Clock } from '../shared/clock';
import { signWebhook } from '../shared/webhooks';
import type { Faults } from './faults';

export interface DeliveryAttempt {
	url: string;
	/** The payload's `type` (or legacy `event`), e.g. `inference_endpoint.job.succeeded`, `prompt.complete`. */
	type: string;
	/** The idempotency key, the same on every attempt of one delivery; absent on unsigned legacy posts. */
	webhookId?: string;
	/** The job (or image prompt) the delivery reports on. */
	jobId?: string;
	/** The organization whose secret signed it (jobs of the management API). */
	organization?: string;
	/** 1 for the first try. */
	attempt: number;
	signed: boolean;
	/** The receiver's status, when it answered. */
	status?: number;
	/** Why the attempt failed without a status (connection error, injected fault). */
	error?: string;
	/** Whether the receiver took it (2xx). */
	ok: boolean;
	time: number;
}

export interface Delivery {
	url: string;
	type: string;
	payload: unknown;
	/** Signed deliveries carry Standard Webhooks headers made with the organization secret. */
	signed: boolean;
	webhookId?: string;
	jobId?: string;
	maxAttempts: number;
	/** The organization the job belongs to, and its webhook secret (default: the first organization's). */
	organization?: string;
	secret?: string;
}

const ATTEMPT_TIMEOUT_MS = 10_000;

/** The error code (ECONNREFUSED, UND_ERR_...) when there is one; checked structurally, as errors may come from another realm. */
function describeFailure(error: unknown): string {
	if (typeof error === 'object' && error !== null) {
		if ('code' in error && typeof error.code === 'string') return error.code;
		if ('message' in error && typeof error.message === 'string') return error.message;
	}
	return String(error);
}

interface SenderOptions {
	clock: Clock;
	faults: Faults;
	secret: string;
	retryDelaysMs: readonly number[];
	log: (line: string) => void;
	signal: AbortSignal;
}

/** Delivers webhooks with bounded retries and backoff, recording every attempt. */
export class WebhookSender {
	readonly attempts: DeliveryAttempt[] = [];
	private readonly agent = new Agent({ connections: 16, keepAliveTimeout: 4_000 });
	private readonly inFlight = new Set<Promise<void>>();

	constructor(private readonly options: SenderOptions) {}

	get maxAttempts(): number {
		return this.options.retryDelaysMs.length + 1;
	}

	/** Fire and forget: the caller's reply never waits for the receiver. */
	send(delivery: Delivery): void {
		const run = this.run(delivery).finally(() => this.inFlight.delete(run));
		this.inFlight.add(run);
	}

	/** Resolves when every delivery under way has finished (or given up). */
	async idle(): Promise<void> {
		while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
	}

	async close(): Promise<void> {
		await this.idle();
		await this.agent.close();
	}

	private async run(delivery: Delivery): Promise<void> {
		const { clock, signal, log } = this.options;
		const body = JSON.stringify(delivery.payload);
		const webhookId = delivery.signed
			? (delivery.webhookId ?? `msg_${randomUUID()}`)
			: delivery.webhookId;
		const attempts = Math.max(1, Math.min(delivery.maxAttempts, this.maxAttempts));
		for (let attempt = 1; attempt <= attempts && !signal.aborted; attempt++) {
			const record = await this.attempt(delivery, body, webhookId, attempt);
			this.attempts.push(record);
			log(
				`webhook ${delivery.type} -> ${delivery.url} attempt ${attempt}/${attempts}: ${record.ok ? 'delivered' : 'failed'} (${record.status ?? record.error})`,
			);
			if (record.ok) return;
			const pause = this.options.retryDelaysMs[attempt - 1];
			if (attempt < attempts && pause !== undefined) {
				try {
					await clock.sleep(pause, signal);
				} catch {
					return;
				}
			}
		}
	}

	private async attempt(
		delivery: Delivery,
		body: string,
		webhookId: string | undefined,
		attempt: number,
	): Promise<DeliveryAttempt> {
		const { clock, faults, signal } = this.options;
		const secret = delivery.secret ?? this.options.secret;
		const base: Omit<DeliveryAttempt, 'ok' | 'time'> = {
			url: delivery.url,
			type: delivery.type,
			webhookId,
			jobId: delivery.jobId,
			attempt,
			signed: delivery.signed,
		};
		if (delivery.organization !== undefined) base.organization = delivery.organization;
		if (faults.roll('webhook-failure')) {
			return { ...base, ok: false, error: 'injected webhook failure', time: clock.now() };
		}
		const headers: Record<string, string> = {
			'content-type': 'application/json',
			'user-agent': 'gpu-cloud-emulator/0.1',
		};
		if (delivery.signed && webhookId) {
			Object.assign(
				headers,
				signWebhook(secret, body, { id: webhookId, timestampSeconds: clock.now() / 1000 }).headers,
			);
		}
		try {
			const response = await request(delivery.url, {
				method: 'POST',
				headers,
				body,
				dispatcher: this.agent,
				signal: AbortSignal.any([signal, AbortSignal.timeout(ATTEMPT_TIMEOUT_MS)]),
				headersTimeout: ATTEMPT_TIMEOUT_MS,
				bodyTimeout: ATTEMPT_TIMEOUT_MS,
			});
			await response.body.dump();
			const ok = response.statusCode >= 200 && response.statusCode < 300;
			return { ...base, ok, status: response.statusCode, time: clock.now() };
		} catch (error) {
			return { ...base, ok: false, error: describeFailure(error), time: clock.now() };
		}
	}
}
