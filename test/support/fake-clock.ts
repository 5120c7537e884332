import type { Clock } from '../../shared/clock';

/**
 * Virtual time that jumps forward when someone sleeps, so retry and polling schedules can be
 * checked without waiting. Records every sleep for assertions.
 */
export class FakeClock implements Clock {
	readonly sleeps: number[] = [];
	constructor(private time = Date.UTC(2026, 0, 1)) {}

	now(): number {
		return this.time;
	}

	async sleep(ms: number, signal?: AbortSignal): Promise<void> {
		signal?.throwIfAborted();
		this.sleeps.push(ms);
		const wake = this.time + Math.max(0, ms);
		await Promise.resolve();
		this.time = Math.max(this.time, wake);
	}

	advance(ms: number): void {
		this.time += ms;
	}
}
