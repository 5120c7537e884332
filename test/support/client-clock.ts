import type { Clock } from '../../shared/clock';
import type { ManualClock } from './manual-clock';

/**
 * A client's clock on the emulator's timeline: it records the client's pauses, as FakeClock does,
 * and each pause lets the same time pass on the emulator's ManualClock. What the emulator does
 * "later" (a request that reaches it late, a job's progress) then happens during the client's wait,
 * in order, without real waiting. For one client at a time: concurrent pauses would interleave.
 */
export class ClientClock implements Clock {
	readonly sleeps: number[] = [];

	constructor(private readonly timeline: ManualClock) {}

	now(): number {
		return this.timeline.now();
	}

	async sleep(ms: number, signal?: AbortSignal): Promise<void> {
		signal?.throwIfAborted();
		this.sleeps.push(ms);
		await this.timeline.advance(ms);
	}
}
