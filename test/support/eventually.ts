/** What a probe answers while the state it waits for has not come yet. */
type NotYet = undefined | null | false;

/**
 * Resolves with the first value `probe` answers other than undefined, null or false, asking it every
 * `intervalMs` in real time (for state no event announces); rejects naming `what` after `timeoutMs`.
 */
export async function eventually<T>(
	what: string,
	probe: () => T | NotYet | Promise<T | NotYet>,
	{ timeoutMs = 10_000, intervalMs = 20 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await probe();
		if (value !== undefined && value !== null && value !== false) return value;
		if (Date.now() > deadline)
			throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}.`);
		await new Promise((resolve) => setTimeout(resolve, intervalMs));
	}
}
