import { createServer } from 'node:net';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import {
	MEDIA_KEYWORD,
	jobSchema,
	transcriptionOutputSchema,
	type Job,
} from '../../shared/schemas';
import type { RunningEmulator } from '../../emulator';
import { eventually } from '../support/eventually';
import {
	PDF_BYTES,
	PNG_BYTES,
	startMediaServer,
	wavBytes,
	type MediaServer,
} from '../support/media-server';
import { banner, optionsOf, readFlags, USAGE } from '../../emulator/cli-flags';
import { api, emulatorFor, ManualClock, orgPath } from './helpers';

const DURATION = 200;
let clock: ManualClock;
let emulator: RunningEmulator;
let media: MediaServer;
beforeAll(async () => {
	clock = new ManualClock();
	emulator = await emulatorFor({ clock, jobDurationMs: DURATION });
	media = await startMediaServer();
});
afterAll(async () => {
	await emulator.close();
	await media.close();
});
afterEach(() => emulator.setFaults({ downloadCutRate: 0, downloadSlowRate: 0 }));

async function create(endpoint: string, input: Record<string, unknown>): Promise<Job> {
	const path = orgPath(emulator, `/inference-endpoints/${endpoint}/jobs`);
	return jobSchema.parse((await api(emulator, 'POST', path, { body: { input } })).json());
}

/** Runs the job's whole duration on the clock, then waits (in real time) for its download to end. */
async function finished(endpoint: string, input: Record<string, unknown>): Promise<Job> {
	const created = await create(endpoint, input);
	await clock.advance(DURATION);
	return eventually(`job ${created.id} to finish`, () => {
		const job = emulator.getJob(created.id);
		return job && (job.status === 'succeeded' || job.status === 'failed') && job;
	});
}

async function failure(endpoint: string, input: Record<string, unknown>): Promise<string> {
	const job = await finished(endpoint, input);
	expect(job.status).toBe('failed');
	expect(job.events.map((event) => event.action)).toEqual(['created', 'started', 'failed']);
	expect(job.output).toEqual({ error: expect.any(String), duration: expect.any(Number) });
	return String((job.output as { error: string }).error);
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
	const server = createServer().listen(0, '127.0.0.1');
	await once(server, 'listening');
	const { port } = server.address() as AddressInfo;
	server.close();
	await once(server, 'close');
	return port;
}

