/**
 * The floor of scenario 10: a bare Node HTTP server (no Bolt, no app) that reads a request, checks
 * its Slack signature as the app's receiver does (HMAC-SHA256 of `v0:<timestamp>:<body>`, compared
 * in constant time) and answers 200 with no body. Behind the same proxy, from the same sender, its
 * acks are the fastest this machine allows for the same signed requests. A bench child: started
 * with the signing secret, it replies with its port.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { z } from 'zod/v4';
import { listen } from '../slack-app/http/receiver';
import { CHILD_FLAG } from './bulk-n8n';

export const floorReplySchema = z.object({ port: z.number().int() });

function verified(secret: string, timestamp: unknown, signature: unknown, body: Buffer): boolean {
	if (typeof timestamp !== 'string' || typeof signature !== 'string') return false;
	if (!/^v0=[0-9a-f]{64}$/.test(signature)) return false;
	const expected = createHmac('sha256', secret).update(`v0:${timestamp}:`).update(body).digest();
	return timingSafeEqual(expected, Buffer.from(signature.slice(3), 'hex'));
}

function serveFloor(): void {
	process.once('message', (message) => {
		const { signingSecret } = z.object({ signingSecret: z.string() }).parse(message);
		const server = createServer((req, res) => {
			const chunks: Buffer[] = [];
			req.on('data', (chunk: Buffer) => chunks.push(chunk));
			req.once('end', () => {
				const ok = verified(
					signingSecret,
					req.headers['x-slack-request-timestamp'],
					req.headers['x-slack-signature'],
					Buffer.concat(chunks),
				);
				res.writeHead(ok ? 200 : 401).end();
			});
		});
		// The app's accept queue, so that the floor differs from it only in what runs per request.
		void listen(server, 0, '127.0.0.1').then(() => {
			const address = server.address();
			process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
		});
	});
	process.once('disconnect', () => process.exit(0));
	process.send?.('ready');
}

if (require.main === module && process.argv.includes(CHILD_FLAG)) serveFloor();
