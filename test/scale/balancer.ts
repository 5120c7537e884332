import { once } from 'node:events';
import {
	createServer,
	request,
	type IncomingMessage,
	type Server,
	type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Forwarded {
	path: string;
	upstream: number;
	status: number;
	/** The webhook-id header, when the request carried one. */
	webhookId?: string;
	/** The reply was dropped on the way back (the caller saw a broken connection). */
	lost: boolean;
	ms: number;
}

/**
 * The load balancer in front of the webhook processors: each request goes to the next one in turn.
 * With `loseFirstReply` on, the first reply to each delivery (by `webhook-id`) is dropped after the
 * processor has handled it, as a proxy timing out would, so the sender delivers it again, to the
 * other processor.
 */
export class Balancer {
	readonly forwarded: Forwarded[] = [];
	loseFirstReply = false;
	private upstreams: number[] = [];
	private next = 0;
	private readonly seen = new Set<string>();

	private constructor(
		private readonly server: Server,
		readonly url: string,
	) {}

	static async start(): Promise<Balancer> {
		const server = createServer();
		server.listen(0, '127.0.0.1');
		await once(server, 'listening');
		const balancer = new Balancer(
			server,
			`http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		);
		server.on('request', (req, res) => balancer.forward(req, res));
		return balancer;
	}

	route(ports: number[]): void {
		this.upstreams = ports;
	}

	private forward(req: IncomingMessage, res: ServerResponse): void {
		const started = Date.now();
		const port = this.upstreams[this.next++ % this.upstreams.length];
		if (port === undefined) {
			res.writeHead(503).end();
			return;
		}
		const header = req.headers['webhook-id'];
		const webhookId = Array.isArray(header) ? header[0] : header;
		const lose = this.loseFirstReply && webhookId !== undefined && !this.seen.has(webhookId);
		if (webhookId) this.seen.add(webhookId);
		const upstream = request(
			{ host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers },
			(reply) => {
				const chunks: Buffer[] = [];
				reply.on('data', (chunk: Buffer) => chunks.push(chunk));
				reply.on('end', () => {
					const status = reply.statusCode ?? 502;
					this.forwarded.push({
						path: req.url ?? '',
						upstream: port,
						status,
						webhookId,
						lost: lose,
						ms: Date.now() - started,
					});
					if (lose) {
						req.socket.destroy();
						return;
					}
					res.writeHead(status, reply.headers).end(Buffer.concat(chunks));
				});
			},
		);
		upstream.on('error', () => {
			this.forwarded.push({
				path: req.url ?? '',
				upstream: port,
				status: 502,
				webhookId,
				lost: false,
				ms: Date.now() - started,
			});
			if (!res.headersSent) res.writeHead(502).end();
		});
		req.pipe(upstream);
	}

	async close(): Promise<void> {
		this.server.closeAllConnections();
		await new Promise<void>((resolve) => this.server.close(() => resolve()));
	}
}
