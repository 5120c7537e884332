import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** Round robin over the replicas; a replica that refuses the connection is skipped (as a load balancer's health check would). */
export class RoundRobinProxy {
	private next = 0;
	/** Requests answered by each upstream port. */
	readonly served = new Map<number, number>();

	private constructor(
		private readonly server: Server,
		readonly url: string,
		readonly upstreams: number[],
	) {}

	static async start(port: number, upstreams: number[]): Promise<RoundRobinProxy> {
		const server = createServer();
		const proxy = new RoundRobinProxy(server, `http://127.0.0.1:${port}`, upstreams);
		server.on('request', (req: IncomingMessage, res: ServerResponse) => {
			void proxy.forward(req).then(
				({ status, headers, body }) => res.writeHead(status, headers).end(body),
				() => res.writeHead(502).end(),
			);
		});
		await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
		return proxy;
	}

	private async forward(
		req: IncomingMessage,
	): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
		const chunks: Buffer[] = [];
		for await (const chunk of req) chunks.push(chunk as Buffer);
		const body = Buffer.concat(chunks);
		const headers: Record<string, string> = {};
		for (const [name, value] of Object.entries(req.headers)) {
			if (
				typeof value === 'string' &&
				!['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive'].includes(name)
			)
				headers[name] = value;
		}
		let lastError: unknown;
		for (let tries = 0; tries < this.upstreams.length; tries++) {
			const port = this.upstreams[this.next++ % this.upstreams.length];
			try {
				const response = await fetch(`http://127.0.0.1:${port}${req.url ?? '/'}`, {
					method: req.method,
					headers,
					body: req.method === 'GET' ? undefined : body,
				});
				this.served.set(port, (this.served.get(port) ?? 0) + 1);
				return {
					status: response.status,
					headers: { 'content-type': response.headers.get('content-type') ?? 'text/plain' },
					body: Buffer.from(await response.arrayBuffer()),
				};
			} catch (error) {
				lastError = error;
			}
		}
		throw lastError;
	}

	close(): Promise<void> {
		this.server.closeAllConnections();
		return new Promise((resolve) => this.server.close(() => resolve()));
	}
}
