import {
	chatCompletionChunkSchema,
	chatCompletionSchema,
	chatErrorBodySchema,
	type ChatCompletionChunk,
	type ChatMessage,
} from '../../shared/schemas';
import type { RunningEmulator } from '../../emulator';
import { call, emulatorFor } from './helpers';

let emulator: RunningEmulator;
beforeAll(async () => {
	emulator = await emulatorFor();
});
afterAll(() => emulator.close());

const CONVERSATION: ChatMessage[] = [
	{ role: 'system', content: 'You are a concise assistant.' },
	{ role: 'user', content: 'What is an interruptible GPU node?' },
	{ role: 'assistant', content: 'A node that can be reclaimed at any time.' },
	{ role: 'user', content: 'How should I plan capacity for that?' },
];

const complete = (body: unknown) =>
	call(`${emulator.chatUrl}/v1/chat/completions`, 'POST', null, { body });

/** Splits an SSE body into its events, checking the framing of each. */
function events(text: string): string[] {
	expect(text.endsWith('\n\n')).toBe(true);
	return text.slice(0, -2).split('\n\n');
}

function chunksOf(text: string): ChatCompletionChunk[] {
	return events(text)
		.filter((event) => event.startsWith('data: {'))
		.map((event) => chatCompletionChunkSchema.parse(JSON.parse(event.slice('data: '.length))));
}

