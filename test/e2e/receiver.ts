import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Where workflows report back: the last node of a workflow run by `n8n start` is n8n's own HTTP
 * Request node, posting what reached it here. Arrival proves the execution got to its end without
 * reading n8n's database or logging into its REST API.
 */

export interface Received {
	path: string;
	body: unknown;
	at: number;
}

export class Receiver {
	private readonly server: Server;
	private readonly received: Received[] = [];
	private readonly waiters = new Set<() => void>();

	private constructor(server: Server) {
		this.server = server;
		server.on('request', (request, response) => {
			const chunks: Buffer[] = [];
			request.on('data', (chunk: Buffer) => chunks.push(chunk));
			request.on('end', () => {
				const text = Buffer.concat(chunks).toString('utf8');
				let body: unknown = text;
				try {
					body = JSON.parse(text);
				} catch {
					// Kept as text.
				}
				this.received.push({ path: request.url ?? '', body, at: Date.now() });
				response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
				for (const wake of this.waiters) wake();
			});
		});
	}

	static async start(): Promise<Receiver> {
		const server = createServer();
		server.listen(0, '127.0.0.1');
		await once(server, 'listening');
		return new Receiver(server);
	}

	url(path: string): string {
		const { port } = this.server.address() as AddressInfo;
		return `http://127.0.0.1:${port}${path}`;
	}

	all(path: string): Received[] {
		return this.received.filter((entry) => entry.path === path);
	}

	/** The first report on `path` that satisfies `match`, or an error naming what did arrive. */
	async waitFor(
		path: string,
		match: (body: unknown) => boolean,
		timeoutMs: number,
	): Promise<Received> {
		const [first] = await this.waitForAll(path, 1, match, timeoutMs);
		return first;
	}

	/** The first `count` reports on `path` that satisfy `match`, in arrival order. */
	async waitForAll(
		path: string,
		count: number,
		match: (body: unknown) => boolean,
		timeoutMs: number,
	): Promise<Received[]> {
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			const hits = this.received.filter((entry) => entry.path === path && match(entry.body));
			if (hits.length >= count) return hits.slice(0, count);
			const left = deadline - Date.now();
			if (left <= 0) {
				const seen = this.all(path).map((entry) => JSON.stringify(entry.body).slice(0, 300));
				throw new Error(
					`${hits.length} of ${count} matching reports arrived at ${path} within ${timeoutMs / 1000} s (${seen.length ? `got: ${seen.join(' | ')}` : 'nothing arrived'})`,
				);
			}
			await new Promise<void>((resolve) => {
				const wake = () => {
					clearTimeout(timer);
					this.waiters.delete(wake);
					resolve();
				};
				const timer = setTimeout(wake, left);
				this.waiters.add(wake);
			});
		}
	}

	async close(): Promise<void> {
		this.server.closeAllConnections();
		await new Promise<void>((resolve) => this.server.close(() => resolve()));
	}
}
