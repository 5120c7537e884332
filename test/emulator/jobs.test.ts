import { randomUUID } from 'node:crypto';
import { jobPageSchema, jobSchema, LIMITS, type Job, type JobEvent } from '../../shared/schemas';
import type { RunningEmulator } from '../../emulator';
import { appendEvent } from '../../emulator/jobs';
import { eventually } from '../support/eventually';
import { PDF_BYTES, PNG_BYTES, startMediaServer } from '../support/media-server';
import { api, emulatorFor, expectProblem, ManualClock, orgPath } from './helpers';

const DURATION = 1000;
let clock: ManualClock;
let emulator: RunningEmulator;
beforeEach(async () => {
	clock = new ManualClock();
	emulator = await emulatorFor({ clock, jobDurationMs: DURATION });
});
afterEach(() => emulator.close());

const jobsPath = (endpoint: string) => orgPath(emulator, `/inference-endpoints/${endpoint}/jobs`);

async function create(endpoint: string, body: unknown) {
	return api(emulator, 'POST', jobsPath(endpoint), { body });
}

async function createJob(endpoint: string, body: unknown): Promise<Job> {
	const reply = await create(endpoint, body);
	expect(reply.status).toBe(201);
	return jobSchema.parse(reply.json());
}

async function getJob(endpoint: string, id: string): Promise<Job> {
	const reply = await api(emulator, 'GET', `${jobsPath(endpoint)}/${id}`);
	expect(reply.status).toBe(200);
	return jobSchema.parse(reply.json());
}

async function finished(endpoint: string, body: unknown): Promise<Job> {
	const job = await createJob(endpoint, body);
	await clock.advance(DURATION);
	return getJob(endpoint, job.id);
}

const actions = (job: Job) => job.events.map((event) => event.action);

describe('create and read a job', () => {
	it('creates a pending job with a created event and no unset optional fields', async () => {
		const reply = await create('echo', { input: { prompt: 'hello' } });
		expect(reply.status).toBe(201);
		expect(reply.headers['content-type']).toBe('application/json');
		const job = jobSchema.parse(reply.json());
		expect(job).toEqual(
			expect.objectContaining({
				inference_endpoint_name: 'echo',
				organization_name: emulator.organization,
				input: { prompt: 'hello' },
				status: 'pending',
			}),
		);
		expect(actions(job)).toEqual(['created']);
		expect(job.create_time).toBe(job.update_time);
		expect(job.create_time).toBe(new Date(clock.now()).toISOString());
		for (const field of ['output', 'metadata', 'webhook', 'webhook_url'])
			expect(reply.json()).not.toHaveProperty(field);
		expect(await getJob('echo', job.id)).toEqual(job);
	});

	it('keeps metadata, webhook_url and the deprecated webhook', async () => {
		const job = await createJob('echo', {
			input: 1,
			metadata: { run: 'a' },
			webhook_url: 'https://example.com/a',
			webhook: 'https://example.com/b',
		});
		expect(job).toEqual(
			expect.objectContaining({
				metadata: { run: 'a' },
				webhook_url: 'https://example.com/a',
				webhook: 'https://example.com/b',
			}),
		);
	});

	it('runs pending -> running (started) -> succeeded on the clock, moving update_time', async () => {
		const job = await createJob('echo', { input: { n: 1 } });
		await clock.advance(DURATION / 4);
		const running = await getJob('echo', job.id);
		expect(running.status).toBe('running');
		expect(actions(running)).toEqual(['created', 'started']);
		expect(running.update_time > job.update_time).toBe(true);
		expect(running).not.toHaveProperty('output');
		await clock.advance((DURATION * 3) / 4);
		const done = await getJob('echo', job.id);
		expect(done.status).toBe('succeeded');
		expect(actions(done)).toEqual(['created', 'started', 'succeeded']);
		expect(done.output).toEqual({ echo: { n: 1 } });
		expect(done.update_time > running.update_time).toBe(true);
		expect(done.events.at(-1)?.time).toBe(done.update_time);
	});

	it('lets jobDurationMs depend on the endpoint and the input', async () => {
		await emulator.close();
		const seen: [string, unknown][] = [];
		emulator = await emulatorFor({
			clock,
			jobDurationMs: (endpoint, input) => {
				seen.push([endpoint, input]);
				return 400;
			},
		});
		const job = await createJob('echo', { input: 'x' });
		await clock.advance(400);
		expect((await getJob('echo', job.id)).status).toBe('succeeded');
		expect(seen).toEqual([['echo', 'x']]);
	});

	it('runs the slow endpoint 20 times as long', async () => {
		const job = await createJob(emulator.slowEndpoint, { input: { work: 1 } });
		await clock.advance(DURATION * 6);
		expect((await getJob(emulator.slowEndpoint, job.id)).status).toBe('running');
		await clock.advance(DURATION * 14);
		expect((await getJob(emulator.slowEndpoint, job.id)).status).toBe('succeeded');
	});

	it('answers an unknown job with 404, a job of another endpoint with 404 and a malformed id with 400', async () => {
		const job = await createJob('echo', { input: 1 });
		expectProblem(await api(emulator, 'GET', `${jobsPath('echo')}/${randomUUID()}`), 404);
		expectProblem(await api(emulator, 'GET', `${jobsPath('sentiment')}/${job.id}`), 404);
		expect(
			expectProblem(await api(emulator, 'GET', `${jobsPath('echo')}/not-a-uuid`), 400).detail,
		).toMatch(/^job_id .*must be a job id/);
	});
});

