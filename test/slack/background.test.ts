import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import { BackgroundTasks } from '../../slack-app/requests/background';

/** Keeps this thread off the CPU as the kernel can keep a process, timers expiring meanwhile. */
function blockFor(ms: number): void {
	const until = performance.now() + ms;
	while (performance.now() < until);
}

/**
 * A thread that, when told to, opens a connection to `port` and writes a byte: the kernel completes
 * and buffers it while this thread is blocked, as a request arrives at a replica off the cores.
 * Resolves to a function that sends and returns once the byte is with the kernel.
 */
async function connectorThread(
	port: number,
): Promise<{ send: () => void; stop: () => Promise<number> }> {
	const sent = new Int32Array(new SharedArrayBuffer(4));
	const worker = new Worker(
		`const { connect } = require('node:net');
		const { parentPort, workerData } = require('node:worker_threads');
		parentPort.once('message', () => {
			const socket = connect(workerData.port, '127.0.0.1', () =>
				socket.write('x', () => {
					Atomics.store(workerData.sent, 0, 1);
					Atomics.notify(workerData.sent, 0);
				}),
			);
			socket.on('error', () => undefined);
		});`,
		{ eval: true, workerData: { port, sent } },
	);
	await once(worker, 'online');
	return {
		send: () => {
			worker.postMessage('go');
			if (Atomics.wait(sent, 0, 0, 5000) === 'timed-out')
				throw new Error('The connection was not made in 5 s');
		},
		stop: () => worker.terminate(),
	};
}

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

		it('after a burst (10 acks within 100 ms), waits until no ack has been sent for 100 ms', async () => {
			const tasks = new BackgroundTasks(() => undefined);
			let started = 0;
			for (let n = 0; n < 10; n++) {
				tasks.afterAck(`command ${n}`, async () => void started++);
				await jest.advanceTimersByTimeAsync(5);
			}
			// The rest of the burst may be waiting on a starved load balancer or other replicas.
			await jest.advanceTimersByTimeAsync(90);
			expect(started).toBe(0);
			await jest.advanceTimersByTimeAsync(20);
			expect(started).toBe(10);
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

	it('after the process was held off the cores past 20 ms, reads the requests that arrived meanwhile before starting work', async () => {
		const tasks = new BackgroundTasks(() => undefined);
		const order: string[] = [];
		const server = createServer((socket) =>
			socket.once('data', () => {
				order.push('request read');
				tasks.afterAck('request', async () => undefined);
				socket.destroy();
			}),
		);
		server.listen(0, '127.0.0.1');
		await once(server, 'listening');
		const connector = await connectorThread((server.address() as AddressInfo).port);
		try {
			const since = performance.now();
			tasks.afterAck('earlier work', async () => void order.push('earlier work started'));
			// A request arrives while this process is off the cores, for longer than acks pause.
			connector.send();
			blockFor(30 - (performance.now() - since));
			while (order.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
			expect(order).toEqual(['request read', 'earlier work started']);
			await tasks.idle();
		} finally {
			await connector.stop();
			server.close();
		}
	});

	it('after the process was held off the cores, waits until it gets them when it asks before starting work', async () => {
		const tasks = new BackgroundTasks(() => undefined);
		let startedAt: number | undefined;
		tasks.afterAck('work', async () => void (startedAt = performance.now()));
		// The 20 ms timer comes due while this process is off the cores (other processes, such as
		// other replicas still acknowledging a burst, have them): it fires 30 ms late.
		blockFor(50);
		const heldUntil = performance.now();
		await tasks.idle();
		// A quiet wait counted from when the process got the cores back, not from the late timer.
		expect(startedAt).toBeGreaterThanOrEqual(heldUntil + 20);
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
