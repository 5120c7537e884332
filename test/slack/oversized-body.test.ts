import { Agent, request } from 'node:http';
import { Stack } from './harness';

/**
 * A refused oversized body must not break the connection a client pools for its next request:
 * the server reads the refused body to its end and closes the connection only once it has.
 */

const MB = 1024 * 1024;

/** `bodySent`: whether the server had read the whole body by the time its answer arrived. */
function post(
	agent: Agent,
	url: string,
	body: Buffer,
): Promise<{ status: number; bodySent: boolean }> {
	return new Promise((resolve, reject) => {
		const req = request(
			url,
			{
				method: 'POST',
				agent,
				headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
			},
			(res) => {
				const bodySent = req.writableFinished;
				res.resume();
				res.on('end', () => resolve({ status: res.statusCode ?? 0, bodySent }));
				res.on('error', reject);
			},
		);
		req.on('error', reject);
		req.end(body);
	});
}

describe('an oversized body on a kept-alive connection', () => {
	let stack: Stack;
	beforeAll(async () => {
		stack = await Stack.start({ webhooks: true });
	});
	afterAll(() => stack.close());

	for (const [route, size, url] of [
		['the job-webhook route', 25 * MB, () => stack.app.localWebhookUrl ?? ''],
		['/slack/events', 11 * MB, () => stack.app.eventsUrl ?? ''],
	] as const) {
		it(`${route}: answered 413 whole, and the next request on the same pool succeeds`, async () => {
			const agent = new Agent({ keepAlive: true, maxSockets: 1 });
			try {
				for (let round = 0; round < 3; round++) {
					const refused = await post(agent, url(), Buffer.alloc(size, 'x'));
					// Answering before the body is read leaves the client writing into a connection the server
					// no longer reads; the pool then hands a dead socket to the next request (ECONNRESET).
					expect(refused).toEqual({ status: 413, bodySent: true });
					const next = await post(agent, url(), Buffer.from('{"type": '));
					expect([400, 401]).toContain(next.status);
				}
			} finally {
				agent.destroy();
			}
		});
	}
});
