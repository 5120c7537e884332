import { Container } from '@n8n/di';
import { BinaryDataService } from 'n8n-core';
import { NodeHelpers, type INodeParameters } from 'n8n-workflow';
import { GpuCloud } from '../../nodes/GpuCloud/GpuCloud.node';
import { startS3Server, type S3Server } from '../support/s3-server';
import {
	byName,
	endpointFields,
	gpuCloudWorkflow,
	managementRequests,
	mapped,
	startRig,
	useFilesystemBinaryData,
	type Rig,
} from './fixtures';
import { errorOf, NODE_TYPE, outputOf, RECORDING_TYPE, type WorkflowSpec } from './harness';

/**
 * Job > Create and Create and Wait (version 2, input as fields) take a file the workflow holds for
 * each media field of the endpoint ("Files for Media Fields"): the node puts it in the bucket of the
 * GPU Cloud Object Storage API credential and the field gets a presigned link, which the emulator
 * downloads as GPU Cloud does.
 */

let rig: Rig;
let restoreBinaryData: () => void;
let s3: S3Server;
beforeAll(async () => {
	restoreBinaryData = await useFilesystemBinaryData();
	rig = await startRig({ jobDurationMs: 100 });
	s3 = await startS3Server();
	rig.harness.setCredentials('storage', 'gpuCloudObjectStorageApi', s3.settings());
});
afterAll(async () => {
	await rig.close();
	await s3.close();
	restoreBinaryData();
});
beforeEach(() => {
	rig.emulator.resetLogs();
});

const VERSION_2 = 2;
let workflows = 0;

interface JobWorkflow {
	endpoint: string;
	operation?: 'create' | 'createAndWait';
	fields?: Record<string, unknown>;
	files?: Array<{ field: string; binaryPropertyName?: string }>;
	extra?: INodeParameters;
	storage?: string | null;
	seconds?: number;
}

/** Test Recording (a WAV of `seconds` in binary field `data`) -> GPU Cloud Job > Create (and Wait), version 2. */
async function recordingIntoJob(job: JobWorkflow): Promise<WorkflowSpec> {
	const schema = await endpointFields(rig, job.endpoint);
	const storage = job.storage === undefined ? 'storage' : job.storage;
	return {
		id: `media-${++workflows}`,
		nodes: [
			{
				name: 'Recording',
				type: RECORDING_TYPE,
				parameters: { seconds: job.seconds ?? 12.5, fileName: 'weekly sync.wav' },
			},
			{
				name: 'GPU Cloud',
				type: NODE_TYPE,
				typeVersion: VERSION_2,
				parameters: {
					resource: 'job',
					operation: job.operation ?? 'createAndWait',
					endpoint: byName(job.endpoint),
					inputFields: mapped(schema, job.fields ?? {}),
					mediaFiles: {
						files: (job.files ?? [{ field: 'url' }]).map((file) => ({
							binaryPropertyName: 'data',
							...file,
						})),
					},
					...job.extra,
				},
				credentials: {
					gpuCloudApi: 'management',
					...(storage === null ? {} : { gpuCloudObjectStorageApi: storage }),
				},
			},
		],
		connections: [['Recording', 'GPU Cloud']],
	};
}

function jobInput(jobId: unknown): Record<string, unknown> {
	const input = rig.emulator.getJob(String(jobId))?.input;
	if (typeof input !== 'object' || input === null)
		throw new Error(`job ${String(jobId)} has no input`);
	return { ...input };
}

function creates(): number {
	return managementRequests(rig.emulator).filter(
		(request) => request.method === 'POST' && request.path.endsWith('/jobs'),
	).length;
}

describe('the media fields of the chosen endpoint, as the editor lists them', () => {
	async function mediaFieldsOf(endpoint: string) {
		return await rig.harness.loadOptions(
			gpuCloudWorkflow(
				{ resource: 'job', operation: 'createAndWait', endpoint: byName(endpoint) },
				{ node: { typeVersion: VERSION_2 } },
			),
			'GPU Cloud',
			'getMediaFields',
		);
	}

	test('lists the fields the schema marks as media, saying what each reads', async () => {
		expect(await mediaFieldsOf('transcribe')).toEqual([
			{ name: expect.any(String), value: 'url', description: expect.stringContaining('audio/*') },
		]);
		expect(await mediaFieldsOf('caption-image')).toEqual([
			{ name: expect.any(String), value: 'url', description: expect.stringContaining('image/*') },
		]);
	});

	test('an endpoint without media fields lists none (a URL field is not a media field)', async () => {
		expect(await mediaFieldsOf('product-listing')).toEqual([]);
	});
});

