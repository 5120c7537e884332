import { CHAT_MODEL_ID } from '../../emulator';
import { StreamError } from '../../shared/errors';
import { WorkloadClient } from '../../shared/client';
import { chatCompletionSchema } from '../../shared/schemas';
import { sseData } from '../../shared/sse';
import { useEmulator } from '../support/emulator';
import { FakeClock } from '../support/fake-clock';

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
	const setup = useEmulator();
	let client: WorkloadClient;
	beforeEach(() => {
		client = new WorkloadClient({
			serviceUrl: setup.emulator.chatUrl,
			transport: setup.transport,
			clock: new FakeClock(),
		});
	});

	const request = { messages: [{ role: 'user' as const, content: 'hello, how are you today?' }] };

	it('yields deltas and collects the whole reply with usage', async () => {
		// The same request unstreamed, asked without the client: what the stream must add up to.
		const whole = await fetch(`${setup.emulator.chatUrl}/v1/chat/completions`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify(request),
		});
		const completion = chatCompletionSchema.parse(await whole.json());
		setup.emulator.resetLogs();
		await expect(client.chat.collect(request)).resolves.toEqual({
			id: expect.stringMatching(/^chatcmpl-/),
			model: CHAT_MODEL_ID,
			text: completion.choices[0]?.message.content,
			toolCalls: [],
			finishReason: 'stop',
			usage: completion.usage,
		});
		// Servers that report usage only when asked are asked.
		expect(JSON.parse(setup.emulator.requests[0]?.body ?? '{}')).toMatchObject({
			stream: true,
			stream_options: { include_usage: true },
		});
	});

	it('surfaces an error sent after the stream started', async () => {
		setup.emulator.setFaults({ surfaces: ['chat'], sequence: ['stream-error'] });
		const error = await client.chat.collect(request).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(StreamError);
		expect(error).toMatchObject({ errorType: 'generation' });
		expect((error as Error).message).toContain('the emulated GPU stopped responding');
		expect(setup.emulator.requests).toEqual([
			expect.objectContaining({ status: 200, fault: 'stream-error' }),
		]);
	});

	it('treats a stream cut short (no [DONE]) as an error', async () => {
		setup.emulator.setFaults({ surfaces: ['chat'], sequence: ['stream-cut'] });
		await expect(client.chat.collect(request)).rejects.toThrow('ended before it was complete');
		expect(setup.emulator.requests).toEqual([
			expect.objectContaining({ status: 200, fault: 'stream-cut' }),
		]);
	});

	it('reports a 422 before any stream with the server text', async () => {
		await expect(client.chat.collect({ ...request, max_tokens: 10_000 })).rejects.toThrow(
			'Input validation error: inputs tokens + max_tokens must be at most 8192',
		);
		expect(setup.emulator.requests.map((r) => r.status)).toEqual([422]);
	});
});

describe('a text workload starting from zero', () => {
	const emulatorClock = new FakeClock();
	const setup = useEmulator(() => ({ clock: emulatorClock, chatColdStartMs: 30_000 }));

	it('is not ready, asked once per check, until its replica has started; then it answers', async () => {
		const clientClock = new FakeClock();
		const client = new WorkloadClient({
			serviceUrl: setup.emulator.chatUrl,
			transport: setup.transport,
			clock: clientClock,
		});
		expect(await client.chat.ready()).toBe(false);
		// A check is a probe: its 503 is the answer, not a failure to repeat.
		expect(clientClock.sleeps).toEqual([]);
		expect(setup.emulator.requests.filter((r) => r.path.endsWith('/health'))).toHaveLength(1);
		emulatorClock.advance(29_000);
		expect(await client.chat.ready()).toBe(false);
		emulatorClock.advance(1_000);
		expect(await client.chat.ready()).toBe(true);
		const reply = await client.chat.collect({ messages: [{ role: 'user', content: 'hi there' }] });
		expect(reply.text.length).toBeGreaterThan(0);
	});
});
