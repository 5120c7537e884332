import {
	LIMITS,
	chatRequestSchema,
	createJobRequestSchema,
	createQueueRequestSchema,
	imagePromptRequestSchema,
	inferenceEndpointPageSchema,
	jobSchema,
	jobWebhookPayloadSchema,
	pageQuerySchema,
	queueSchema,
	textToImageRequestSchema,
	transcriptionInputSchema,
	uuidSchema,
} from '../../shared/schemas';
import { ValidationError } from '../../shared/errors';
import { parseOrThrow } from '../../shared/validation';
import { jobFixture } from '../support/fixtures';

function messageOf(run: () => unknown): string {
	try {
		run();
	} catch (error) {
		if (error instanceof ValidationError) return error.message;
		throw error;
	}
	throw new Error('expected a ValidationError');
}

const chars = (n: number, c = 'a') => c.repeat(n);

describe('names (organization, project, endpoint, queue)', () => {
	it.each([
		['ab', true],
		[`a${chars(61, 'b')}c`, true],
		['a', false],
		[`a${chars(63)}`, false],
		['My Queue', false],
		['1queue', false],
		['queue-', false],
		['q-1', true],
	])('queue name %j valid=%s', (name, valid) => {
		expect(createQueueRequestSchema.safeParse({ name }).success).toBe(valid);
	});

	it('names the field, the value and the rule', () => {
		expect(
			messageOf(() => parseOrThrow(createQueueRequestSchema, { name: 'My Queue' }, 'queue')),
		).toBe(
			'queue name "My Queue" must be 2-63 lower-case letters, digits or hyphens, starting with a letter and ending with a letter or digit',
		);
	});
});

describe('queue request and response', () => {
	it('accepts a 500-character description and rejects 501', () => {
		expect(
			createQueueRequestSchema.safeParse({ name: 'qq', description: chars(500) }).success,
		).toBe(true);
		expect(
			messageOf(() =>
				parseOrThrow(createQueueRequestSchema, { name: 'qq', description: chars(501) }, 'queue'),
			),
		).toContain(
			'queue description "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…" (501 characters) must be at most 500 characters',
		);
	});

	it('bounds display_name to 2-63 characters', () => {
		expect(createQueueRequestSchema.safeParse({ name: 'qq', display_name: 'Ab' }).success).toBe(
			true,
		);
		expect(
			createQueueRequestSchema.safeParse({ name: 'qq', display_name: chars(63) }).success,
		).toBe(true);
		expect(createQueueRequestSchema.safeParse({ name: 'qq', display_name: 'A' }).success).toBe(
			false,
		);
		expect(
			createQueueRequestSchema.safeParse({ name: 'qq', display_name: chars(64) }).success,
		).toBe(false);
	});

	it('rejects unknown request fields by name', () => {
		expect(
			messageOf(() =>
				parseOrThrow(createQueueRequestSchema, { name: 'qq', colour: 'red' }, 'queue'),
			),
		).toBe('queue has unknown field "colour"');
	});

	it('keeps unknown response fields and caps container groups at 100', () => {
		const queue = {
			id: '3f2a9c1e-8b4d-4e6f-9a0b-1c2d3e4f5a6b',
			name: 'qq',
			display_name: 'qq',
			container_groups: [],
			create_time: '2026-01-01T00:00:00Z',
			update_time: '2026-01-01T00:00:00Z',
			brand_new_field: 1,
		};
		expect(queueSchema.parse(queue)).toHaveProperty('brand_new_field', 1);
		const group = { id: queue.id, name: 'g' };
		expect(
			queueSchema.safeParse({ ...queue, container_groups: Array(100).fill(group) }).success,
		).toBe(true);
		expect(
			queueSchema.safeParse({ ...queue, container_groups: Array(101).fill(group) }).success,
		).toBe(false);
	});
});