describe('chat completions', () => {
	it('answers with a readable reply that depends on the conversation, and usage counts', async () => {
		const reply = await complete({ model: 'any', messages: CONVERSATION });
		expect(reply.status).toBe(200);
		const completion = chatCompletionSchema.parse(reply.json());
		expect(completion.object).toBe('chat.completion');
		const [choice] = completion.choices;
		expect(choice?.message.role).toBe('assistant');
		expect(choice?.finish_reason).toBe('stop');
		const content = choice?.message.content ?? '';
		expect(content).toContain('How should I plan capacity for that?');
		expect(content).toContain('2 earlier messages');
		expect(content).toContain('You are a concise assistant.');
		const { usage } = completion;
		expect(usage.completion_tokens).toBe(content.split(' ').length);
		expect(usage.prompt_tokens).toBeGreaterThan(20);
		expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
	});

	it('is deterministic for the same messages and differs for others', async () => {
		const text = async (messages: ChatMessage[]) =>
			chatCompletionSchema.parse((await complete({ messages })).json()).choices[0]?.message.content;
		const first = await text([{ role: 'user', content: 'Hello there' }]);
		expect(await text([{ role: 'user', content: 'Hello there' }])).toBe(first);
		expect(await text([{ role: 'user', content: 'Something else' }])).not.toBe(first);
		expect(first).toContain('first turn');
	});

	it('honours max_tokens by cutting words, with finish_reason length', async () => {
		const completion = chatCompletionSchema.parse(
			(await complete({ messages: CONVERSATION, max_tokens: 5 })).json(),
		);
		expect(completion.choices[0]?.message.content?.split(' ')).toHaveLength(5);
		expect(completion.choices[0]?.finish_reason).toBe('length');
		expect(completion.usage.completion_tokens).toBe(5);
	});

	it('streams server-sent events: role first, content in pieces, a keep-alive comment, finish_reason, [DONE]', async () => {
		const whole = chatCompletionSchema.parse((await complete({ messages: CONVERSATION })).json())
			.choices[0]?.message.content;
		const reply = await complete({ messages: CONVERSATION, stream: true });
		expect(reply.status).toBe(200);
		expect(reply.headers['content-type']).toBe('text/event-stream');
		const all = events(reply.text);
		expect(all.at(-1)).toBe('data: [DONE]');
		expect(all).toContain(': keep-alive');
		for (const event of all) expect(event).toMatch(/^(data: .+|: keep-alive)$/s);
		const chunks = chunksOf(reply.text);
		expect(chunks[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: '' });
		const pieces = chunks.slice(1, -1).map((chunk) => chunk.choices[0]?.delta.content ?? '');
		expect(pieces.length).toBeGreaterThan(3);
		expect(pieces.join('')).toBe(whole);
		expect(chunks.slice(0, -1).every((chunk) => chunk.choices[0]?.finish_reason === null)).toBe(
			true,
		);
		expect(chunks.at(-1)?.choices[0]).toEqual(
			expect.objectContaining({ delta: {}, finish_reason: 'stop' }),
		);
		expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
	});

	it('ends a stream cut by max_tokens with finish_reason length', async () => {
		const reply = await complete({ messages: CONVERSATION, stream: true, max_tokens: 7 });
		const chunks = chunksOf(reply.text);
		expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('length');
		expect(
			chunks
				.map((chunk) => chunk.choices[0]?.delta.content ?? '')
				.join('')
				.split(' '),
		).toHaveLength(7);
	});

	it.each([
		[{ messages: [] }, 'messages'],
		[{ messages: [{ role: 'robot', content: 'hi' }] }, 'messages.0.role'],
		[{ messages: [{ role: 'user', content: 'hi' }], max_tokens: 0 }, 'max_tokens'],
		[{ messages: [{ role: 'user', content: 'hi' }], temperature: 3 }, 'temperature'],
		[{ messages: [{ role: 'user', content: 'hi' }], stream: 'yes' }, 'stream'],
		[{ prompt: 'hi' }, 'messages'],
	])('refuses invalid body %# with 422 {error, error_type: validation}', async (body, field) => {
		const reply = await complete(body);
		expect(reply.status).toBe(422);
		const error = chatErrorBodySchema.parse(reply.json());
		expect(error.error_type).toBe('validation');
		expect(String(error.error)).toContain(field);
	});

	it('refuses a body that is not JSON and a prompt longer than the model takes', async () => {
		const raw = await call(`${emulator.chatUrl}/v1/chat/completions`, 'POST', null, { raw: '{' });
		expect(raw.status).toBe(422);
		expect(chatErrorBodySchema.parse(raw.json()).error_type).toBe('validation');
		const long = await complete({ messages: [{ role: 'user', content: 'word '.repeat(5000) }] });
		expect(long.status).toBe(422);
		expect(String(chatErrorBodySchema.parse(long.json()).error)).toContain('4096');
	});

	it('describes the model on /health, /info and /v1/models', async () => {
		expect((await call(`${emulator.chatUrl}/health`, 'GET', null)).status).toBe(200);
		const info = (await call(`${emulator.chatUrl}/info`, 'GET', null)).json();
		expect(info).toEqual(
			expect.objectContaining({
				model_id: expect.any(String),
				max_input_tokens: 4096,
				max_total_tokens: 8192,
			}),
		);
		const models = (await call(`${emulator.chatUrl}/v1/models`, 'GET', null)).json();
		expect(models).toEqual({
			object: 'list',
			data: [
				expect.objectContaining({ id: (info as { model_id: string }).model_id, object: 'model' }),
			],
		});
	});

	it('can break a stream part-way with an error event after the 200 (fault)', async () => {
		const faulty = await emulatorFor({ faults: { streamErrorRate: 1, surfaces: ['chat'] } });
		try {
			const reply = await call(`${faulty.chatUrl}/v1/chat/completions`, 'POST', null, {
				body: { messages: CONVERSATION, stream: true },
			});
			expect(reply.status).toBe(200);
			const all = events(reply.text);
			expect(all).not.toContain('data: [DONE]');
			const last = all.at(-1) ?? '';
			expect(last.startsWith('data: {"error":')).toBe(true);
			expect(chatErrorBodySchema.parse(JSON.parse(last.slice('data: '.length)))).toEqual(
				expect.objectContaining({
					error: expect.objectContaining({ message: expect.any(String) }),
				}),
			);
			expect(chunksOf(reply.text.replace(last, '')).length).toBeGreaterThan(1);
		} finally {
			await faulty.close();
		}
	});
});