describe('job request bounds', () => {
	const props = (n: number) =>
		Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
	const url = (length: number) =>
		`https://example.com/${'a'.repeat(length - 'https://example.com/'.length)}`;

	it.each([
		['metadata with 20 properties', { metadata: props(20) }, 201, ''],
		[
			'metadata with 21 properties',
			{ metadata: props(21) },
			400,
			'must have at most 20 properties',
		],
		['metadata that is a list', { metadata: [1] }, 400, 'metadata'],
		['webhook_url of 2048 characters', { webhook_url: url(2048) }, 201, ''],
		['webhook_url of 2049 characters', { webhook_url: url(2049) }, 400, 'webhook_url'],
		[
			'webhook_url that is not a URL',
			{ webhook_url: 'not a url' },
			400,
			'webhook_url "not a url" must be a full http:// or https:// URL',
		],
		['empty webhook_url', { webhook_url: '' }, 400, 'webhook_url'],
		['webhook of 2049 characters', { webhook: url(2049) }, 400, 'webhook'],
		['ftp webhook', { webhook: 'ftp://example.com/x' }, 400, 'webhook'],
		['an unknown field', { priority: 'high' }, 400, 'unknown field "priority"'],
	])('%s', async (_label, extra, status, detail) => {
		expect(url(2048)).toHaveLength(2048);
		const reply = await create('echo', { input: {}, ...extra });
		if (status === 201) {
			expect(reply.status).toBe(201);
			return;
		}
		expect(expectProblem(reply, 400).detail).toContain(detail);
	});

	it('refuses a body without input, a body that is not an object and one that is not JSON', async () => {
		expect(expectProblem(await create('echo', { metadata: {} }), 400).detail).toBe(
			'input is required',
		);
		expectProblem(await create('echo', [1, 2]), 400);
		expect(
			expectProblem(await api(emulator, 'POST', jobsPath('echo'), { raw: '{"input": ' }), 400)
				.detail,
		).toMatch(/not valid JSON/);
		expect(
			expectProblem(await api(emulator, 'POST', jobsPath('echo'), { raw: '' }), 400).detail,
		).toMatch(/empty/);
		const list = jobPageSchema.parse((await api(emulator, 'GET', jobsPath('echo'))).json());
		expect(list.total_size).toBe(0);
	});

	it('accepts any JSON as input, including null and scalars', async () => {
		for (const input of [null, 0, 'text', [1, 2], { deep: { a: [true] } }])
			expect((await createJob('echo', { input })).input).toEqual(input);
	});
});

