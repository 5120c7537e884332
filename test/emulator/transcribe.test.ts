import {
	jobSchema,
	transcriptionOutputSchema,
	type Job,
	type TranscriptionOutput,
} from '../../shared/schemas';
import type { RunningEmulator } from '../../emulator';
import { eventually } from '../support/eventually';
import { startMediaServer, type MediaServer } from '../support/media-server';
import { api, emulatorFor, ManualClock, orgPath } from './helpers';

const DURATION = 200;
let clock: ManualClock;
let emulator: RunningEmulator;
let media: MediaServer;
let AUDIO: string;
beforeAll(async () => {
	clock = new ManualClock();
	emulator = await emulatorFor({ clock, jobDurationMs: DURATION });
	media = await startMediaServer();
	AUDIO = `${media.serve('/meeting.wav')}?signature=abc123&expires=1735689600`;
});
afterAll(async () => {
	await emulator.close();
	await media.close();
});

/** Runs the job's duration on the clock, then waits (in real time) for its download to finish. */
async function transcribe(input: Record<string, unknown>): Promise<Job> {
	const path = orgPath(emulator, '/inference-endpoints/transcribe/jobs');
	const created = jobSchema.parse((await api(emulator, 'POST', path, { body: { input } })).json());
	await clock.advance(DURATION);
	return eventually(`job ${created.id} to finish`, async () => {
		const job = jobSchema.parse((await api(emulator, 'GET', `${path}/${created.id}`)).json());
		return (job.status === 'succeeded' || job.status === 'failed') && job;
	});
}

async function output(input: Record<string, unknown>): Promise<TranscriptionOutput> {
	const job = await transcribe(input);
	expect(job.status).toBe('succeeded');
	expect(job.events.map((event) => event.action)).toEqual(['created', 'started', 'succeeded']);
	return transcriptionOutputSchema.parse(job.output);
}

describe('transcribe jobs', () => {
	it('produce text and durations shaped like the real output, the same for the same file', async () => {
		const first = await output({ url: AUDIO });
		expect(first.text).toMatch(/^[A-Z].+\.$/);
		expect(first.duration_in_seconds).toBeGreaterThan(1);
		expect(first.duration).toBeCloseTo((first.duration_in_seconds ?? 0) / 3600, 5);
		expect(first.processing_time).toBeGreaterThan(0);
		for (const absent of [
			'word_segments',
			'sentence_level_timestamps',
			'srt_content',
			'summary',
			'llm_translation',
			'url',
		]) {
			expect(first).not.toHaveProperty(absent);
		}
		expect((await output({ url: AUDIO })).text).toBe(first.text);
		expect((await output({ url: media.serve('/other.wav') })).text).not.toBe(first.text);
	});

	it('add word and sentence timestamps, in order and within the recording, when asked', async () => {
		const result = await output({
			url: AUDIO,
			word_level_timestamps: true,
			sentence_level_timestamps: true,
		});
		const words = result.word_segments ?? [];
		const sentences = result.sentence_level_timestamps ?? [];
		expect(words.map((w) => w.word).join(' ')).toBe(result.text);
		expect(sentences.map((s) => s.text).join(' ')).toBe(result.text);
		for (const [i, word] of words.entries()) {
			expect(word.end).toBeGreaterThan(word.start);
			if (i > 0) expect(word.start).toBeGreaterThanOrEqual(words[i - 1]?.end ?? 0);
			expect(word.end).toBeLessThanOrEqual(result.duration_in_seconds ?? 0);
		}
	});

	it('label speakers with diarization', async () => {
		const result = await output({ url: AUDIO, sentence_level_timestamps: true, diarization: true });
		expect(new Set(result.sentence_level_timestamps?.map((s) => s.speaker))).toEqual(
			new Set(['SPEAKER_00', 'SPEAKER_01']),
		);
	});

	it('add SRT subtitles when srt is true', async () => {
		const result = await output({ url: AUDIO, srt: true });
		expect(result.srt_content).toMatch(
			/^1\n\d{2}:\d{2}:\d{2},\d{3} --> \d{2}:\d{2}:\d{2},\d{3}\n[^\n]+\n\n2\n/,
		);
	});

	it('summarise within the word limit when summarize > 0, and not at all for 0', async () => {
		const result = await output({ url: AUDIO, summarize: 6 });
		expect(result.summary?.split(' ')).toHaveLength(6);
		expect(await output({ url: AUDIO, summarize: 0 })).not.toHaveProperty('summary');
	});

	it('translate into each requested language, written in any case', async () => {
		const result = await output({ url: AUDIO, llm_translation: 'french, GERMAN,thai' });
		expect(Object.keys(result.llm_translation ?? {}).sort()).toEqual(['French', 'German', 'Thai']);
		expect(result.llm_translation?.French).toContain(result.text);
	});

	it('return a results file when return_as_file is true, served by the emulator', async () => {
		const result = await output({ url: AUDIO, return_as_file: true, word_level_timestamps: true });
		expect(Object.keys(result).sort()).toEqual([
			'duration',
			'duration_in_seconds',
			'processing_time',
			'url',
		]);
		expect(result.url).toMatch(new RegExp(`^${emulator.origin}/files/[0-9a-f-]{36}\\.json$`));
		const file = await fetch(result.url ?? '');
		expect(file.status).toBe(200);
		const full = transcriptionOutputSchema.parse(await file.json());
		expect(full.text).toMatch(/\w/);
		expect(full.word_segments?.length).toBeGreaterThan(3);
		expect(full.duration_in_seconds).toBe(result.duration_in_seconds);
	});

	it('fail without a url or with input transcribe rejects, naming the field, with output {error, duration}', async () => {
		for (const [input, field] of [
			[{ language_code: 'en' }, 'input.url is required'],
			[{ url: 'not a url' }, 'input.url'],
			[{ url: AUDIO, llm_translation: 'Klingon' }, 'input.llm_translation'],
			[{ url: AUDIO, summarize: -1 }, 'input.summarize'],
			[{ url: AUDIO, translate: 'to_fra' }, 'input.translate'],
		] as const) {
			const job = await transcribe(input);
			expect(job.status).toBe('failed');
			expect(job.events.map((event) => event.action)).toEqual(['created', 'started', 'failed']);
			expect(job.output).toEqual({
				error: expect.stringContaining(field),
				duration: expect.any(Number),
			});
		}
	});
});
