export type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * Runs `work` over `items` with at most `limit` in flight; results keep the input order.
 * Failures are returned, not thrown, so one bad item never loses the others' results.
 */
export async function mapWithConcurrency<T, R>(
	items: readonly T[],
	limit: number,
	work: (item: T, index: number) => Promise<R>,
): Promise<Settled<R>[]> {
	if (!Number.isInteger(limit) || limit < 1)
		throw new RangeError('concurrency must be a whole number of at least 1');
	const results = new Array<Settled<R>>(items.length);
	let next = 0;
	async function worker(): Promise<void> {
		while (next < items.length) {
			const index = next++;
			try {
				results[index] = { ok: true, value: await work(items[index], index) };
			} catch (error) {
				results[index] = { ok: false, error };
			}
		}
	}
	await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
	return results;
}