describe('list jobs of an endpoint', () => {
	it('lists newest first, paged, with the bounds of the catalogue listing', async () => {
		const ids: string[] = [];
		for (let i = 0; i < 5; i++) {
			ids.push((await createJob('echo', { input: i })).id);
			await clock.advance(10);
		}
		await createJob('sentiment', { input: { text: 'other endpoint' } });
		const first = jobPageSchema.parse(
			(await api(emulator, 'GET', `${jobsPath('echo')}?page_size=2`)).json(),
		);
		const third = jobPageSchema.parse(
			(await api(emulator, 'GET', `${jobsPath('echo')}?page=3&page_size=2`)).json(),
		);
		const beyond = jobPageSchema.parse(
			(await api(emulator, 'GET', `${jobsPath('echo')}?page=4&page_size=2`)).json(),
		);
		expect(first).toEqual(expect.objectContaining({ page: 1, page_size: 2, total_size: 5 }));
		expect(first.items.map((job) => job.id)).toEqual([ids[4], ids[3]]);
		expect(third.items.map((job) => job.id)).toEqual([ids[0]]);
		expect(beyond.items).toEqual([]);
		expect(
			expectProblem(await api(emulator, 'GET', `${jobsPath('echo')}?page_size=101`), 400).detail,
		).toContain('page_size');
		expect(
			expectProblem(await api(emulator, 'GET', `${jobsPath('echo')}?page=0`), 400).detail,
		).toContain('page');
	});
});

describe('cancel a job', () => {
	it('cancels a pending job: 202 with an empty body, then status cancelled with an event', async () => {
		const job = await createJob('echo', { input: 1 });
		const reply = await api(emulator, 'DELETE', `${jobsPath('echo')}/${job.id}`);
		expect(reply.status).toBe(202);
		expect(reply.text).toBe('');
		const cancelled = await getJob('echo', job.id);
		expect(cancelled.status).toBe('cancelled');
		expect(actions(cancelled)).toEqual(['created', 'cancelled']);
		await clock.advance(DURATION * 2);
		expect(await getJob('echo', job.id)).toEqual(cancelled);
	});

	it('cancels a running job; a second cancel is accepted again; a finished job cannot be cancelled (409)', async () => {
		const job = await createJob('echo', { input: 1 });
		await clock.advance(DURATION / 2);
		expect((await api(emulator, 'DELETE', `${jobsPath('echo')}/${job.id}`)).status).toBe(202);
		expect(actions(await getJob('echo', job.id))).toEqual(['created', 'started', 'cancelled']);
		expect((await api(emulator, 'DELETE', `${jobsPath('echo')}/${job.id}`)).status).toBe(202);
		const done = await finished('echo', { input: 2 });
		expect(
			expectProblem(await api(emulator, 'DELETE', `${jobsPath('echo')}/${done.id}`), 409).detail,
		).toContain('already finished');
		expectProblem(await api(emulator, 'DELETE', `${jobsPath('echo')}/${randomUUID()}`), 404);
	});
});

describe('interruptible nodes', () => {
	it('drops a running job back to pending and restarts it with another started event', async () => {
		await emulator.close();
		emulator = await emulatorFor({
			clock,
			jobDurationMs: DURATION,
			faults: { interruptionRate: 1 },
		});
		const job = await createJob('echo', { input: 'survives' });
		let droppedBack = false;
		for (let i = 0; i < 40 && !droppedBack; i++) {
			await clock.advance(DURATION / 8);
			const current = await getJob('echo', job.id);
			droppedBack = current.status === 'pending' && actions(current).includes('started');
		}
		expect(droppedBack).toBe(true);
		await clock.advance(DURATION * 10);
		const done = await getJob('echo', job.id);
		expect(done.status).toBe('succeeded');
		expect(done.output).toEqual({ echo: 'survives' });
		const starts = actions(done).filter((action) => action === 'started').length;
		expect(starts).toBeGreaterThan(1);
		expect(actions(done)).toEqual([
			'created',
			...Array<string>(starts).fill('started'),
			'succeeded',
		]);
	});
});

