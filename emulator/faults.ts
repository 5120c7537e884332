import {
	faultSettingsSchema,
	type FaultOptions,
	type FaultSettings,
	type FaultSurface,
	type RequestFaultKind,
} from './options';
import { prng } from './prng';

export type FaultKind =
	| RequestFaultKind
	| 'webhook-failure'
	| 'interruption'
	| 'download-slow'
	| 'download-cut';

const RATE_OF: Record<FaultKind, keyof FaultSettings> = {
	error: 'errorRate',
	'rate-limit': 'rateLimitRate',
	'html-error': 'htmlErrorRate',
	reset: 'resetRate',
	malformed: 'malformedRate',
	'webhook-failure': 'webhookFailureRate',
	interruption: 'interruptionRate',
	'stream-error': 'streamErrorRate',
	// Later kinds last: each kind's stream is seeded by its place here, so older ones keep theirs.
	'gateway-timeout': 'gatewayTimeoutRate',
	drop: 'dropRate',
	hang: 'hangRate',
	stall: 'stallRate',
	'stream-cut': 'streamCutRate',
	'download-slow': 'downloadSlowRate',
	'download-cut': 'downloadCutRate',
};
const KINDS = Object.keys(RATE_OF) as FaultKind[];

/**
 * Decides which requests, deliveries and jobs a fault hits. Each kind draws from its own seeded
 * stream, so turning one fault on never changes where another one lands.
 */
export class Faults {
	private settings: FaultSettings;
	private streams = new Map<FaultKind, () => number>();
	private surfaces = new Set<FaultSurface>();
	/** False when nothing is configured: the hot path skips fault handling entirely. */
	private anyRequestFault = false;

	constructor(settings: FaultSettings) {
		this.settings = settings;
		this.reseed();
	}

	get current(): Readonly<FaultSettings> {
		return this.settings;
	}

	update(partial: FaultOptions): void {
		const result = faultSettingsSchema.safeParse({ ...this.settings, ...partial });
		if (!result.success) {
			throw new TypeError(
				`Invalid faults: ${result.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`).join('; ')}`,
			);
		}
		const merged = result.data;
		const reseed = partial.seed !== undefined;
		this.settings = merged;
		if (reseed) this.reseed();
		this.refresh();
	}

	private reseed(): void {
		KINDS.forEach((kind, index) =>
			this.streams.set(kind, prng(this.settings.seed * 31 + index + 1)),
		);
		this.refresh();
	}

	private refresh(): void {
		const s = this.settings;
		this.surfaces = new Set(s.surfaces);
		this.anyRequestFault =
			s.latencyMs > 0 ||
			s.errorRate > 0 ||
			s.rateLimitRate > 0 ||
			s.htmlErrorRate > 0 ||
			s.gatewayTimeoutRate > 0 ||
			s.dropRate > 0 ||
			s.hangRate > 0 ||
			s.resetRate > 0 ||
			s.malformedRate > 0 ||
			s.stallRate > 0 ||
			s.sequence.length > 0;
	}

	/**
	 * The sequence's fault for this request, consumed: a kind, `null` for one left alone, or
	 * `undefined` once the sequence is used up (the rates decide).
	 */
	takeScripted(): RequestFaultKind | null | undefined {
		const [next, ...rest] = this.settings.sequence;
		if (next === undefined) return undefined;
		this.settings = { ...this.settings, sequence: rest };
		if (rest.length === 0) this.refresh();
		return next === 'none' ? null : next;
	}

	/** Whether request faults may touch this surface at all. */
	active(surface: FaultSurface): boolean {
		return this.anyRequestFault && this.surfaces.has(surface);
	}

	hits(surface: FaultSurface): boolean {
		return this.surfaces.has(surface);
	}

	get latencyMs(): number {
		return this.settings.latencyMs;
	}

	get retryAfterSeconds(): number {
		return this.settings.retryAfterSeconds;
	}

	get lateArrivalMs(): number | undefined {
		return this.settings.lateArrivalMs;
	}

	/** Draws from the kind's stream only when its rate is on, so a zero rate costs nothing. */
	roll(kind: FaultKind): boolean {
		const probability = this.settings[RATE_OF[kind]];
		if (typeof probability !== 'number' || probability <= 0) return false;
		const stream = this.streams.get(kind);
		return stream !== undefined && stream() < probability;
	}
}
