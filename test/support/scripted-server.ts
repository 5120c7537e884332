import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../../shared/clock';
import { ManagementClient, type ManagementClientOptions } from '../../shared/client';
import { UndiciTransport } from '../../shared/runtime/undici-transport';

export interface ScriptedReply {
	status: number;
	headers?: Record<string, string>;
	body?: string;
	/** Destroy the socket instead of answering (after reading the request). */
	reset?: boolean;
	/** Never answer, so the client's timeout ends the request; the socket closes with the server. */
	hang?: boolean;
}

export interface ReceivedRequest {
	method: string;
	url: string;
	headers: IncomingMessage['headers'];
	body: string;
}

/**
 * A real loopback HTTP server that answers from a script, for exercising the client's handling of
 * statuses, bodies and broken connections over genuine sockets.
 */
export class ScriptedServer {
	readonly received: ReceivedRequest[] = [];
	private replies: Array<ScriptedReply | ((request: ReceivedRequest) => ScriptedReply)> = [];
	private fallback: ScriptedReply = { status: 500, body: 'script exhausted' };
	private server?: Server;
	url = '';

	async start(): Promise<this> {
		this.server = createServer((req, res) => {
			const chunks: Buffer[] = [];
			req.on('data', (chunk: Buffer) => chunks.push(chunk));
			req.on('end', () => {
				const received = {
					method: req.method ?? '',
					url: req.url ?? '',
					headers: req.headers,
					body: Buffer.concat(chunks).toString(),
				};
				this.received.push(received);
				const next = this.replies.shift() ?? this.fallback;
				const reply = typeof next === 'function' ? next(received) : next;
				if (reply.reset) {
					req.socket.destroy();
					return;
				}
				if (reply.hang) return;
				res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
				res.end(reply.body ?? '');
			});
		});
		await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
		this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
		return this;
	}

	/** Replies in order; a function computes its reply from the request it answers. */
	script(...replies: Array<ScriptedReply | ((request: ReceivedRequest) => ScriptedReply)>): void {
		this.replies.push(...replies);
	}

	always(reply: ScriptedReply): void {
		this.fallback = reply;
	}

	reset(): void {
		this.received.length = 0;
		this.replies = [];
		this.fallback = { status: 500, body: 'script exhausted' };
	}

	async close(): Promise<void> {
		this.server?.closeAllConnections();
		await new Promise<void>((resolve) => this.server?.close(() => resolve()));
	}
}

export const jsonReply = (
	status: number,
	body: unknown,
	headers: Record<string, string> = {},
): ScriptedReply => ({
	status,
	headers,
	body: JSON.stringify(body),
});

export const problem = (
	status: number,
	title: string,
	detail?: string,
	headers: Record<string, string> = {},
): ScriptedReply => ({
	status,
	headers: { 'content-type': 'application/problem+json', ...headers },
	body: JSON.stringify({ type: 'about:blank', title, status, ...(detail ? { detail } : {}) }),
});

/**
 * A scripted server and the client transport that talks to it, started before the enclosing
 * describe block's tests and closed after them.
 */
export function useScriptedServer(): { server: ScriptedServer; transport: UndiciTransport } {
	const server = new ScriptedServer();
	const transport = new UndiciTransport();
	beforeAll(() => server.start());
	afterAll(async () => {
		await transport.close();
		await server.close();
	});
	return { server, transport };
}

/** A management client of organization `acme` talking to `server`, without rate limit or jitter. */
export function scriptedManagementClient(
	server: ScriptedServer,
	transport: UndiciTransport,
	clock: Clock,
	options: Partial<ManagementClientOptions> = {},
): ManagementClient {
	return new ManagementClient({
		baseUrl: `${server.url}/api/public`,
		organization: 'acme',
		transport,
		clock,
		rateLimit: false,
		random: () => 0.5,
		...options,
	});
}
