import { z } from 'zod/v4';
import { TRANSLATION_LANGUAGES } from '../../shared';
import { GpuCloud } from '../../nodes/GpuCloud/GpuCloud.node';
import { byName, endpointFields, gpuCloudWorkflow, mapped, startRig, type Rig } from './fixtures';
import { startS3Server, type S3Server } from '../support/s3-server';
import { errorOf, NODE_TYPE, outputOf, RECORDING_TYPE } from './harness';

let rig: Rig;

beforeAll(async () => {
	rig = await startRig();
});

afterAll(async () => {
	await rig.close();
});

afterEach(async () => {
	await rig.emulator.deliveriesSettled();
	expect(rig.harness.webhookErrors).toEqual([]);
});

const everything = {
	languageCode: 'en',
	wordLevelTimestamps: true,
	sentenceLevelTimestamps: true,
	diarization: true,
	srt: true,
	summarize: 12,
	llmTranslation: ['French', 'German'],
	customVocabulary: 'onboarding, milestone',
};

describe('Transcription', () => {
	test('transcribes a file and outputs text, summary, translations, segments, words and subtitles on one flat item', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow({
				resource: 'transcription',
				operation: 'transcribe',
				url: 'https://files.example/weekly-meeting.mp3?signature=abc',
				transcriptionOptions: everything,
			}),
		);
		expect(errorOf(execution)).toBeUndefined();
		const [{ json }] = outputOf(execution, 'GPU Cloud');
		expect(json).toMatchObject({
			status: 'succeeded',
			text: expect.any(String),
			summary: expect.any(String),
			srt: expect.stringContaining('-->'),
		});
		expect(String(json.summary).split(' ').length).toBeLessThanOrEqual(12);
		expect(Object.keys(json.translations as object).sort()).toEqual(['French', 'German']);
		expect(json.segments).toEqual(
			expect.arrayContaining([
				expect.objectContaining({
					text: expect.any(String),
					start: expect.any(Number),
					speaker: 'SPEAKER_00',
				}),
			]),
		);
		expect(json.words).toEqual(
			expect.arrayContaining([
				expect.objectContaining({ word: expect.any(String), end: expect.any(Number) }),
			]),
		);
		expect(json.durationSeconds).toEqual(expect.any(Number));
		expect(json).not.toHaveProperty('output');

		const job = rig.emulator.getJob(String(json.jobId));
		expect(job?.input).toEqual({
			url: 'https://files.example/weekly-meeting.mp3?signature=abc',
			language_code: 'en',
			word_level_timestamps: true,
			sentence_level_timestamps: true,
			diarization: true,
			srt: true,
			summarize: 12,
			llm_translation: 'French,German',
			custom_vocabulary: 'onboarding, milestone',
		});
	});

	test('offers exactly the languages the service translates into', () => {
		const options =
			new GpuCloud().description.properties.find(
				(property) => property.name === 'transcriptionOptions',
			)?.options ?? [];
		const translateInto = options.find(
			(option) => 'name' in option && option.name === 'llmTranslation',
		);
		const languages =
			translateInto && 'options' in translateInto
				? translateInto.options?.map((option) => ('value' in option ? option.value : undefined))
				: [];
		expect(languages).toEqual([...TRANSLATION_LANGUAGES]);
	});

	test('transcribes in webhook mode: the execution pauses and resumes with the flat result', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				{
					resource: 'transcription',
					operation: 'transcribe',
					url: '={{ $json.file }}',
					transcriptionOptions: { summarize: 8 },
					waitMode: 'webhook',
				},
				{
					items: [
						{ file: 'https://files.example/a.mp3?sig=1' },
						{ file: 'https://files.example/b.mp3?sig=2' },
					],
				},
			),
		);
		expect(execution.status).toBe('waiting');
		const finished = await rig.harness.finished(execution.id);
		expect(errorOf(finished)).toBeUndefined();
		const output = outputOf(finished, 'GPU Cloud');
		expect(
			output.map((item) => [
				item.json.status,
				typeof item.json.text,
				typeof item.json.summary,
				item.pairedItem,
			]),
		).toEqual([
			['succeeded', 'string', 'string', { item: 0 }],
			['succeeded', 'string', 'string', { item: 1 }],
		]);
		const inputs = output.map((item) => rig.emulator.getJob(String(item.json.jobId))?.input);
		expect(inputs).toEqual([
			{ url: 'https://files.example/a.mp3?sig=1', summarize: 8 },
			{ url: 'https://files.example/b.mp3?sig=2', summarize: 8 },
		]);
	});
});

