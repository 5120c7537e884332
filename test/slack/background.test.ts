import { BackgroundTasks } from '../../slack-app/requests/background';

/** Work behind an ack waits for the acks still arriving, and is never lost or silent. */
describe('post-ack work', () => {
	describe('on a fake clock', () => {
		beforeEach(() => jest.useFakeTimers());
		afterEach(() => jest.useRealTimers());

		it('waits until no ack has been sent for 20 ms, then starts the work in order', async () => {
			const tasks = new BackgroundTasks(() => undefined);
			const started: number[] = [];
			const enqueue = (n: number) => tasks.afterAck(`task ${n}`, async () => void started.push(n));

			enqueue(1);
			enqueue(2);
			enqueue(3);
			await jest.advanceTimersByTimeAsync(10);
			expect(started).toEqual([]);
			enqueue(4);
			// 15 ms after the last ack: still waiting, however many turns went by.
			await jest.advanceTimersByTimeAsync(15);
			expect(started).toEqual([]);
			await jest.advanceTimersByTimeAsync(10);
			expect(started).toEqual([1, 2, 3, 4]);
			await tasks.idle();
		});

		it('starts work within two seconds even while acks keep arriving', async () => {
			const tasks = new BackgroundTasks(() => undefined);
			let firstStartedAfterMs: number | undefined;
			const since = performance.now();
			tasks.afterAck('first', async () => {
				firstStartedAfterMs = performance.now() - since;
			});
			while (firstStartedAfterMs === undefined && performance.now() - since < 5000) {
				tasks.afterAck('another ack', async () => undefined);
				await jest.advanceTimersByTimeAsync(5);
			}
			expect(firstStartedAfterMs).toBeGreaterThanOrEqual(2000);
			expect(firstStartedAfterMs).toBeLessThan(2100);
			await jest.runAllTimersAsync();
			await tasks.idle();
		});
	});

	it('logs a failure by what failed, and idle() waits for work not yet started', async () => {
		const errors: string[] = [];
		const tasks = new BackgroundTasks((message) => errors.push(message));
		let finished = false;
		tasks.afterAck('/gpu job command', async () => {
			throw new Error('the service is down');
		});
		tasks.afterAck('/gpu help command', async () => {
			finished = true;
		});
		await tasks.idle();
		expect(finished).toBe(true);
		expect(errors.join('\n')).toMatch(/\/gpu job command failed: .*the service is down/);
	});
});
