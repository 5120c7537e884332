import type { Clock } from '../../shared/clock';

interface Sleeper {
	remainingMs: number;
	startedAt: number;
	timer?: NodeJS.Timeout;
	resolve: () => void;
}

/**
 * The wall clock whose timers can be stopped: while held, no sleep counts down. `now()` stays real
 * time (webhook signatures and job stamps are checked against it). Given to the emulator, it holds
 * every job where it is until the test says, so "the job was still running when the app died" is a
 * fact the test makes, not a race it hopes to win on a busy machine.
 */
export class PausableClock implements Clock {
	private held: boolean;
	private readonly sleepers = new Set<Sleeper>();

	constructor(options: { held?: boolean } = {}) {
		this.held = options.held ?? false;
	}

	now(): number {
		return Date.now();
	}

	sleep(ms: number, signal?: AbortSignal): Promise<void> {
		return new Promise<void>((resolve, reject) => {
			if (signal?.aborted) return reject(signal.reason);
			const sleeper: Sleeper = {
				remainingMs: Math.max(0, ms),
				startedAt: 0,
				resolve: () => {
					this.sleepers.delete(sleeper);
					signal?.removeEventListener('abort', abort);
					resolve();
				},
			};
			const abort = () => {
				clearTimeout(sleeper.timer);
				this.sleepers.delete(sleeper);
				reject(signal?.reason);
			};
			signal?.addEventListener('abort', abort, { once: true });
			this.sleepers.add(sleeper);
			if (!this.held) this.run(sleeper);
		});
	}

	/** Stops every timer where it is; sleeps begun from now on wait too. */
	hold(): void {
		if (this.held) return;
		this.held = true;
		for (const sleeper of this.sleepers) {
			clearTimeout(sleeper.timer);
			sleeper.remainingMs = Math.max(0, sleeper.remainingMs - (Date.now() - sleeper.startedAt));
		}
	}

	/** Lets every timer run on for what it had left. */
	release(): void {
		if (!this.held) return;
		this.held = false;
		for (const sleeper of this.sleepers) this.run(sleeper);
	}

	private run(sleeper: Sleeper): void {
		sleeper.startedAt = Date.now();
		sleeper.timer = setTimeout(sleeper.resolve, sleeper.remainingMs);
	}
}
