import './env';
import { n8nClock } from '../../nodes/GpuCloud/transport';

/**
 * The nodes' clock on the installed n8n-workflow (the version of the newest n8n tested): every
 * polling wait, rate-limit wait and retry sleeps through it, so a helper n8n no longer exports
 * breaks them all at once.
 */
describe("The nodes' clock on the installed n8n-workflow", () => {
	test('sleeps for the time asked, with and without a cancel signal', async () => {
		for (const signal of [undefined, new AbortController().signal]) {
			const started = performance.now();
			await n8nClock.sleep(60, signal);
			expect(performance.now() - started).toBeGreaterThanOrEqual(55);
		}
	});

	test('stops at once with the reason when the execution is cancelled', async () => {
		const controller = new AbortController();
		const sleeping = n8nClock.sleep(30_000, controller.signal);
		const outcome = sleeping.then(
			() => 'woke',
			(error: unknown) => error,
		);
		controller.abort(new Error('execution cancelled'));
		// "At once" without a stopwatch: settled before the event loop's next turn, so no timer ran.
		const nextTurn = new Promise((resolve) => setImmediate(() => resolve('still asleep')));
		const first = await Promise.race([outcome, nextTurn]);
		expect(first).toEqual(new Error('execution cancelled'));
	});

	test('refuses at once when the signal was already cancelled', async () => {
		await expect(
			n8nClock.sleep(30_000, AbortSignal.abort(new Error('already cancelled'))),
		).rejects.toThrow('already cancelled');
	});
});
