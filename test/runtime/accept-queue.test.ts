import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { freePort } from '../../slack-app/local';
import { kill, startAppProcess } from '../reliability/slack-process';
import { Stack } from '../slack/harness';

/**
 * A burst of Slack requests reaches the app as a burst of new connections from its load balancer
 * (one per request in flight). Connections the app has not accepted yet wait in the kernel's accept
 * queue; past its length the kernel drops the connection attempt and the client tries again only
 * after a second, a third of the 3 s Slack waits for an ack (scenario 10's tail). Node listens with
 * a queue of 511 unless told otherwise.
 */

const BURST = 1500;

/** How many of `count` connections the kernel completes within `ms` while nobody accepts them. */
async function handshakesWithin(port: number, count: number, ms: number): Promise<number> {
	const sockets: Socket[] = [];
	let connected = 0;
	for (let i = 0; i < count; i++) {
		const socket = connect(port, '127.0.0.1', () => connected++);
		socket.on('error', () => undefined);
		sockets.push(socket);
	}
	await new Promise((resolve) => setTimeout(resolve, ms));
	for (const socket of sockets) socket.destroy();
	return connected;
}

it(`queues a burst of ${BURST} connections it cannot accept yet, rather than dropping all past 511`, async () => {
	const somaxconn = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8'));
	// The kernel caps every queue at net.core.somaxconn (4096 by default since Linux 5.4).
	expect(somaxconn).toBeGreaterThanOrEqual(BURST);
	const stack = await Stack.start({ app: false });
	const port = await freePort();
	const app = await startAppProcess(stack, port);
	try {
		// Stopped, it accepts nothing: what connects is what its accept queue holds.
		app.child.kill('SIGSTOP');
		expect(await handshakesWithin(port, BURST, 800)).toBe(BURST);
	} finally {
		app.child.kill('SIGCONT');
		await kill(app.child);
		await stack.close();
	}
});
