import { errorSummary } from '../slack/errors';

/**
 * How many pieces of post-ack work start per turn of the event loop. Each turn first reads the
 * requests Slack has sent so far, so a burst of commands is acknowledged before the work it causes.
 */
const STARTS_PER_TURN = 2;
/** While acks keep arriving, post-ack work waits for a quiet turn, but never longer than this. */
const MAX_POSTPONE_MS = 500;

/**
 * What a listener does after Slack has been acknowledged (reading, checking, starting a request).
 * Kept in one place so a failure is always logged and shutdown or a test can wait for the rest; the
 * long work of a /gpu request (generation, streaming, following a job) is the RequestLifecycle's.
 */
export class BackgroundTasks {
	private readonly running = new Set<Promise<void>>();
	private readonly waiting: { start: () => void; since: number }[] = [];
	private drainScheduled = false;
	private ackedSinceLastTurn = false;

	/** `logError` receives one line per failed task, naming what failed. */
	constructor(private readonly logError: (message: string) => void) {}

	/**
	 * Runs the rest of a request already acknowledged, behind the requests not yet read: an ack costs
	 * about a millisecond, the work behind it several, and Slack gives up on an ack after 3 s.
	 */
	afterAck(what: string, task: () => Promise<void>): void {
		this.track(
			what,
			new Promise<void>((start) => this.waiting.push({ start, since: performance.now() })).then(
				task,
			),
		);
		this.ackedSinceLastTurn = true;
		this.scheduleDrain();
	}

	async idle(): Promise<void> {
		while (this.running.size > 0) await Promise.all([...this.running]);
	}

	/** Work already under way (a Socket Mode envelope's processing): its failure is logged, idle() waits for it. */
	track(what: string, work: Promise<void>): void {
		const promise = work
			.catch((error: unknown) => this.logError(`${what} failed: ${errorSummary(error)}`))
			.finally(() => this.running.delete(promise));
		this.running.add(promise);
	}

	private scheduleDrain(): void {
		if (this.drainScheduled) return;
		this.drainScheduled = true;
		setImmediate(() => {
			this.drainScheduled = false;
			const burstGoingOn =
				this.ackedSinceLastTurn && performance.now() - this.waiting[0].since < MAX_POSTPONE_MS;
			this.ackedSinceLastTurn = false;
			if (!burstGoingOn) for (const { start } of this.waiting.splice(0, STARTS_PER_TURN)) start();
			if (this.waiting.length > 0) this.scheduleDrain();
		});
	}
}