describe('Job > Create and Wait with a file for a media field', () => {
	test('uploads the binary, GPU Cloud reads it by the presigned link and reports its length, and the file is deleted after', async () => {
		const execution = await rig.harness.run(
			await recordingIntoJob({ endpoint: 'transcribe', fields: { language_code: 'en' } }),
		);
		expect(errorOf(execution)).toBeUndefined();
		expect(outputOf(execution, 'Recording')[0]?.binary?.data?.id).toMatch(/^filesystem/);
		const [{ json }] = outputOf(execution, 'GPU Cloud');
		expect(json).toMatchObject({
			status: 'succeeded',
			output: expect.objectContaining({ duration_in_seconds: 12.5 }),
		});
		const input = jobInput(json.id);
		expect(input.language_code).toBe('en');
		const url = new URL(String(input.url));
		expect(url.origin).toBe(s3.endpoint);
		expect(url.pathname).toMatch(
			/^\/recordings\/gpu-cloud\/inputs\/[0-9a-f-]{36}\/weekly-sync\.wav$/,
		);
		// The link lives as long as the node waits (its Timeout, 60 minutes); the file is gone after.
		expect(url.searchParams.get('X-Amz-Expires')).toBe('3600');
		expect((await fetch(url)).status).toBe(404);
	});

	test('in webhook wait mode the file stays while the execution is paused and is deleted when it resumes', async () => {
		const execution = await rig.harness.run(
			await recordingIntoJob({
				endpoint: 'transcribe',
				seconds: 4,
				extra: { waitMode: 'webhook' },
			}),
		);
		expect(execution.status).toBe('waiting');
		const finished = await rig.harness.finished(execution.id);
		expect(errorOf(finished)).toBeUndefined();
		const [{ json }] = outputOf(finished, 'GPU Cloud');
		expect(json).toMatchObject({ status: 'succeeded', output: { duration_in_seconds: 4 } });
		expect((await fetch(String(jobInput(json.id).url))).status).toBe(404);
	});

	test('keeps the file when asked, for the link lifetime set', async () => {
		const execution = await rig.harness.run(
			await recordingIntoJob({
				endpoint: 'transcribe',
				seconds: 2,
				extra: { options: { keepUploadedFile: true, linkLifetimeMinutes: 15 } },
			}),
		);
		expect(errorOf(execution)).toBeUndefined();
		const url = new URL(String(jobInput(outputOf(execution, 'GPU Cloud')[0].json.id).url));
		expect(url.searchParams.get('X-Amz-Expires')).toBe('900');
		const kept = await fetch(url);
		expect(kept.status).toBe(200);
		expect((await kept.arrayBuffer()).byteLength).toBe(44 + 2 * 8000);
	});
});

describe('Job > Create with a file for a media field', () => {
	test('the job gets a link valid for a day by default, and the file stays for GPU Cloud to read', async () => {
		const execution = await rig.harness.run(
			await recordingIntoJob({ endpoint: 'transcribe', operation: 'create', seconds: 3 }),
		);
		expect(errorOf(execution)).toBeUndefined();
		const [{ json }] = outputOf(execution, 'GPU Cloud');
		const url = new URL(String(jobInput(json.id).url));
		expect(url.searchParams.get('X-Amz-Expires')).toBe(String(24 * 3600));
		expect((await fetch(url)).status).toBe(200);
	});
});