describe('Transcription of a binary file n8n holds in memory (its default binary data mode)', () => {
	let s3: S3Server;
	beforeAll(async () => {
		s3 = await startS3Server();
		rig.harness.setCredentials('storage', 'gpuCloudObjectStorageApi', s3.settings(''));
	});
	afterAll(() => s3.close());

	test('uploads the bytes, GPU Cloud reports the recording’s length, the file is deleted after', async () => {
		const execution = await rig.harness.run({
			id: 'transcription-memory-binary',
			nodes: [
				{
					name: 'Recording',
					type: RECORDING_TYPE,
					parameters: { seconds: 4, fileName: 'memo.wav' },
				},
				{
					name: 'GPU Cloud',
					type: NODE_TYPE,
					parameters: {
						resource: 'transcription',
						operation: 'transcribe',
						source: 'binaryFile',
						binaryPropertyName: 'data',
					},
					credentials: { gpuCloudApi: 'management', gpuCloudObjectStorageApi: 'storage' },
				},
			],
			connections: [['Recording', 'GPU Cloud']],
		});
		expect(errorOf(execution)).toBeUndefined();
		expect(outputOf(execution, 'Recording')[0]?.binary?.data?.id).toBeUndefined();
		const [{ json }] = outputOf(execution, 'GPU Cloud');
		expect(json).toMatchObject({ status: 'succeeded', durationSeconds: 4 });
		const input = z
			.object({ url: z.string() })
			.parse(rig.emulator.getJob(String(json.jobId))?.input);
		const url = new URL(input.url);
		expect(url.pathname).toMatch(/^\/recordings\/transcriptions\/[0-9a-f-]{36}\/memo\.wav$/);
		expect((await fetch(url)).status).toBe(404);
	});

	test('Job > Create and Wait takes the bytes for a media field too (Files for Media Fields)', async () => {
		const execution = await rig.harness.run({
			id: 'media-field-memory-binary',
			nodes: [
				{
					name: 'Recording',
					type: RECORDING_TYPE,
					parameters: { seconds: 3, fileName: 'memo.wav' },
				},
				{
					name: 'GPU Cloud',
					type: NODE_TYPE,
					typeVersion: 2,
					parameters: {
						resource: 'job',
						operation: 'createAndWait',
						endpoint: byName('transcribe'),
						inputFields: mapped(await endpointFields(rig, 'transcribe'), {}),
						mediaFiles: { files: [{ field: 'url', binaryPropertyName: 'data' }] },
					},
					credentials: { gpuCloudApi: 'management', gpuCloudObjectStorageApi: 'storage' },
				},
			],
			connections: [['Recording', 'GPU Cloud']],
		});
		expect(errorOf(execution)).toBeUndefined();
		expect(outputOf(execution, 'Recording')[0]?.binary?.data?.id).toBeUndefined();
		const [{ json }] = outputOf(execution, 'GPU Cloud');
		expect(json).toMatchObject({ status: 'succeeded', output: { duration_in_seconds: 3 } });
		const input = z.object({ url: z.string() }).parse(rig.emulator.getJob(String(json.id))?.input);
		expect(new URL(input.url).pathname).toMatch(/^\/recordings\/inputs\/[0-9a-f-]{36}\/memo\.wav$/);
		expect((await fetch(input.url)).status).toBe(404);
	});
});