describe('event list cap', () => {
	it('keeps at most 1000 events, the created event first and the newest last', () => {
		const events: JobEvent[] = [{ action: 'created', time: '2025-01-01T00:00:00.000Z' }];
		for (let i = 0; i < 1200; i++)
			appendEvent(events, {
				action: 'started',
				time: new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString(),
			});
		appendEvent(events, { action: 'succeeded', time: '2025-01-02T00:00:00.000Z' });
		expect(events).toHaveLength(LIMITS.jobEventsMax);
		expect(events[0]?.action).toBe('created');
		expect(events.at(-1)?.action).toBe('succeeded');
	});
});

describe('seeded endpoints', () => {
	it.each([
		['sentiment', { text: 'I love this, it is great' }, { label: 'positive' }],
		['sentiment', { text: 'This is broken and slow' }, { label: 'negative' }],
		[
			'translate-text',
			{ text: 'Good morning', target_language: 'french' },
			{ translation: '[French] Good morning', target_language: 'French' },
		],
		[
			'summarize-text',
			{ text: 'one two three four five six', max_words: 3 },
			{ summary: 'one two three', word_count: 3 },
		],
		[
			'detect-language',
			{ text: 'le chat est sur la table avec une souris' },
			{ language_code: 'fr' },
		],
		[
			'extract-keywords',
			{ text: 'GPU cloud GPU nodes GPU cloud jobs', count: 2 },
			{ keywords: ['gpu', 'cloud'] },
		],
		[
			'redact-pii',
			{ text: 'Mail ann@example.com or call +44 20 7946 0958' },
			{ text: 'Mail [EMAIL] or call [PHONE]', redactions: 2 },
		],
		['moderate-text', { text: 'click here for free money' }, { flagged: true }],
		['text-embedding', { text: 'vector', dimensions: 8 }, { dimensions: 8 }],
	])('%s transforms its input deterministically', async (endpoint, input, expected) => {
		const [a, b] = [await createJob(endpoint, { input }), await createJob(endpoint, { input })];
		await clock.advance(DURATION);
		const [first, second] = [await getJob(endpoint, a.id), await getJob(endpoint, b.id)];
		expect(first.status).toBe('succeeded');
		expect(first.output).toEqual(expect.objectContaining(expected));
		expect(second.output).toEqual(first.output);
	});

	it.each([
		['caption-image', PNG_BYTES, { caption: expect.stringMatching(/^A photo of .+\.$/) }],
		['document-ocr', PDF_BYTES, { text: expect.stringContaining('INVOICE') }],
	])(
		'%s reads its file and answers the same for the same file',
		async (endpoint, body, expected) => {
			const media = await startMediaServer();
			try {
				const input = { url: media.serve('/file', { body }) };
				const [a, b] = [await createJob(endpoint, { input }), await createJob(endpoint, { input })];
				await clock.advance(DURATION);
				const [first, second] = await Promise.all(
					[a, b].map((job) =>
						eventually(`${endpoint} job to succeed`, () => {
							const current = emulator.getJob(job.id);
							return current?.status === 'succeeded' && current;
						}),
					),
				);
				expect(first.output).toEqual(expect.objectContaining(expected));
				expect(second.output).toEqual(first.output);
			} finally {
				await media.close();
			}
		},
	);

	it('fails a job whose input the endpoint rejects, with output {error, duration}', async () => {
		const job = await finished('sentiment', { input: { words: 'no text field' } });
		expect(job.status).toBe('failed');
		expect(actions(job)).toEqual(['created', 'started', 'failed']);
		expect(job.output).toEqual({
			error: expect.stringContaining('input.text is required'),
			duration: expect.any(Number),
		});
	});

	it('serves text-to-speech audio as a real WAV file at the output URL', async () => {
		const job = await finished('text-to-speech', { input: { text: 'Hello from the emulator' } });
		const output = job.output as { url: string; duration_in_seconds: number };
		const response = await fetch(output.url);
		expect(response.status).toBe(200);
		expect(response.headers.get('content-type')).toBe('audio/wav');
		const audio = Buffer.from(await response.arrayBuffer());
		expect(audio.subarray(0, 4).toString()).toBe('RIFF');
		expect(audio.subarray(8, 12).toString()).toBe('WAVE');
		expect(output.duration_in_seconds).toBeGreaterThan(0);
	});
});
