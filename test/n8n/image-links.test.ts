import type { INodeParameters } from 'n8n-workflow';
import { z } from 'zod/v4';
import { imageSize } from '../../shared';
import { startS3Server, type S3Server } from '../support/s3-server';
import { gpuCloudWorkflow, startRig, type Rig } from './fixtures';
import {
	ITEMS_TYPE,
	TOOL_CALLER_TYPE,
	TOOL_TYPE,
	errorOf,
	outputOf,
	type WorkflowSpec,
} from './harness';

/**
 * Image > Generate given a GPU Cloud Object Storage API credential: each image is also put in the
 * bucket (a real S3-compatible server checking Signature V4) and linked. As a tool, the link is
 * what reaches the agent and the person (n8n drops binary data from tool answers); in a normal run
 * it sits beside the binary. Each link is fetched, with no header, and must give the image's bytes.
 */

let rig: Rig;
let s3: S3Server;

beforeAll(async () => {
	rig = await startRig();
	s3 = await startS3Server('pictures');
	rig.harness.setCredentials('storage', 'gpuCloudObjectStorageApi', s3.settings('n8n/'));
});

afterAll(async () => {
	await rig.close();
	await s3.close();
});

const DAY_SECONDS = 24 * 60 * 60;

/**
 * How long a presigned link opens its object, and when it stops: from the signature's own
 * X-Amz-Date and X-Amz-Expires, which the storage server enforces.
 */
function signedLifetime(link: string): { seconds: number; endsAt: number } {
	const query = new URL(link).searchParams;
	const seconds = Number(query.get('X-Amz-Expires'));
	const signedAt = Date.parse(
		String(query.get('X-Amz-Date')).replace(
			/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/,
			'$1-$2-$3T$4:$5:$6Z',
		),
	);
	return { seconds, endsAt: signedAt + seconds * 1000 };
}

const generate: INodeParameters = {
	resource: 'image',
	operation: 'generate',
	prompt: "={{ $fromAI('Prompt', `What the image should show`, 'string') }}",
	imageSettings: { width: 768, height: 512 },
};

function toolWorkflow(parameters: INodeParameters, storage: boolean): WorkflowSpec {
	return {
		id: `image-links-${Math.random().toString(36).slice(2)}`,
		nodes: [
			{ name: 'Items', type: ITEMS_TYPE, parameters: { items: '[{}]' } },
			{
				name: 'Tool Caller',
				type: TOOL_CALLER_TYPE,
				parameters: {
					calls: JSON.stringify([{ args: { Prompt: 'a lighthouse at dawn' } }]),
					route: 'direct',
				},
			},
			{
				name: 'GPU Cloud',
				type: TOOL_TYPE,
				parameters,
				credentials: {
					gpuCloudWorkloadApi: 'images',
					...(storage ? { gpuCloudObjectStorageApi: 'storage' } : {}),
				},
			},
		],
		connections: [
			['Items', 'Tool Caller'],
			['GPU Cloud', 'Tool Caller', 'ai_tool'],
		],
	};
}

const linkedImage = z.object({
	width: z.number(),
	height: z.number(),
	bytes: z.number(),
	url: z.string(),
	expiresAt: z.iso.datetime(),
});

const toolAnswer = z
	.tuple([
		z.object({
			imageCount: z.number(),
			images: z.array(linkedImage).length(1),
			delivered: z.literal(true),
			note: z.string(),
		}),
	])
	.transform(([answer]) => answer);

/** What a person's browser gets from a link: the bytes, with no header of any kind sent. */
async function open(url: string): Promise<{ status: number; bytes: Buffer }> {
	const response = await fetch(url);
	return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
}

describe('Image > Generate with object storage', () => {
	test('as a tool: the answer links each image, and the link opens that image until it expires', async () => {
		const execution = await rig.harness.run(toolWorkflow(generate, true));
		expect(errorOf(execution)).toBeUndefined();
		const [call] = outputOf(execution, 'Tool Caller');
		const answer = toolAnswer.parse(
			JSON.parse(z.object({ answer: z.string() }).parse(call.json).answer),
		);
		expect(answer.note).toMatch(/url opens it/);
		const [image] = answer.images;
		expect(new URL(image.url).origin).toBe(s3.endpoint);
		expect(new URL(image.url).pathname).toMatch(
			/^\/pictures\/n8n\/images\/[0-9a-f-]{36}\/.+\.png$/,
		);
		// A day by default, and the answer says when the link stops opening the image (to the second).
		const lifetime = signedLifetime(image.url);
		expect(lifetime.seconds).toBe(DAY_SECONDS);
		expect(Math.abs(Date.parse(image.expiresAt) - lifetime.endsAt)).toBeLessThan(1000);

		const opened = await open(image.url);
		expect(opened.status).toBe(200);
		expect(opened.bytes.length).toBe(image.bytes);
		expect(imageSize(opened.bytes)).toEqual({ width: 768, height: 512 });
	});

	test('as a tool without storage: no link, and the note says what the owner adds', async () => {
		const execution = await rig.harness.run(toolWorkflow(generate, false));
		const [call] = outputOf(execution, 'Tool Caller');
		const [answer] = z
			.tuple([
				z.object({ delivered: z.literal(false), note: z.string(), images: z.array(z.object({})) }),
			])
			.parse(JSON.parse(z.object({ answer: z.string() }).parse(call.json).answer));
		expect(answer.note).toMatch(/adds a GPU Cloud Object Storage API credential/);
		expect(JSON.stringify(answer.images)).not.toContain('url');
	});

	test('in a normal run: each item keeps its binary and gains the link to the same bytes, for the lifetime asked', async () => {
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				{
					resource: 'image',
					operation: 'generate',
					prompt: 'a lighthouse at dawn',
					imageSettings: { width: 512, height: 640 },
					options: { linkLifetimeMinutes: 5 },
				},
				{
					credential: 'images',
					node: {
						credentials: { gpuCloudWorkloadApi: 'images', gpuCloudObjectStorageApi: 'storage' },
					},
				},
			),
		);
		expect(errorOf(execution)).toBeUndefined();
		const [item] = outputOf(execution, 'GPU Cloud');
		const { url, expiresAt } = z
			.object({ url: z.string(), expiresAt: z.iso.datetime() })
			.parse(item.json);
		const lifetime = signedLifetime(url);
		expect(lifetime.seconds).toBe(5 * 60);
		expect(Math.abs(Date.parse(expiresAt) - lifetime.endsAt)).toBeLessThan(1000);
		const binary = item.binary?.data;
		expect(binary).toBeDefined();
		const opened = await open(url);
		expect(opened.status).toBe(200);
		expect(opened.bytes.equals(Buffer.from(String(binary?.data), 'base64'))).toBe(true);
	});

	test('a link lifetime past 7 days is refused, naming the field, before any image is made', async () => {
		rig.emulator.resetLogs();
		const execution = await rig.harness.run(
			gpuCloudWorkflow(
				{
					resource: 'image',
					operation: 'generate',
					prompt: 'a lighthouse',
					options: { linkLifetimeMinutes: 20_000 },
				},
				{
					credential: 'images',
					node: {
						credentials: { gpuCloudWorkloadApi: 'images', gpuCloudObjectStorageApi: 'storage' },
					},
				},
			),
		);
		expect(errorOf(execution)?.message).toBe(
			'Link Lifetime (Minutes) 20000 must be at most 10080 (7 days, the most S3 allows)',
		);
		expect(rig.emulator.requests.filter((request) => request.surface !== 'management')).toEqual([]);
	});
});
