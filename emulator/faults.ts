import {
	faultSettingsSchema,
	type FaultOptions,
	type FaultSettings,
	type FaultSurface,
} from './options';
import { prng } from './prng';

export type FaultKind =
	| 'error'
	| 'rate-limit'
	| 'html-error'
	| 'reset'
	| 'malformed'
	| 'webhook-failure'
	| 'interruption'
	| 'stream-error';

const RATE_OF: Record<FaultKind, keyof FaultSettings> = {
	error: 'errorRate',
	'rate-limit': 'rateLimitRate',
	'html-error': 'htmlErrorRate',
	reset: 'resetRate',
	malformed: 'malformedRate',
	'webhook-failure': 'webhookFailureRate',
	interruption: 'interruptionRate',
	'stream-error': 'streamErrorRate',
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
			s.resetRate > 0 ||
			s.malformedRate > 0;
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

	/** Draws from the kind's stream only when its rate is on, so a zero rate costs nothing. */
	roll(kind: FaultKind): boolean {
		const probability = this.settings[RATE_OF[kind]];
		if (typeof probability !== 'number' || probability <= 0) return false;
		const stream = this.streams.get(kind);
		return stream !== undefined && stream() < probability;
	}
}
