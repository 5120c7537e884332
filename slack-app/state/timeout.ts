/**
 * Longest wait for Redis where the answer cannot wait (Slack's 3 s ack, a webhook's reply, a thread
 * reply): past it, the request is refused and sent again rather than guessed at.
 */
export const SHARED_STATE_WAIT_MS = 2000;

/** `promise`, or a rejection after `ms`: for answers that cannot wait long (Slack's 3 s ack). */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
	let timer: NodeJS.Timeout | undefined;
	const late = new Promise<never>(
		(_, reject) =>
			(timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms)),
	);
	return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Redis's answer where it cannot wait, or a rejection after SHARED_STATE_WAIT_MS. */
export function redisInTime<T>(answer: Promise<T>): Promise<T> {
	return within(answer, SHARED_STATE_WAIT_MS, 'Redis');
}
