import type { Clock } from '../../shared/clock';

/**
 * Time that runs `speed` times faster than the wall clock, from now on: real timers, shorter.
 * For a whole stack (the stand-in's rate limits, the app's call budget, the emulator's jobs) where
 * minutes of Slack's windows must pass in seconds; tests on it assert counts, never durations.
 */
export class FastClock implements Clock {
	private readonly start = Date.now();

	constructor(readonly speed: number) {}

	now(): number {
		return this.start + (Date.now() - this.start) * this.speed;
	}

	sleep(ms: number, signal?: AbortSignal): Promise<void> {
		return new Promise<void>((resolve, reject) => {
			if (signal?.aborted) return reject(signal.reason);
			const timer = setTimeout(
				() => {
					signal?.removeEventListener('abort', abort);
					resolve();
				},
				Math.max(0, ms) / this.speed,
			);
			const abort = () => {
				clearTimeout(timer);
				reject(signal?.reason);
			};
			signal?.addEventListener('abort', abort, { once: true });
		});
	}
}