describe('paging', () => {
	it.each([
		[{ page: 1 }, true],
		[{ page: LIMITS.pageMax }, true],
		[{ page: 0 }, false],
		[{ page: LIMITS.pageMax + 1 }, false],
		[{ page: 1.5 }, false],
		[{ page_size: 1 }, true],
		[{ page_size: 100 }, true],
		[{ page_size: 0 }, false],
		[{ page_size: 101 }, false],
	])('%j valid=%s', (query, valid) => {
		expect(pageQuerySchema.safeParse(query).success).toBe(valid);
	});

	it('explains a page size of 101', () => {
		expect(messageOf(() => parseOrThrow(pageQuerySchema, { page_size: 101 }))).toBe(
			'page_size 101 must be between 1 and 100',
		);
	});

	it('bounds a page of endpoints: at most 100 items, total_size 0..2147483647', () => {
		const page = { items: [], page: 1, page_size: 100, total_size: 0 };
		expect(inferenceEndpointPageSchema.safeParse(page).success).toBe(true);
		expect(inferenceEndpointPageSchema.safeParse({ ...page, total_size: -1 }).success).toBe(false);
		expect(
			inferenceEndpointPageSchema.safeParse({ ...page, total_size: LIMITS.totalSizeMax + 1 })
				.success,
		).toBe(false);
	});
});

describe('job requests', () => {
	const url = (length: number) => `https://h.io/${chars(length - 'https://h.io/'.length)}`;

	it('accepts a 2048-character webhook URL and rejects 2049', () => {
		expect(createJobRequestSchema.safeParse({ input: {}, webhook_url: url(2048) }).success).toBe(
			true,
		);
		expect(
			messageOf(() =>
				parseOrThrow(createJobRequestSchema, { input: {}, webhook_url: url(2049) }, 'job'),
			),
		).toContain('must be at most 2048 characters');
	});

	it.each(['', 'not a url', 'ftp://files.example/x', 'javascript:alert(1)'])(
		'rejects webhook URL %j',
		(webhook) => {
			expect(createJobRequestSchema.safeParse({ input: {}, webhook_url: webhook }).success).toBe(
				false,
			);
		},
	);

	it('accepts 20 metadata properties and rejects 21', () => {
		const metadata = (n: number) =>
			Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
		expect(createJobRequestSchema.safeParse({ input: 1, metadata: metadata(20) }).success).toBe(
			true,
		);
		expect(
			messageOf(() =>
				parseOrThrow(createJobRequestSchema, { input: 1, metadata: metadata(21) }, 'job'),
			),
		).toBe('job metadata (an object) must have at most 20 properties');
	});

	it('requires input but accepts any JSON value, null included', () => {
		expect(messageOf(() => parseOrThrow(createJobRequestSchema, {}, 'job'))).toBe(
			'job input is required',
		);
		expect(createJobRequestSchema.safeParse({ input: null }).success).toBe(true);
	});

	it('rejects a job id that is not a UUID', () => {
		expect(messageOf(() => parseOrThrow(uuidSchema, '12345', 'job id'))).toContain(
			'job id "12345" must be a job id (a UUID',
		);
	});
});

describe('job responses', () => {
	it('accepts a job and keeps unknown fields', () => {
		expect(jobSchema.parse({ ...jobFixture(), surprise: true })).toHaveProperty('surprise', true);
	});

	it('names a missing required field', () => {
		const { status: _status, ...job } = jobFixture();
		const result = jobSchema.safeParse(job);
		expect(result.success).toBe(false);
		expect(result.error?.issues[0].path).toEqual(['status']);
	});

	it('caps events at 1000', () => {
		const event = { action: 'started', time: '2026-01-01T00:00:00Z' };
		expect(jobSchema.safeParse(jobFixture({ events: Array(1000).fill(event) })).success).toBe(true);
		expect(jobSchema.safeParse(jobFixture({ events: Array(1001).fill(event) })).success).toBe(
			false,
		);
	});

	it('reads webhook events keyed `type` as `action`', () => {
		const payload = {
			type: 'inference_endpoint.job.succeeded',
			timestamp: '2026-01-01T00:00:05Z',
			data: {
				...jobFixture({ status: 'succeeded' }),
				events: [{ type: 'created', time: '2026-01-01T00:00:00Z' }],
			},
		};
		expect(jobWebhookPayloadSchema.parse(payload).data.events[0].action).toBe('created');
	});
});

