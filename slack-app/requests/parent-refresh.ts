import type { Clock } from '../../shared/clock';
import { withLogContext } from '../slack/log';

export interface ParentRefreshOptions<T> {
	clock: Clock;
	/** How often each followed job's parent shows its elapsed time anew. */
	refreshMs: number;
	/** Aborted when the tracker stops. */
	stopping: AbortSignal;
	/** What there is to refresh now. */
	followed: () => readonly T[];
	refresh: (entry: T) => void;
}

/** The JobTracker's refresh loop: one loop for every followed job's parent, running while there are any. */
export class ParentRefresh<T> {
	/** Set while the loop runs; aborted when nothing is followed any more. */
	private refresher?: AbortController;

	constructor(private readonly options: ParentRefreshOptions<T>) {}

	/** Starts the loop unless it runs already. */
	start(): void {
		if (this.refresher && !this.refresher.signal.aborted) return;
		const { clock, refreshMs, stopping, followed, refresh } = this.options;
		const refresher = new AbortController();
		this.refresher = refresher;
		void withLogContext({ job: undefined, request: undefined }, async () => {
			try {
				while (followed().length > 0) {
					await clock.sleep(refreshMs, AbortSignal.any([refresher.signal, stopping]));
					for (const entry of followed()) refresh(entry);
				}
			} catch {
				// Nothing left to refresh, or the tracker stopped.
			} finally {
				if (this.refresher === refresher) this.refresher = undefined;
			}
		});
	}

	/** Ends the loop now when nothing is left to refresh. */
	stopWhenIdle(): void {
		if (this.options.followed().length === 0) this.refresher?.abort();
	}
}