describe('media endpoints download their input', () => {
	it('transcribe GETs the URL without any header and reports the WAV’s real length', async () => {
		const url = media.serve('/calls/standup.wav', {
			body: wavBytes(12.5, { tone: 300 }),
			contentType: 'audio/wav',
		});
		const job = await finished('transcribe', { url: `${url}?X-Amz-Signature=abc` });
		expect(job.status).toBe('succeeded');
		const output = transcriptionOutputSchema.parse(job.output);
		expect(output.duration_in_seconds).toBe(12.5);
		expect(output.duration).toBeCloseTo(12.5 / 3600, 6);
		const request = media.requests.find((r) => r.path.startsWith('/calls/standup.wav'));
		expect(request?.path).toBe('/calls/standup.wav?X-Amz-Signature=abc');
		expect(request?.headers).not.toHaveProperty('service-api-key');
		expect(request?.headers).not.toHaveProperty('authorization');
	});

	it('answers from the bytes read: the same file at two URLs alike, another file otherwise', async () => {
		const body = wavBytes(20, { tone: 500 });
		const first = media.serve('/a/one.wav', { body });
		const copy = media.serve('/b/copy.wav', { body });
		const other = media.serve('/a/two.wav', { body: wavBytes(20, { tone: 510 }) });
		const text = async (url: string) =>
			transcriptionOutputSchema.parse((await finished('transcribe', { url })).output).text;
		expect(await text(copy)).toBe(await text(first));
		expect(await text(other)).not.toBe(await text(first));
	});

	it('fail the job after started when the host cannot be reached, without echoing the signature', async () => {
		const port = await closedPort();
		const error = await failure('transcribe', {
			url: `http://127.0.0.1:${port}/meeting.mp3?signature=secret-part`,
		});
		expect(error).toBe(
			`Could not download input.url from 127.0.0.1:${port}: the connection was refused.`,
		);
	});

	it('fail the job when the file’s server refuses it or has no such file', async () => {
		const refused = media.serve('/private.wav', {
			body: Buffer.from('AccessDenied'),
			status: 403,
			contentType: 'application/xml',
		});
		expect(await failure('transcribe', { url: refused })).toMatch(
			/^Could not download input\.url from 127\.0\.0\.1:\d+: the server answered 403 Forbidden\. The URL must be a direct-download link/,
		);
		expect(await failure('transcribe', { url: `${media.origin}/missing.wav` })).toContain(
			'the server answered 404 Not Found',
		);
	});

	it('refuse a file of 3 GB or more from its content-length, before reading it', async () => {
		const url = media.serve('/huge.wav', {
			body: wavBytes(1),
			contentLength: 3_200_000_000,
			cutAfter: 100,
		});
		expect(await failure('transcribe', { url })).toBe(
			'input.url is 3.2 GB; files must be smaller than 3 GB.',
		);
	});

	it('refuse a recording of 2.5 hours or more from its header', async () => {
		const url = media.serve('/long.wav', { body: wavBytes(9001, { sampleRate: 100 }) });
		expect(await failure('transcribe', { url })).toBe(
			'input.url is 2 h 30 min long; recordings must be shorter than 2.5 hours.',
		);
	});

	it('refuse a share page and a file of the wrong kind', async () => {
		const page = media.serve('/share/abc', {
			body: Buffer.from('<!DOCTYPE html><html><body>Download meeting.wav</body></html>'),
			contentType: 'text/html',
		});
		expect(await failure('transcribe', { url: page })).toBe(
			'input.url returned a web page, not an audio or video file: share links of storage services open a page; use a direct-download link.',
		);
		const picture = media.serve('/photo.png', { body: PNG_BYTES });
		expect(await failure('transcribe', { url: picture })).toBe(
			'input.url is image/png, not an audio or video file.',
		);
		const recording = media.serve('/voice.wav');
		expect(await failure('caption-image', { url: recording })).toBe(
			'input.url is audio/wav, not an image.',
		);
	});

	it('fail the job when the download breaks off part-way', async () => {
		const body = wavBytes(4);
		const url = media.serve('/cut.wav', { body, cutAfter: 1000 });
		expect(await failure('transcribe', { url })).toMatch(
			new RegExp(
				`^The download of input\\.url from 127\\.0\\.0\\.1:\\d+ broke off after \\d+ of ${body.length} bytes; the file could not be read whole\\.$`,
			),
		);
	});

	it('refuse input the endpoint rejects naming the field, without downloading the file', async () => {
		const url = media.serve('/never-read.wav');
		expect(await failure('transcribe', { url, llm_translation: 'Klingon' })).toContain(
			'input.llm_translation',
		);
		expect(media.requests.filter((r) => r.path === '/never-read.wav')).toEqual([]);
	});

	it('caption-image and document-ocr read their files too', async () => {
		const image = media.serve('/scan.png', { body: PNG_BYTES, contentType: 'image/png' });
		const pdf = media.serve('/invoice.pdf', { body: PDF_BYTES, contentType: 'application/pdf' });
		expect((await finished('caption-image', { url: image })).status).toBe('succeeded');
		expect((await finished('document-ocr', { url: pdf })).status).toBe('succeeded');
		expect((await finished('document-ocr', { url: image })).status).toBe('succeeded');
	});

	it('mark each media URL in the published input schema', async () => {
		for (const [name, accept] of [
			['transcribe', 'audio/*,video/*'],
			['caption-image', 'image/*'],
			['document-ocr', 'application/pdf,image/*'],
		] as const) {
			const item = (
				await api(emulator, 'GET', orgPath(emulator, `/inference-endpoints/${name}`))
			).json();
			const schema = JSON.parse((item as { input_schema: string }).input_schema) as {
				properties: Record<string, Record<string, unknown>>;
			};
			expect(schema.properties.url).toMatchObject({
				type: 'string',
				format: 'uri',
				[MEDIA_KEYWORD]: accept,
			});
		}
	});
});

describe('download faults', () => {
	it('a cut download fails the job as a broken-off one does', async () => {
		emulator.setFaults({ downloadCutRate: 1 });
		const url = media.serve('/whole.wav', { body: wavBytes(3) });
		expect(await failure('transcribe', { url })).toMatch(
			/^The download of input\.url .* broke off after/,
		);
	});

	it('a slow download keeps the job running until the extra time has passed on the clock', async () => {
		emulator.setFaults({ downloadSlowRate: 1, downloadSlowMs: 5000 });
		const url = media.serve('/slow.wav', { body: wavBytes(2) });
		const created = await create('transcribe', { url });
		await clock.advance(DURATION);
		await eventually('the download to wait on the clock', () => clock.pendingTimers > 0);
		expect(emulator.getJob(created.id)?.status).toBe('running');
		await clock.advance(5000);
		const job = await eventually('the job to succeed', () => {
			const current = emulator.getJob(created.id);
			return current?.status === 'succeeded' && current;
		});
		expect(transcriptionOutputSchema.parse(job.output).duration_in_seconds).toBe(2);
	});
});

describe('download fault flags', () => {
	it('map to the options, refuse a bad value naming the flag, and print while on', async () => {
		const flags = readFlags([
			'--port',
			'0',
			'--download-slow-rate',
			'0.5',
			'--download-slow-ms',
			'2000',
			'--download-cut-rate',
			'0.25',
		]);
		expect(optionsOf(flags).faults).toMatchObject({
			downloadSlowRate: 0.5,
			downloadSlowMs: 2000,
			downloadCutRate: 0.25,
		});
		for (const flag of ['--download-slow-rate', '--download-slow-ms', '--download-cut-rate'])
			expect(USAGE).toContain(flag);
		expect(() => readFlags(['--download-cut-rate', '2'])).toThrow('--download-cut-rate');
		const flagged = await emulatorFor({ ...optionsOf(flags), log: undefined });
		try {
			expect(banner(flagged)).toContain(
				'Faults: downloadSlowRate=0.5 downloadCutRate=0.25 downloadSlowMs=2000 on management',
			);
			flagged.setFaults({ downloadSlowRate: 0, downloadCutRate: 0 });
			expect(banner(flagged)).toContain('Faults: none');
		} finally {
			await flagged.close();
		}
	});
});
