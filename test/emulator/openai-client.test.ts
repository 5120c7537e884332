import OpenAI from 'openai';
import type {
	ChatCompletionCreateParamsNonStreaming,
	ChatCompletionMessageParam,
	ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { z } from 'zod/v4';
import type { RunningEmulator } from '../../emulator';
import { emulatorFor } from './helpers';

/**
 * The emulated text workload spoken to by a client nobody here wrote: the official `openai` package,
 * over loopback, with the workload's gateway key in the Service-Api-Key header. Each field of the
 * dialect is sent both whole and streamed.
 */

let emulator: RunningEmulator;
let client: OpenAI;
beforeAll(async () => {
	emulator = await emulatorFor({ workloadAuth: true });
	client = new OpenAI({
		baseURL: `${emulator.chatUrl}/v1`,
		apiKey: 'unused',
		defaultHeaders: { 'Service-Api-Key': emulator.apiKey },
		maxRetries: 0,
	});
});
afterAll(() => emulator.close());

const QUESTION: ChatCompletionMessageParam[] = [
	{ role: 'system', content: 'You are a concise assistant.' },
	{ role: 'user', content: 'What is an interruptible GPU node?' },
];
type Params = Omit<ChatCompletionCreateParamsNonStreaming, 'stream' | 'model'> & { model?: string };

const forecastArguments = z.strictObject({
	city: z.string().min(2).max(40),
	days: z.number().int().min(1).max(7),
	unit: z.enum(['celsius', 'fahrenheit']),
});
const WEATHER: ChatCompletionTool = {
	type: 'function',
	function: {
		name: 'get_forecast',
		description: 'Weather forecast for a city',
		parameters: z.toJSONSchema(forecastArguments) as Record<string, unknown>,
	},
};
const ENDPOINTS: ChatCompletionTool = {
	type: 'function',
	function: {
		name: 'list_endpoints',
		description: 'List the inference endpoints of the catalogue',
		parameters: { type: 'object', properties: {} },
	},
};

interface Reply {
	content: string | null;
	toolCalls: { id: string; name: string; arguments: string }[];
	finishReason: string | null;
	usage?: {
		prompt_tokens: number;
		completion_tokens: number;
		total_tokens: number;
	} | null;
	logprobs: { token: string; top_logprobs: unknown[] }[];
	choices: number;
}

async function whole(params: Params): Promise<Reply> {
	const completion = await client.chat.completions.create({
		model: 'any',
		...params,
		stream: false,
	});
	const [choice] = completion.choices;
	if (!choice) throw new Error('no choice');
	return {
		content: choice.message.content,
		toolCalls: (choice.message.tool_calls ?? []).flatMap((call) =>
			call.type === 'function'
				? [
						{
							id: call.id,
							name: call.function.name,
							arguments: call.function.arguments,
						},
					]
				: [],
		),
		finishReason: choice.finish_reason,
		usage: completion.usage,
		logprobs: choice.logprobs?.content ?? [],
		choices: completion.choices.length,
	};
}

async function streamed(
	params: Params,
	includeUsage = true,
): Promise<Reply & { chunks: number; usageChunks: number }> {
	const stream = await client.chat.completions.create({
		model: 'any',
		...params,
		stream: true,
		stream_options: { include_usage: includeUsage },
	});
	const reply: Reply & { chunks: number; usageChunks: number } = {
		content: null,
		toolCalls: [],
		finishReason: null,
		logprobs: [],
		choices: 0,
		chunks: 0,
		usageChunks: 0,
	};
	const indexes = new Set<number>();
	for await (const chunk of stream) {
		reply.chunks++;
		if (chunk.usage) {
			reply.usage = chunk.usage;
			reply.usageChunks++;
		}
		for (const choice of chunk.choices) {
			indexes.add(choice.index);
			if (choice.delta.content) reply.content = (reply.content ?? '') + choice.delta.content;
			for (const piece of choice.delta.tool_calls ?? []) {
				const call = (reply.toolCalls[piece.index] ??= {
					id: '',
					name: '',
					arguments: '',
				});
				if (piece.id) call.id = piece.id;
				if (piece.function?.name) call.name += piece.function.name;
				if (piece.function?.arguments) call.arguments += piece.function.arguments;
			}
			reply.logprobs.push(...(choice.logprobs?.content ?? []));
			if (choice.finish_reason) reply.finishReason = choice.finish_reason;
		}
	}
	reply.choices = indexes.size;
	return reply;
}

/** Runs a request both ways and checks that the stream assembles to the whole answer. */
async function both(params: Params): Promise<Reply> {
	const [one, other] = [await whole(params), await streamed(params)];
	expect(other.content).toBe(one.content);
	expect(other.toolCalls).toEqual(one.toolCalls);
	expect(other.finishReason).toBe(one.finishReason);
	expect(other.usage).toEqual(one.usage);
	expect(other.usageChunks).toBe(1);
	return one;
}

describe('the official openai client against the emulated text workload', () => {
	it('plain completion: text, finish_reason stop, usage (whole and streamed)', async () => {
		const reply = await both({ messages: QUESTION });
		expect(reply.content).toContain('What is an interruptible GPU node?');
		expect(reply.finishReason).toBe('stop');
		expect(reply.usage?.total_tokens).toBe(
			(reply.usage?.prompt_tokens ?? 0) + (reply.usage?.completion_tokens ?? 0),
		);
	});

	it('stream_options.include_usage: usage only in the last chunk; without it, on the finish chunk as the server does', async () => {
		const withUsage = await streamed({ messages: QUESTION }, true);
		expect(withUsage.usageChunks).toBe(1);
		const stream = await client.chat.completions.create({
			model: 'any',
			messages: QUESTION,
			stream: true,
			stream_options: { include_usage: true },
		});
		const chunks = [];
		for await (const chunk of stream) chunks.push(chunk);
		expect(chunks.at(-1)?.choices).toEqual([]);
		expect(chunks.at(-1)?.usage?.completion_tokens).toBeGreaterThan(0);
		expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
	});

	it.each<[string, Params]>([
		['max_tokens', { messages: QUESTION, max_tokens: 4 }],
		['max_completion_tokens', { messages: QUESTION, max_completion_tokens: 4 }],
	])('%s cuts the reply with finish_reason length', async (_field, params) => {
		const reply = await both(params);
		expect(reply.content?.split(' ')).toHaveLength(4);
		expect(reply.finishReason).toBe('length');
		expect(reply.usage?.completion_tokens).toBe(4);
	});

	it.each<[string, Params]>([
		['temperature', { messages: QUESTION, temperature: 0.2 }],
		['top_p', { messages: QUESTION, top_p: 0.9 }],
		['frequency_penalty', { messages: QUESTION, frequency_penalty: 0.5 }],
		['presence_penalty', { messages: QUESTION, presence_penalty: -0.5 }],
		['seed', { messages: QUESTION, seed: 42 }],
		['n', { messages: QUESTION, n: 2 }],
		['logit_bias', { messages: QUESTION, logit_bias: { '50256': -100 } }],
		['user', { messages: QUESTION, user: 'user-1234' }],
		['parallel_tool_calls', { messages: QUESTION, tools: [WEATHER], parallel_tool_calls: false }],
		['response_format text', { messages: QUESTION, response_format: { type: 'text' } }],
	])('%s is accepted and the answer stays the deterministic one', async (_field, params) => {
		const plain = await whole({ messages: QUESTION });
		const reply = await both(params);
		expect(reply.content).toBe(plain.content);
		expect(reply.choices).toBe(1);
	});

	it.each<[string, Params['stop']]>([
		['a string', 'interruptible'],
		['a list', ['nothing here', 'interruptible']],
	])('stop given as %s ends the reply before the sequence', async (_kind, stop) => {
		const reply = await both({ messages: QUESTION, stop });
		expect(reply.content).toBe('You wrote: "What is an');
		expect(reply.finishReason).toBe('stop');
	});

	it('logprobs and top_logprobs: one entry per token, with the asked number of alternatives', async () => {
		const params: Params = {
			messages: QUESTION,
			max_tokens: 5,
			logprobs: true,
			top_logprobs: 3,
		};
		const one = await whole(params);
		const other = await streamed(params);
		for (const reply of [one, other]) {
			expect(reply.logprobs.map((entry) => entry.token).join('')).toBe(one.content);
			expect(reply.logprobs.every((entry) => entry.top_logprobs.length === 3)).toBe(true);
		}
	});

	it('content as a list of text parts reads as the joined text', async () => {
		const parts = await both({
			messages: [
				{
					role: 'user',
					content: [
						{ type: 'text', text: 'What is an ' },
						{ type: 'text', text: 'interruptible GPU node?' },
					],
				},
			],
		});
		expect(parts.content).toContain('"What is an interruptible GPU node?"');
	});

	it('tools: a prompt that asks for one gets a tool call whose arguments satisfy the JSON schema', async () => {
		const reply = await both({
			messages: [
				{
					role: 'user',
					content: 'Get the forecast for Paris this week, please.',
				},
			],
			tools: [WEATHER, ENDPOINTS],
		});
		expect(reply.finishReason).toBe('tool_calls');
		expect(reply.content).toBeNull();
		expect(reply.toolCalls).toHaveLength(1);
		const [call] = reply.toolCalls;
		expect(call?.name).toBe('get_forecast');
		expect(call?.id).toMatch(/^call_/);
		expect(forecastArguments.safeParse(JSON.parse(call?.arguments ?? '')).success).toBe(true);
	});

	it('tools: a prompt that asks for nothing a tool does gets text', async () => {
		const reply = await both({
			messages: QUESTION,
			tools: [WEATHER, ENDPOINTS],
		});
		expect(reply.finishReason).toBe('stop');
		expect(reply.toolCalls).toEqual([]);
	});

	it('tools named in the prompt are called together, each with its own index when streamed', async () => {
		const reply = await both({
			messages: [{ role: 'user', content: 'Call list_endpoints and get_forecast.' }],
			tools: [WEATHER, ENDPOINTS],
		});
		expect(reply.toolCalls.map((call) => call.name)).toEqual(['get_forecast', 'list_endpoints']);
		expect(new Set(reply.toolCalls.map((call) => call.id)).size).toBe(2);
	});

	it.each<[string, Params['tool_choice'], string[]]>([
		['required', 'required', ['get_forecast']],
		[
			'a named function',
			{ type: 'function', function: { name: 'list_endpoints' } },
			['list_endpoints'],
		],
		['none', 'none', []],
		['auto', 'auto', []],
	])('tool_choice %s decides whether a tool is called', async (_kind, toolChoice, names) => {
		const reply = await both({
			messages: QUESTION,
			tools: [WEATHER, ENDPOINTS],
			tool_choice: toolChoice,
		});
		expect(reply.toolCalls.map((call) => call.name)).toEqual(names);
		expect(reply.finishReason).toBe(names.length > 0 ? 'tool_calls' : 'stop');
	});

	it('an assistant tool call and the tool result (role "tool") are answered in text that uses the result', async () => {
		const first = await whole({
			messages: [{ role: 'user', content: 'Get the forecast for Paris.' }],
			tools: [WEATHER],
		});
		const [call] = first.toolCalls;
		if (!call) throw new Error('no tool call');
		const reply = await both({
			messages: [
				{ role: 'user', content: 'Get the forecast for Paris.' },
				// As n8n's OpenAI Chat Model node sends it: an empty list of parts next to the calls.
				{
					role: 'assistant',
					content: [],
					tool_calls: [
						{
							id: call.id,
							type: 'function',
							function: { name: call.name, arguments: call.arguments },
						},
					],
				},
				{
					role: 'tool',
					tool_call_id: call.id,
					content: 'Sunny, 24 degrees all week.',
				},
			],
			tools: [WEATHER],
		});
		expect(reply.finishReason).toBe('stop');
		expect(reply.content).toContain(
			'The tool get_forecast returned: "Sunny, 24 degrees all week."',
		);
	});

	it('response_format json_object returns a valid JSON object', async () => {
		const reply = await both({
			messages: QUESTION,
			response_format: { type: 'json_object' },
		});
		expect(JSON.parse(reply.content ?? '')).toEqual({
			answer: expect.stringContaining('interruptible GPU node'),
		});
	});

	it('response_format json_schema returns JSON that satisfies the schema', async () => {
		const summary = z.strictObject({
			title: z.string().max(30),
			points: z.array(z.string()).min(2).max(3),
			confidence: z.number().gt(0).lt(1),
			kind: z.enum(['fact', 'opinion']),
		});
		const reply = await both({
			messages: QUESTION,
			response_format: {
				type: 'json_schema',
				json_schema: {
					name: 'summary',
					schema: z.toJSONSchema(summary) as Record<string, unknown>,
					strict: true,
				},
			},
		});
		expect(summary.safeParse(JSON.parse(reply.content ?? '')).success).toBe(true);
	});

	it.each<[string, Record<string, unknown>, RegExp]>([
		[
			'an unknown field, named',
			{ messages: QUESTION, temprature: 0.2 },
			/unknown field .*temprature/,
		],
		[
			'stream_options without stream',
			{ messages: QUESTION, stream_options: { include_usage: true } },
			/stream_options .*only when stream is true/,
		],
		[
			'tool_choice naming a tool not offered',
			{
				messages: QUESTION,
				tools: [WEATHER],
				tool_choice: { type: 'function', function: { name: 'nope' } },
			},
			/tool_choice .*nope/,
		],
		[
			'a tool message answering no call',
			{
				messages: [...QUESTION, { role: 'tool', tool_call_id: 'call_x', content: 'hi' }],
			},
			/messages\.2\.tool_call_id/,
		],
		['more than 4 stop sequences', { messages: QUESTION, stop: ['a', 'b', 'c', 'd', 'e'] }, /stop/],
		[
			'an image part',
			{
				messages: [
					{
						role: 'user',
						content: [
							{
								type: 'image_url',
								image_url: { url: 'https://example.com/a.png' },
							},
						],
					},
				],
			},
			/messages\.0\.content/,
		],
	])('refuses %s with 422 naming the field', async (_case, body, message) => {
		const failure = await client.chat.completions
			.create({ model: 'any', ...(body as unknown as Params) })
			.then(
				() => undefined,
				(error: unknown) => error,
			);
		expect(failure).toBeInstanceOf(OpenAI.APIError);
		const apiError = failure as InstanceType<typeof OpenAI.APIError>;
		expect(apiError.status).toBe(422);
		expect(apiError.message).toMatch(message);
	});
});