describe('transcription input', () => {
	const base = { url: 'https://files.example/a.mp3?sig=1' };

	it('accepts every documented option', () => {
		expect(
			transcriptionInputSchema.safeParse({
				...base,
				language_code: 'pt-BR',
				return_as_file: false,
				word_level_timestamps: true,
				sentence_level_timestamps: true,
				diarization: true,
				translate: 'to_eng',
				llm_translation: 'german, Spanish',
				summarize: 100,
				srt: true,
			}).success,
		).toBe(true);
	});

	it('requires a URL', () => {
		expect(messageOf(() => parseOrThrow(transcriptionInputSchema, {}, 'transcription'))).toBe(
			'transcription url is required',
		);
	});

	it('names unsupported translation languages and lists the supported ones', () => {
		expect(
			messageOf(() =>
				parseOrThrow(transcriptionInputSchema, { ...base, llm_translation: 'German,Klingon' }),
			),
		).toContain(
			'has unsupported language "Klingon"; supported: English, French, German, Italian, Portuguese, Hindi, Spanish, Thai',
		);
	});

	it('allows translate only to English', () => {
		expect(transcriptionInputSchema.safeParse({ ...base, translate: 'to_fra' }).success).toBe(
			false,
		);
	});

	it('rejects a negative summary length', () => {
		expect(transcriptionInputSchema.safeParse({ ...base, summarize: -1 }).success).toBe(false);
		expect(transcriptionInputSchema.safeParse({ ...base, summarize: 0 }).success).toBe(true);
	});
});

describe('image requests', () => {
	const saveNode = {
		class_type: 'SaveImage',
		inputs: { filename_prefix: 'out', images: ['1', 0] },
	};
	const loader = { class_type: 'EmptyLatentImage', inputs: { width: 512, height: 512 } };

	it('requires a save-image node in a graph', () => {
		expect(
			imagePromptRequestSchema.safeParse({ prompt: { '1': loader, '2': saveNode } }).success,
		).toBe(true);
		expect(
			messageOf(() => parseOrThrow(imagePromptRequestSchema, { prompt: { '1': loader } })),
		).toContain('must contain a save-image node');
	});

	it('rejects links to nodes that are not in the graph', () => {
		expect(
			messageOf(() => parseOrThrow(imagePromptRequestSchema, { prompt: { '2': saveNode } })),
		).toContain(
			'prompt.2.inputs.images (a list of 2) links to node "1", which is not in the graph',
		);
	});

	it.each([
		[256, true],
		[2048, true],
		[255, false],
		[2049, false],
	])('text-to-image width %i valid=%s', (width, valid) => {
		expect(textToImageRequestSchema.safeParse({ input: { prompt: 'a fox', width } }).success).toBe(
			valid,
		);
	});

	it('rejects an empty prompt', () => {
		expect(textToImageRequestSchema.safeParse({ input: { prompt: '   ' } }).success).toBe(false);
	});
});

describe('chat requests', () => {
	it.each([
		[{ messages: [] }, 'messages (a list of 0) must contain at least one message'],
		[
			{ messages: [{ role: 'robot', content: 'hi' }] },
			'messages.0.role "robot" must be "system", "user", "assistant" or "tool"',
		],
		[
			{ messages: [{ role: 'user', content: 'hi' }], max_tokens: 0 },
			'max_tokens 0 must be at least 1',
		],
		[{ messages: [{ role: 'user', content: 'hi' }], temperature: 3 }, 'temperature 3 must be 0-2'],
	])('%j', (request, message) => {
		expect(messageOf(() => parseOrThrow(chatRequestSchema, request))).toBe(message);
	});
});
