import type { IncomingMessage, ServerResponse } from 'node:http';
import type { webApi } from '@slack/bolt';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Transport } from '../../shared/transport';
import type { Health } from './health';
import { readWhole, slackRefusal } from '../slack/slack-client';

/**
 * Prometheus metrics of the app, served as `GET /metrics` beside /healthz and /readyz (and, like
 * them, for monitoring only: docs/deploy/nginx.conf lets only private addresses reach it). Each
 * metric is fed at one seam: the receiver (requests, ack latency), each Slack Web API client's
 * fetch (calls and errors by method), the GPU Cloud transport (its 429s), the job tracker (phase
 * changes) and the readiness probes (dependency availability). Labels hold Slack's and GPU Cloud's
 * names only (command, method, error code, team id, organization), never a value a person typed.
 */

const PREFIX = 'gpu_cloud_slack_';

export class Metrics {
	readonly registry = new Registry();

	private readonly requests = new Counter({
		name: `${PREFIX}requests_total`,
		help: 'Slack requests acknowledged, by kind (the slash command, or the payload type) and workspace.',
		labelNames: ['kind', 'team'] as const,
		registers: [this.registry],
	});

	private readonly ack = new Histogram({
		name: `${PREFIX}ack_duration_seconds`,
		help: 'From a Slack request arriving to its acknowledgement being sent (Slack gives up after 3 s).',
		labelNames: ['kind'] as const,
		buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3],
		registers: [this.registry],
	});

	private readonly jobPhases = new Counter({
		name: `${PREFIX}job_phase_changes_total`,
		help: 'Jobs entering a phase (following with the job status, delivering, delivered, abandoned), by workspace.',
		labelNames: ['phase', 'status', 'team'] as const,
		registers: [this.registry],
	});

	private readonly slackCalls = new Counter({
		name: `${PREFIX}slack_api_calls_total`,
		help: 'Slack Web API calls, by method.',
		labelNames: ['method'] as const,
		registers: [this.registry],
	});

	private readonly slackErrors = new Counter({
		name: `${PREFIX}slack_api_errors_total`,
		help: "Slack Web API calls that failed, by method and Slack's error (ratelimited, not_in_channel, http_502, no_answer...).",
		labelNames: ['method', 'error'] as const,
		registers: [this.registry],
	});

	private readonly serviceRateLimited = new Counter({
		name: `${PREFIX}service_rate_limited_total`,
		help: 'GPU Cloud answers 429 (the client waits Retry-After and retries), by organization.',
		labelNames: ['organization'] as const,
		registers: [this.registry],
	});

	private readonly fileDownloads = new Counter({
		name: `${PREFIX}file_downloads_total`,
		help: 'Downloads of files shared in Slack through the links the app serves to GPU Cloud, by outcome (served, refused, failed).',
		labelNames: ['outcome'] as const,
		registers: [this.registry],
	});

	constructor() {
		collectDefaultMetrics({ register: this.registry, prefix: PREFIX });
	}

	/**
	 * Reports the readiness probes' last answer (cached a few seconds by Health) as a gauge; called
	 * once the probes are known, which is after the clients these metrics count are built.
	 */
	reportReadiness(readiness: Health['readiness']): void {
		new Gauge({
			name: `${PREFIX}dependency_up`,
			help: 'Whether a dependency answers its readiness check (slack, service, installations, store): 1 or 0.',
			labelNames: ['dependency'] as const,
			registers: [this.registry],
			async collect() {
				const { checks } = await readiness();
				for (const [dependency, state] of Object.entries(checks))
					this.set({ dependency }, state === 'ok' ? 1 : 0);
			},
		});
	}

	/** The numbers /readyz reports beside its checks (`unreadable_workspaces`...), each a gauge. */
	reportCounts(counts: () => Record<string, number>): void {
		new Gauge({
			name: `${PREFIX}workspaces`,
			help: 'Workspaces by state, as /readyz counts them (unreadable: a stored row that did not open when read).',
			labelNames: ['state'] as const,
			registers: [this.registry],
			collect() {
				for (const [name, value] of Object.entries(counts()))
					this.set({ state: name.replace(/_workspaces$/, '') }, value);
			},
		});
	}

	/** `GET /metrics` in Prometheus' text format. */
	readonly route = (req: IncomingMessage, res: ServerResponse): void => {
		req.resume();
		this.registry.metrics().then(
			(text) => {
				res.writeHead(200, {
					'content-type': this.registry.contentType,
					'cache-control': 'no-store',
				});
				res.end(text);
			},
			() => res.writeHead(500).end(),
		);
	};

	/** A Slack request acknowledged `seconds` after it arrived. */
	acknowledged(kind: string, team: string, seconds: number): void {
		this.requests.inc({ kind, team });
		this.ack.observe({ kind }, seconds);
	}

	/** A download of a served file ended so (served, refused: no such link or its job ended, failed). */
	fileDownload(outcome: string): void {
		this.fileDownloads.inc({ outcome });
	}

	/** For JobTrackerOptions.onPhase: a job of `team` entered `phase`. */
	jobPhase(team: string): (phase: string, status?: string) => void {
		return (phase, status) => this.jobPhases.inc({ phase, status: status ?? '', team });
	}

	/** Wraps a Slack client's fetch: each call counted by method, failures by Slack's error. */
	slackFetch(inner: webApi.FetchFunction): webApi.FetchFunction {
		return async (url, init) => {
			const method = new URL(url).pathname.split('/').pop() ?? '';
			this.slackCalls.inc({ method });
			let response: Awaited<ReturnType<webApi.FetchFunction>>;
			let text: string;
			try {
				response = await inner(url, init);
				({ text, copy: response } = await readWhole(response));
			} catch (error) {
				this.slackErrors.inc({ method, error: 'no_answer' });
				throw error;
			}
			const error =
				response.status === 429
					? 'ratelimited'
					: response.status !== 200
						? `http_${response.status}`
						: slackRefusal(text)?.error;
			if (error) this.slackErrors.inc({ method, error });
			// The body is read once here; the client reads the copy.
			return response;
		};
	}

	/** Wraps the GPU Cloud transport of one organization's clients: its 429s counted. */
	serviceTransport(inner: Transport, organization: string): Transport {
		const seen = (status: number) => {
			if (status === 429) this.serviceRateLimited.inc({ organization });
		};
		return {
			send: async (request) => {
				const response = await inner.send(request);
				seen(response.status);
				return response;
			},
			stream: inner.stream
				? async (request) => {
						const response = await (inner.stream ?? unreachable)(request);
						seen(response.status);
						return response;
					}
				: undefined,
		};
	}
}

/** Slack's `error` of an `ok: false` answer (Slack's error codes are short snake_case words). */
function unreachable(): never {
	throw new Error('The transport has no stream().');
}
