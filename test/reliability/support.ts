/** Resolves with the first truthy value of `check`, looked at every 20 ms (for state no event announces). */
export async function eventually<T>(
	check: () => T | undefined | false,
	timeoutMs: number,
	what: string,
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = check();
		if (value) return value;
		if (Date.now() > deadline)
			throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}.`);
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}
