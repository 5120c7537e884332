import type { Clock } from '../../shared/clock';

/**
 * A clock the test moves by hand: the emulator's job timers, retry pauses, rate-limit window and
 * latency fault all run on it, so tests of schedules need no real waiting and no timing assertions.
 */
export class ManualClock implements Clock {
	private timers: { at: number; resolve: () => void }[] = [];

	/** Starts at a fixed instant; pass `Date.now()` where peers check timestamps against real time. */
	constructor(private time = Date.UTC(2025, 0, 15, 9, 0, 0)) {}

	now = (): number => this.time;

	sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
		new Promise<void>((resolve, reject) => {
			if (signal?.aborted) {
				reject(signal.reason);
				return;
			}
			const timer = { at: this.time + Math.max(0, ms), resolve };
			this.timers.push(timer);
			signal?.addEventListener(
				'abort',
				() => {
					this.timers = this.timers.filter((entry) => entry !== timer);
					reject(signal.reason);
				},
				{ once: true },
			);
		});

	get pendingTimers(): number {
		return this.timers.length;
	}

	/** When the earliest pending timer is due, if any timer is pending. */
	get nextTimerAt(): number | undefined {
		return this.timers.length === 0 ? undefined : Math.min(...this.timers.map((timer) => timer.at));
	}

	/** Moves time forward, firing due timers in order and letting their callbacks run. */
	async advance(ms: number): Promise<void> {
		const target = this.time + ms;
		await settle();
		for (;;) {
			const due = this.timers.filter((timer) => timer.at <= target).sort((a, b) => a.at - b.at)[0];
			if (!due) break;
			this.timers = this.timers.filter((timer) => timer !== due);
			this.time = Math.max(this.time, due.at);
			due.resolve();
			await settle();
		}
		this.time = target;
		await settle();
	}
}

/** Lets pending promise callbacks and I/O callbacks run. */
export async function settle(): Promise<void> {
	for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
