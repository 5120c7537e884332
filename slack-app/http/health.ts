import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@slack/bolt';
import { errorSummary } from '../slack/errors';
import { within } from '../state/timeout';

/**
 * `GET /healthz` (the process is up and serving) and `GET /readyz` (it can do its job: every probe
 * passes and it is not shutting down). A load balancer or orchestrator sends traffic on readyz and
 * restarts on healthz. Probe results are kept a few seconds, so frequent polling costs Slack and the
 * service one call per probe per few seconds; the answer names each probe's state, never an error
 * text (the route is as public as the Slack one: details go to the log).
 */

export interface ReadinessProbe {
	/** Shown in /readyz (`slack`, `service`, later `store`). */
	name: string;
	/** Resolves when the dependency answers as it should; `signal` aborts after the probe timeout. */
	check(signal: AbortSignal): Promise<unknown>;
}

export interface HealthOptions {
	probes: ReadinessProbe[];
	logger: Logger;
	/** How long a probe result is reused. */
	cacheMs?: number;
	timeoutMs?: number;
	/** Numbers /readyz reports beside the checks, which do not decide readiness. */
	counts?: () => Record<string, number>;
}

interface Readiness {
	ready: boolean;
	checks: Record<string, 'ok' | 'failing'>;
}

export class Health {
	private draining = false;
	private last?: { at: number; result: Readiness };
	private running?: Promise<Readiness>;
	private readonly failing = new Set<string>();

	constructor(private readonly options: HealthOptions) {}

	/** From now on /readyz answers 503, whatever the probes say. */
	startDraining(): void {
		this.draining = true;
	}

	readonly healthz = (req: IncomingMessage, res: ServerResponse): void => {
		req.resume();
		reply(res, 200, { status: 'ok' });
	};

	readonly readyz = (req: IncomingMessage, res: ServerResponse): void => {
		req.resume();
		if (this.draining) return reply(res, 503, { status: 'draining' });
		this.readiness().then(
			(result) =>
				reply(res, result.ready ? 200 : 503, {
					status: result.ready ? 'ready' : 'not ready',
					checks: result.checks,
					...this.options.counts?.(),
				}),
			() => reply(res, 503, { status: 'not ready' }),
		);
	};

	/** Runs the probes at most once per cache period, however many callers ask at once. */
	readiness(): Promise<Readiness> {
		const cacheMs = this.options.cacheMs ?? 5000;
		if (this.last && Date.now() - this.last.at < cacheMs) return Promise.resolve(this.last.result);
		this.running ??= this.probe().finally(() => (this.running = undefined));
		return this.running;
	}

	private async probe(): Promise<Readiness> {
		const timeoutMs = this.options.timeoutMs ?? 5000;
		const outcomes = await Promise.all(
			this.options.probes.map(async (probe) => {
				try {
					// The signal lets a probe stop its own work; `within` answers even when it does not.
					await within(probe.check(AbortSignal.timeout(timeoutMs)), timeoutMs, probe.name);
					this.note(probe.name, undefined);
					return [probe.name, 'ok'] as const;
				} catch (error) {
					this.note(probe.name, error);
					return [probe.name, 'failing'] as const;
				}
			}),
		);
		const result: Readiness = {
			ready: outcomes.every(([, state]) => state === 'ok'),
			checks: Object.fromEntries(outcomes),
		};
		this.last = { at: Date.now(), result };
		return result;
	}

	/** Logs a probe's change of state once, not every poll. */
	private note(name: string, error: unknown): void {
		const { logger } = this.options;
		if (error === undefined) {
			if (this.failing.delete(name)) logger.info(`Readiness: ${name} is reachable again.`);
			return;
		}
		if (this.failing.has(name)) return;
		this.failing.add(name);
		logger.warn(`Readiness: ${name} check failed: ${errorSummary(error)}`);
	}
}

function reply(res: ServerResponse, status: number, body: object): void {
	res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
	res.end(JSON.stringify(body));
}
