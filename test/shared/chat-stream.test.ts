import { StreamError } from '../../shared/errors';
import { WorkloadClient } from '../../shared/client';
import { sseData } from '../../shared/sse';
import { FakeClock } from '../support/fake-clock';
import { useScriptedServer } from '../support/scripted-server';

const chunk = (content: string, extra: Record<string, unknown> = {}) =>
	`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }], ...extra })}\n\n`;

async function collect(iterable: AsyncIterable<string>): Promise<string[]> {
	const out: string[] = [];
	for await (const item of iterable) out.push(item);
	return out;
}

async function* bytes(...parts: string[]): AsyncIterable<Uint8Array> {
	for (const part of parts) yield new TextEncoder().encode(part);
}

describe('server-sent events', () => {
	it('joins events split across chunks, skips comments and reads CRLF', async () => {
		expect(
			await collect(
				sseData(bytes('data: one\n', '\n: keep-alive\n\nda', 'ta: two\r\n\r\ndata: [DONE]\n\n')),
			),
		).toEqual(['one', 'two', '[DONE]']);
	});

	it('joins multi-line data and flushes a final event without a blank line', async () => {
		expect(await collect(sseData(bytes('data: a\ndata: b\n\ndata: last')))).toEqual([
			'a\nb',
			'last',
		]);
	});

	it('decodes a multi-byte character split between chunks', async () => {
		const encoded = new TextEncoder().encode('data: é\n\n');
		async function* split(): AsyncIterable<Uint8Array> {
			yield encoded.slice(0, 7);
			yield encoded.slice(7);
		}
		expect(await collect(sseData(split()))).toEqual(['é']);
	});
});

describe('chat streaming over loopback HTTP', () => {
	const { server, transport } = useScriptedServer();
	let client: WorkloadClient;
	beforeAll(() => {
		client = new WorkloadClient({ serviceUrl: server.url, transport, clock: new FakeClock() });
	});
	beforeEach(() => server.reset());

	const sse = (body: string) => ({
		status: 200,
		headers: { 'content-type': 'text/event-stream' },
		body,
	});
	const request = { messages: [{ role: 'user' as const, content: 'hello' }] };

	it('yields deltas and collects the whole reply with usage', async () => {
		const usage = { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 };
		server.script(
			sse(
				chunk('Hel') +
					': keep-alive\n\n' +
					chunk('lo') +
					`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage })}\n\n` +
					'data: [DONE]\n\n',
			),
		);
		await expect(client.chat.collect(request)).resolves.toEqual({
			id: 'c1',
			model: 'm',
			text: 'Hello',
			toolCalls: [],
			finishReason: 'stop',
			usage,
		});
		// Servers that report usage only when asked are asked.
		expect(JSON.parse(server.received[0].body)).toMatchObject({
			stream: true,
			stream_options: { include_usage: true },
		});
	});

	it('surfaces an error sent after the stream started', async () => {
		server.script(
			sse(
				chunk('partial ') +
					'data: {"error": {"message": "CUDA out of memory"}, "error_type": "generation"}\n\n',
			),
		);
		const error = await client.chat.collect(request).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(StreamError);
		expect(error).toMatchObject({ errorType: 'generation' });
		expect((error as Error).message).toContain('CUDA out of memory');
	});

	it('treats a stream cut short (no [DONE]) as an error', async () => {
		server.script(sse(chunk('half')));
		await expect(client.chat.collect(request)).rejects.toThrow('ended before it was complete');
	});

	it('reports a 422 before any stream with the server text', async () => {
		server.script({
			status: 422,
			body: JSON.stringify({
				error: 'Input validation error: max_tokens too large',
				error_type: 'validation',
			}),
		});
		await expect(client.chat.collect(request)).rejects.toThrow(
			'Input validation error: max_tokens too large',
		);
	});
});
