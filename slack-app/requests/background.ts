import { errorSummary } from '../slack/errors';

/**
 * How many pieces of post-ack work start per turn of the event loop once acks have paused: each
 * turn first reads the requests Slack has sent so far.
 */
const STARTS_PER_TURN = 2;
/**
 * Post-ack work waits until no ack has been sent for this long: a burst of commands is acknowledged
 * before the work it causes. A quiet turn of the event loop is not enough: a replica given a third
 * of a burst (or spinning on its own checks) has many, and its work then takes the cores from the
 * other replicas' acks (scenario 10: 3 replicas used 2.5 s of CPU during the acks of 1,000
 * commands, 1 replica 0.9 s).
 */
const QUIET_MS = 20;
/**
 * ...or this long after a burst, BURST_ACKS acks within BURST_QUIET_MS: a replica then acks faster
 * than the load balancer and the other replicas hand it the rest, and work started in those gaps
 * takes the cores (or a container's CPU quota) the burst's last acks need (scenario 10, three
 * replicas with half a core each: ack p99 0.8-1.1 s in four bursts of five with 20 ms, 0.3-0.8 s
 * with this rule). Below 100 acks a second the short wait applies; at or above it, acks never pause
 * for 20 ms anyway.
 */
const BURST_QUIET_MS = 100;
const BURST_ACKS = 10;
/**
 * ...and until this many turns of the event loop have read Slack's sockets without an ack. A timer
 * that has run out says no ack was sent, not that none is waiting: a replica the kernel kept off the
 * cores for longer than QUIET_MS runs its expired timers before it reads the connections that
 * arrived meanwhile (accepted in one turn, read in the next), and its work then takes the cores
 * from those acks and from the other replicas'.
 */
const QUIET_TURNS = 2;
/**
 * ...and until the process gets the cores when it asks for them: a quiet timer that fires later
 * than this past its time says other processes hold the cores (on shared cores, the other replicas
 * still acknowledging a burst: scenario 10's three replicas took 0.7-1.6 s of CPU during the acks
 * of 1,000 commands without this rule, 0.55-0.9 s with it, one replica 0.45-0.6 s), so the quiet
 * wait starts again.
 */
const LATE_MS = 10;
/**
 * However long acks keep arriving, the oldest post-ack work starts within this: Slack waits 3 s for
 * an ack, and the work behind it (a parent message, a job) can come a little later.
 */
const MAX_POSTPONE_MS = 2000;

/**
 * What a listener does after Slack has been acknowledged (reading, checking, starting a request).
 * Kept in one place so a failure is always logged and shutdown or a test can wait for the rest; the
 * long work of a /gpu request (generation, streaming, following a job) is the RequestLifecycle's.
 */
export class BackgroundTasks {
	private readonly running = new Set<Promise<void>>();
	private readonly waiting: { start: () => void; since: number }[] = [];
	private drainScheduled = false;
	/** When the last BURST_ACKS acks were sent, oldest first. */
	private readonly recentAcks: number[] = [];
	private acks = 0;
	/** `acks` when the turn last checked, and how many turns in a row have seen it unchanged. */
	private acksSeen = 0;
	private quietTurns = 0;
	/** When a quiet timer last fired more than LATE_MS late: the cores were busy then, like an ack. */
	private lastHeldOffAt = Number.NEGATIVE_INFINITY;

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
		this.recentAcks.push(performance.now());
		if (this.recentAcks.length > BURST_ACKS) this.recentAcks.shift();
		this.acks++;
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

	private lastAckAt(): number {
		return this.recentAcks.at(-1) ?? Number.NEGATIVE_INFINITY;
	}

	/** How long acks must have paused: longer after a burst. */
	private quietMs(): number {
		const inBurst =
			this.recentAcks.length === BURST_ACKS &&
			this.lastAckAt() - this.recentAcks[0] <= BURST_QUIET_MS;
		return inBurst ? BURST_QUIET_MS : QUIET_MS;
	}

	/** The last time the cores were wanted for something else: an ack, or other processes. */
	private lastBusyAt(): number {
		return Math.max(this.lastAckAt(), this.lastHeldOffAt);
	}

	/**
	 * Starts waiting work a couple per turn once acks have paused for QUIET_MS (BURST_QUIET_MS after
	 * a burst) and QUIET_TURNS and its timer was not held off the cores for LATE_MS; until then it
	 * sleeps on a timer rather than checking every turn (a loop that never waits for I/O takes a
	 * core), and checks a few turns after the timer.
	 */
	private scheduleDrain(): void {
		if (this.drainScheduled || this.waiting.length === 0) return;
		this.drainScheduled = true;
		const now = performance.now();
		const postponedFor = Math.min(
			this.lastBusyAt() + this.quietMs() - now,
			this.waiting[0].since + MAX_POSTPONE_MS - now,
		);
		const drain = () => {
			this.drainScheduled = false;
			this.quietTurns = this.acks === this.acksSeen ? this.quietTurns + 1 : 0;
			this.acksSeen = this.acks;
			const later = performance.now();
			const overdue = later - this.waiting[0].since >= MAX_POSTPONE_MS;
			const quiet = later - this.lastBusyAt() >= this.quietMs() && this.quietTurns >= QUIET_TURNS;
			if (quiet || overdue)
				for (const { start } of this.waiting.splice(0, STARTS_PER_TURN)) start();
			this.scheduleDrain();
		};
		if (postponedFor > 0) {
			const due = now + postponedFor;
			setTimeout(() => {
				const firedAt = performance.now();
				if (firedAt - due > LATE_MS) this.lastHeldOffAt = firedAt;
				this.quietTurns = 0;
				this.acksSeen = this.acks;
				setImmediate(drain);
			}, postponedFor);
		} else setImmediate(drain);
	}
}
