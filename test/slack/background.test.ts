import { BackgroundTasks } from '../../slack-app/requests/background';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Work behind an ack waits for the acks still arriving, and is never lost or silent. */
describe('post-ack work', () => {
	it('starts only on a turn of the event loop without new acks, a couple per turn, in order', async () => {
		const tasks = new BackgroundTasks(() => undefined);
		const started: number[] = [];
		const enqueue = (n: number) => tasks.afterAck(`task ${n}`, async () => void started.push(n));

		enqueue(1);
		enqueue(2);
		enqueue(3);
		expect(started).toEqual([]);
		await nextTurn();
		// Acks arrived during the last turn: nothing starts yet.
		expect(started).toEqual([]);
		enqueue(4);
		await nextTurn();
		expect(started).toEqual([]);
		await nextTurn();
		expect(started).toEqual([1, 2]);
		await nextTurn();
		expect(started).toEqual([1, 2, 3, 4]);
		await tasks.idle();
	});

	it('starts work within half a second even while acks keep arriving every turn', async () => {
		const tasks = new BackgroundTasks(() => undefined);
		let firstStartedAfterMs: number | undefined;
		const since = performance.now();
		tasks.afterAck('first', async () => {
			firstStartedAfterMs = performance.now() - since;
		});
		while (firstStartedAfterMs === undefined && performance.now() - since < 5000) {
			tasks.afterAck('another ack', async () => undefined);
			await nextTurn();
		}
		expect(firstStartedAfterMs).toBeGreaterThanOrEqual(500);
		expect(firstStartedAfterMs).toBeLessThan(5000);
		await tasks.idle();
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
