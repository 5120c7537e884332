import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { freePort } from '../../slack-app/local';
import { kill, startAppProcess } from '../reliability/slack-process';
import { Stack } from '../slack/harness';

/**
 * A load balancer keeps connections to the app open between requests (the shipped nginx.conf:
 * upstream `keepalive`, idle for up to nginx's 60 s; AWS's load balancers also 60 s). When the app
 * closes an idle connection first (Node's default: after 5 s), a request the balancer sends on it at
 * that moment meets a closed connection, and the balancer does not send a POST again: Slack gets a
 * 502 for a command the app never saw. The app must keep idle connections longer than its balancer.
 */

const NODE_DEFAULT_IDLE_MS = 5000;

/** Sends one request on `socket` and resolves with the reply's status line. */
async function statusOf(socket: Socket): Promise<string> {
	socket.write('GET /healthz HTTP/1.1\r\nHost: app\r\n\r\n');
	const [chunk] = (await once(socket, 'data')) as [Buffer];
	return chunk.toString('latin1').split('\r\n')[0];
}

it(`keeps an idle connection open longer than a load balancer does, past Node's ${NODE_DEFAULT_IDLE_MS / 1000} s`, async () => {
	const stack = await Stack.start({ app: false });
	const port = await freePort();
	const app = await startAppProcess(stack, port);
	const socket = connect(port, '127.0.0.1');
	try {
		await once(socket, 'connect');
		let closedAfterMs: number | undefined;
		const since = Date.now();
		socket.once('end', () => (closedAfterMs = Date.now() - since));
		expect(await statusOf(socket)).toBe('HTTP/1.1 200 OK');
		await new Promise((resolve) => setTimeout(resolve, NODE_DEFAULT_IDLE_MS + 1500));
		expect(closedAfterMs).toBeUndefined();
		expect(await statusOf(socket)).toBe('HTTP/1.1 200 OK');
	} finally {
		socket.destroy();
		await kill(app.child);
		await stack.close();
	}
}, 30_000);