describe('a file for a media field refused before any request', () => {
	async function refused(job: JobWorkflow): Promise<string | undefined> {
		const execution = await rig.harness.run(await recordingIntoJob(job));
		expect(creates()).toBe(0);
		return errorOf(execution)?.message;
	}

	test('without a storage credential, naming the credential it needs', async () => {
		const execution = await rig.harness.run(
			await recordingIntoJob({ endpoint: 'transcribe', storage: null }),
		);
		expect(errorOf(execution)?.message).toBe(
			'Files for Media Fields needs a GPU Cloud Object Storage API credential on this node (the bucket GPU Cloud downloads the files from)',
		);
		expect(managementRequests(rig.emulator).filter((r) => r.method === 'POST')).toEqual([]);
	});

	test('when the input item has no binary field of that name', async () => {
		rig.emulator.resetLogs();
		const execution = await rig.harness.run(
			await recordingIntoJob({
				endpoint: 'transcribe',
				files: [{ field: 'url', binaryPropertyName: 'recording' }],
			}),
		);
		expect(errorOf(execution)?.message).toBe(
			'Input Binary Field of "url" is "recording", but the input item has no binary field of that name (it has: data)',
		);
		expect(creates()).toBe(0);
	});

	test('when the field is given both a value and a file', async () => {
		expect(
			await refused({
				endpoint: 'transcribe',
				fields: { url: 'https://files.example/meeting.mp3' },
			}),
		).toBe(
			'Files for Media Fields gives a file for "url", which Input Fields fills too: give the field a URL or a file, not both',
		);
	});

	test('when the field is not a media field of the endpoint', async () => {
		const message = await refused({
			endpoint: 'summarize-text',
			fields: { text: 'A short text.' },
			files: [{ field: 'max_words' }],
		});
		expect(message).toBe(
			'Files for Media Fields: "max_words" is not a media field of endpoint "summarize-text", which has none',
		);
		expect(creates()).toBe(0);
	});

	test('when the file is of a kind the field does not read', async () => {
		const message = await refused({ endpoint: 'caption-image' });
		expect(message).toBe(
			'Files for Media Fields: the file for "url" is audio/wav; endpoint "caption-image" reads image/* there',
		);
	});

	test('a required media field given neither a URL nor a file is named with both ways to fill it', async () => {
		expect(await refused({ endpoint: 'transcribe', files: [] })).toMatch(
			/^Field "url" is required: give it a URL, or a file under "Files for Media Fields" \(input_schema of endpoint "transcribe"\)$/,
		);
	});

	test('a file of 3 GB or more, naming the limit, before the upload', async () => {
		const service = Container.get(BinaryDataService);
		const original = service.getMetadata.bind(service);
		service.getMetadata = async (id) => ({ ...(await original(id)), fileSize: 3_200_000_000 });
		try {
			expect(await refused({ endpoint: 'transcribe' })).toBe(
				'Input Binary Field of "url" is a file of 3.20 GB; GPU Cloud takes files smaller than 3 GB',
			);
		} finally {
			service.getMetadata = original;
		}
	});
});

describe('version 1 and the JSON input', () => {
	test('the storage credential is offered beside Files for Media Fields, not beside Using JSON', () => {
		const description = new GpuCloud().description;
		const storage = description.credentials?.find(
			(credential) => credential.name === 'gpuCloudObjectStorageApi',
		);
		if (!storage) throw new Error('no storage credential');
		const offered = (typeVersion: number, parameters: INodeParameters) =>
			NodeHelpers.displayParameter(
				NodeHelpers.getNodeParameters(
					description.properties,
					parameters,
					true,
					false,
					{ typeVersion, parameters } as never,
					description,
				) ?? {},
				storage,
				{ typeVersion, parameters } as never,
				description,
			);
		const job = { resource: 'job', operation: 'createAndWait' };
		expect(offered(2, job)).toBe(true);
		expect(offered(2, { ...job, inputMode: 'json' })).toBe(false);
		expect(offered(2, { ...job, operation: 'get' })).toBe(false);
		expect(offered(2, { resource: 'transcription', source: 'binaryFile' })).toBe(true);
		expect(offered(2, { resource: 'transcription', source: 'url' })).toBe(false);
	});

	test('version 1 and "Using JSON" have no Files for Media Fields', () => {
		const { properties } = new GpuCloud().description;
		const mediaFiles = properties.filter((property) => property.name === 'mediaFiles');
		expect(mediaFiles.length).toBeGreaterThan(0);
		for (const property of mediaFiles)
			expect(property.displayOptions?.show).toMatchObject({
				'@version': [{ _cnd: { gte: 2 } }],
				inputMode: ['fields'],
			});
	});
});
