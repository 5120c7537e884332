/**
 * Time, injected: n8n passes its own sleep, tests a fake clock, and the rest the system clock in
 * `runtime/`. The shared core never touches timers itself.
 */
export interface Clock {
	/** Milliseconds since the epoch. */
	now(): number;
	/** Resolves after `ms`; rejects with the signal's reason when aborted first. */
	sleep(ms: number, signal?: AbortSignal): Promise<void>;
}
