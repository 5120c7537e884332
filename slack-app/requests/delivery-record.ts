import type { Clock } from '../../shared/clock';
import type { ResultPart, ThreadRef } from '../model';
import { LocalSharedState } from '../state/local-state';
import type { SlackThreads } from '../slack/slack-thread';
import type { SharedState } from '../state/shared-state';
import type { StateFile } from '../state/state-file';

/** A delivery Slack refused is tried this often, a little later each time, before it is left to a restart. */
const DELIVERY_ATTEMPTS = 3;
const RETRY_PAUSE_MS = 2000;

export interface Delivery {
	/** The result or the failure, as keyed parts (a message's metadata key, a file's name). */
	parts: ResultPart[];
	/** The parent's last edit; a delivery counts as done only once the parent shows the end too. */
	finish?: () => Promise<void>;
}

/**
 * The one record of what the app has delivered: each request's result or failure goes into its
 * thread once, whoever asks. Attempts that overlap (a webhook and a poll for the same job) share one
 * delivery; a finished one is remembered in the state file across restarts; and one cut short by a
 * crash is completed from the thread itself, whose parts carry keys (`SlackThreads.postParts` skips
 * those the thread shows). Nothing else in the app decides whether something was posted.
 */
export class DeliveryRecord {
	private readonly underway = new Map<string, Promise<void>>();
	private closed = false;

	/**
	 * A delivery also needs the `deliver:<ref>` lease of `shared` (the app's SharedState; alone,
	 * tests, this process's): with several replicas one posts at a time, the others wait until it is
	 * marked delivered or its holder died (the lease expired), so no result is posted twice and none
	 * is dropped.
	 */
	constructor(
		private readonly threads: SlackThreads,
		private readonly state: StateFile,
		private readonly clock: Clock,
		private readonly shared: Pick<
			SharedState,
			'lease' | 'releaseLease' | 'isDelivered' | 'markDelivered' | 'leaseMs'
		> = new LocalSharedState(state, clock),
	) {}

	isDelivered(ref: string): boolean {
		return this.state.isDelivered(ref);
	}

	/** How many parts whose key starts with `prefix` the thread shows (what a crash left behind). */
	async partsShown(thread: ThreadRef, prefix: string): Promise<number> {
		return [...(await this.threads.postedKeys(thread))].filter((key) => key.startsWith(prefix))
			.length;
	}

	/** Delivers `ref` unless it is delivered or being delivered; rejects when Slack kept refusing. */
	deliver(ref: string, thread: ThreadRef, delivery: Delivery): Promise<void> {
		if (this.state.isDelivered(ref)) return Promise.resolve();
		const underway = this.underway.get(ref);
		if (underway) return underway;
		const attempt = this.attempt(ref, thread, delivery).finally(() => this.underway.delete(ref));
		this.underway.set(ref, attempt);
		return attempt;
	}

	/**
	 * Runs an edit that must never overwrite the end (a parent's status refresh): only while `ref` is
	 * neither delivered nor being delivered. It holds the `deliver:<ref>` lease meanwhile, so another
	 * replica's final edit and delivered mark come wholly before it (then it is skipped) or wholly
	 * after it; otherwise a refresh checked just before the end could land after it. False when
	 * skipped.
	 */
	async editUnlessDelivered(ref: string, edit: () => Promise<void>): Promise<boolean> {
		const shared = this.shared;
		if (this.state.isDelivered(ref) || this.underway.has(ref)) return false;
		const lease = deliveryLease(ref);
		// Held elsewhere: that replica is delivering, and its final edit is the one that counts.
		if (!(await shared.lease(lease))) return false;
		try {
			// Looked at again once the lease is held: a delivery here may have begun meanwhile.
			if ((await shared.isDelivered(ref)) || this.underway.has(ref)) return false;
			await edit();
			return true;
		} finally {
			await shared.releaseLease(lease);
		}
	}

	/** Stops retrying (shutdown): what is not delivered yet is found again at the next start. */
	close(): void {
		this.closed = true;
	}

	private async attempt(ref: string, thread: ThreadRef, delivery: Delivery): Promise<void> {
		const shared = this.shared;
		const lease = deliveryLease(ref);
		for (;;) {
			if (await shared.isDelivered(ref)) return;
			if (await shared.lease(lease)) break;
			if (this.closed) return;
			// Another replica is posting it: look again once it is done or its lease ran out.
			await this.clock.sleep(Math.ceil(shared.leaseMs / 2));
		}
		try {
			// Checked again under the lease: the holder before may have finished just now.
			if (await shared.isDelivered(ref)) return;
			await this.post(ref, thread, delivery);
			if (delivery.parts.length > 0) await shared.markDelivered(ref);
		} finally {
			await shared.releaseLease(lease);
		}
	}

	private async post(ref: string, thread: ThreadRef, delivery: Delivery): Promise<void> {
		for (let attempt = 1; ; attempt++) {
			try {
				await this.threads.postParts(thread, delivery.parts);
				await delivery.finish?.();
				// A request with nothing to post (a chat answer is its own message) leaves no trace here.
				if (delivery.parts.length > 0) await this.state.markDelivered(ref);
				return;
			} catch (error) {
				if (attempt >= DELIVERY_ATTEMPTS || this.closed) throw error;
				await this.clock.sleep(attempt * RETRY_PAUSE_MS);
			}
		}
	}
}

/** Held by whoever posts `ref` or edits what its end would overwrite; one holder among the replicas. */
function deliveryLease(ref: string): string {
	return `deliver:${ref}`;
}
