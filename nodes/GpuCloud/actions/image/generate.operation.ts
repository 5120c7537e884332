import type {
	IBinaryData,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';
import { randomInt } from 'node:crypto';
import { z } from 'zod/v4';
import {
	LIMITS,
	PRESIGN_MAX_SECONDS,
	TOOL_PARAMETER_RULES,
	convertOutputSchema,
	imageSize,
	promptGraphSchema,
	textToImageInputSchema,
	webhookUrlSchema,
	workflowNameSchema,
	type ConvertOutput,
	type ImageSource,
	type TextToImageInput,
} from '../../../../shared';
import { n8nClock, workloadClient } from '../../transport';
import { hasObjectStorage } from '../../transport/storage';
import { BinaryUploads, linkLifetimeSchema } from '../../helpers/binary-upload';
import { readConcurrency, runItems, type ItemResult } from '../../helpers/items';
import { check, readCollection, readJson, readString } from '../../helpers/parameters';
import { isToolRun } from '../../helpers/tool';
import { concurrencyOption } from '../common.descriptions';

/** A day: long enough to open a picture from a chat later on, short enough not to leave it public. */
const DEFAULT_LINK_MINUTES = 24 * 60;
const sidePixels = { minValue: LIMITS.imageSideMin, maxValue: LIMITS.imageSideMax };
/** The side the text-to-image workflow uses when the request gives none: what the editor shows. */
const WORKLOAD_DEFAULT_SIDE = 512;

const properties: INodeProperties[] = [
	{
		displayName: 'Source',
		name: 'source',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Text Prompt',
				value: 'text',
				description:
					'Describe the image in words; the workload runs one of its ready-made workflows',
			},
			{
				name: 'Workflow Graph (JSON)',
				value: 'graph',
				description:
					'Send a complete node graph exported from the image workflow editor (API format)',
			},
		],
		default: 'text',
	},
	{
		displayName: 'Prompt',
		name: 'prompt',
		type: 'string',
		typeOptions: { rows: 4 },
		default: '',
		required: true,
		placeholder: 'e.g. A lighthouse on a cliff at dawn, watercolor',
		description: TOOL_PARAMETER_RULES.prompt,
		displayOptions: { show: { source: ['text'] } },
	},
	{
		displayName: 'Workflow Name',
		name: 'workflowName',
		type: 'string',
		default: 'txt2img',
		displayOptions: { show: { source: ['text'] } },
		hint: 'Usually "txt2img"; some models call it "text2img"',
		description: 'The ready-made text-to-image workflow of the deployed workload',
	},
	{
		displayName: 'Image Settings',
		name: 'imageSettings',
		type: 'collection',
		placeholder: 'Add setting',
		default: {},
		displayOptions: { show: { source: ['text'] } },
		options: [
			{
				displayName: 'Guidance Scale',
				name: 'cfgScale',
				type: 'number',
				typeOptions: { minValue: 0, maxValue: 30, numberPrecision: 1 },
				default: 7,
				description: 'How closely the image follows the prompt (0-30)',
			},
			{
				displayName: 'Height',
				name: 'height',
				type: 'number',
				typeOptions: sidePixels,
				default: WORKLOAD_DEFAULT_SIDE,
				description: `Pixels, ${LIMITS.imageSideMin}-${LIMITS.imageSideMax}`,
			},
			{
				displayName: 'Negative Prompt',
				name: 'negativePrompt',
				type: 'string',
				typeOptions: { rows: 2 },
				default: '',
				placeholder: 'e.g. blurry, text, watermark',
				description: 'What the image should not contain',
			},
			{
				displayName: 'Seed',
				name: 'seed',
				type: 'number',
				typeOptions: { minValue: 0 },
				default: 0,
				description: 'The same seed and settings give the same image',
			},
			{
				displayName: 'Steps',
				name: 'steps',
				type: 'number',
				typeOptions: { minValue: 1, maxValue: 150 },
				default: 20,
				description: 'More steps give more detail and take longer (1-150)',
			},
			{
				displayName: 'Width',
				name: 'width',
				type: 'number',
				typeOptions: sidePixels,
				default: WORKLOAD_DEFAULT_SIDE,
				description: `Pixels, ${LIMITS.imageSideMin}-${LIMITS.imageSideMax}`,
			},
		],
	},
	{
		displayName: 'Workflow Graph',
		name: 'graph',
		type: 'json',
		default: '{}',
		required: true,
		displayOptions: { show: { source: ['graph'] } },
		description:
			'The prompt graph (API format): node IDs mapped to nodes. It must contain a save-image node.',
	},
	{
		displayName: 'Image Format',
		name: 'outputFormat',
		type: 'options',
		options: [
			{ name: 'PNG', value: 'png' },
			{ name: 'JPEG', value: 'jpeg' },
			{ name: 'WebP', value: 'webp' },
		],
		default: 'png',
	},
	{
		displayName: 'Quality',
		name: 'quality',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 100 },
		default: 90,
		description: 'Compression quality, 1-100',
		displayOptions: { show: { outputFormat: ['jpeg', 'webp'] } },
	},
	{
		displayName: 'Delivery',
		name: 'delivery',
		type: 'options',
		options: [
			{
				name: 'Wait for the Images',
				value: 'wait',
				description: 'The node outputs the images as files',
			},
			{
				name: 'Send to a Webhook',
				value: 'webhook',
				description:
					'The workload POSTs the images to a URL when done; the node outputs only the request ID',
			},
		],
		default: 'wait',
		hint: 'Generations over about 100 seconds need webhook delivery: the gateway closes longer requests',
	},
	{
		displayName: 'Webhook URL',
		name: 'webhookUrl',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. https://n8n.example.com/webhook/images',
		displayOptions: { show: { delivery: ['webhook'] } },
		description: `Where the workload POSTs the signed result (up to ${LIMITS.webhookUrlMaxLength} characters)`,
	},
	{
		displayName: 'Output',
		name: 'outputMode',
		type: 'options',
		options: [
			{ name: 'One Item per Image', value: 'perImage' },
			{
				name: 'All Images on One Item',
				value: 'allInOne',
				description: 'Files named like the property with _0, _1, ... appended.',
			},
		],
		default: 'perImage',
		displayOptions: { show: { delivery: ['wait'] } },
	},
	{
		displayName: 'Put Output File in Field',
		name: 'binaryPropertyName',
		type: 'string',
		default: 'data',
		required: true,
		displayOptions: { show: { delivery: ['wait'] } },
		hint: 'The name of the output binary field to put the image in',
	},
	{
		displayName:
			'Given a GPU Cloud Object Storage API credential (above), the node also puts each image in that bucket and outputs a link anyone can open until it expires: what an AI agent or a chat can show',
		name: 'imageLinksNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { delivery: ['wait'] } },
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [
			concurrencyOption,
			{
				displayName: 'Link Lifetime (Minutes)',
				name: 'linkLifetimeMinutes',
				type: 'number',
				typeOptions: { minValue: 1, maxValue: PRESIGN_MAX_SECONDS / 60, numberPrecision: 0 },
				default: DEFAULT_LINK_MINUTES,
				displayOptions: { show: { '/delivery': ['wait'] } },
				description:
					'How long the link of each image put in object storage opens it (with a GPU Cloud Object Storage API credential), at most 7 days',
			},
		],
	},
];

const displayOptions = { show: { resource: ['image'], operation: ['generate'] } };

export const description = updateDisplayOptions(displayOptions, properties);

const FORMATS = {
	png: { extension: 'png', mimeType: 'image/png' },
	jpeg: { extension: 'jpg', mimeType: 'image/jpeg' },
	webp: { extension: 'webp', mimeType: 'image/webp' },
};
const formatSchema = z.enum(['png', 'jpeg', 'webp']);
const binaryNameSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, {
	error: 'must be 1-64 letters, digits, hyphens or underscores',
});

const settingsSchema = z.object({
	cfgScale: z.number().optional(),
	height: z.number().optional(),
	negativePrompt: z.string().optional(),
	seed: z.number().optional(),
	steps: z.number().optional(),
	width: z.number().optional(),
});

const input = textToImageInputSchema.shape;

function textInput(prompt: string, settings: z.infer<typeof settingsSchema>): TextToImageInput {
	const result: TextToImageInput = { prompt: check(input.prompt, prompt, 'Prompt') };
	if (settings.negativePrompt) result.negative_prompt = settings.negativePrompt;
	if (settings.width !== undefined) result.width = check(input.width, settings.width, 'Width');
	if (settings.height !== undefined) result.height = check(input.height, settings.height, 'Height');
	if (settings.seed !== undefined) result.seed = check(input.seed, settings.seed, 'Seed');
	if (settings.steps !== undefined) result.steps = check(input.steps, settings.steps, 'Steps');
	if (settings.cfgScale !== undefined)
		result.cfg_scale = check(input.cfg_scale, settings.cfgScale, 'Guidance Scale');
	return result;
}

interface PreparedImage {
	source: ImageSource;
	format: keyof typeof FORMATS;
	webhookUrl?: string;
	outputMode: 'perImage' | 'allInOne';
	binaryName: string;
	/** How long each image's link opens it, when the node puts images in object storage. */
	linkMinutes?: number;
}

function prepare(context: IExecuteFunctions, i: number): PreparedImage {
	const format = check(
		formatSchema,
		context.getNodeParameter('outputFormat', i, 'png'),
		'Image Format',
	);
	const convert: ConvertOutput | undefined =
		format === 'png'
			? undefined
			: check(
					convertOutputSchema,
					{ format, options: { quality: context.getNodeParameter('quality', i, 90) } },
					'Quality',
				);
	const webhookUrl =
		context.getNodeParameter('delivery', i, 'wait') === 'webhook'
			? check(webhookUrlSchema, readString(context, 'webhookUrl', i).trim(), 'Webhook URL')
			: undefined;
	const extras = {
		...(convert ? { convert_output: convert } : {}),
		...(webhookUrl ? { webhook_v2: webhookUrl } : {}),
	};
	const source: ImageSource =
		context.getNodeParameter('source', i, 'text') === 'graph'
			? {
					kind: 'graph',
					request: {
						prompt: check(
							promptGraphSchema,
							readJson(context, 'graph', i, 'Workflow Graph'),
							'Workflow Graph',
						),
						...extras,
					},
				}
			: {
					kind: 'text',
					workflow: check(
						workflowNameSchema,
						readString(context, 'workflowName', i, 'txt2img').trim(),
						'Workflow Name',
					),
					request: {
						input: textInput(
							readString(context, 'prompt', i),
							check(settingsSchema, readCollection(context, 'imageSettings', i), 'Image Settings'),
						),
						...extras,
					},
				};
	return {
		source,
		format,
		webhookUrl,
		outputMode:
			context.getNodeParameter('outputMode', i, 'perImage') === 'allInOne'
				? 'allInOne'
				: 'perImage',
		binaryName: webhookUrl
			? 'data'
			: check(
					binaryNameSchema,
					readString(context, 'binaryPropertyName', i, 'data').trim(),
					'Put Output File in Field',
				),
	};
}

/**
 * Why a tool's images stop at n8n, and what would carry them: said to the model, which passes it
 * on to the person instead of promising a picture.
 */
export const NO_IMAGE_STORAGE_NOTE =
	'The image was made but cannot reach you or the person: n8n hands a model only the JSON of a tool answer and drops binary data such as images. ' +
	"To get a link the person can open, the workflow's owner adds a GPU Cloud Object Storage API credential (an S3-compatible bucket) to this tool. " +
	'Tell the person the image was generated and cannot be shown in this chat.';

/** What a model is told about the links, so it hands them on rather than describing a picture it never saw. */
export const IMAGE_LINK_NOTE =
	"Each image's url opens it, without signing in, until its expiresAt. Give the person the link (or show it as an image where the chat can); you cannot see the image yourself.";

/** The largest seed a tool run picks: any value the workload takes (0 to Number.MAX_SAFE_INTEGER). */
const TOOL_SEED_MAX = 2 ** 32;

/** The seed a request uses: the text prompt's, or the one a graph's sampler node sets. */
function seedOf(source: ImageSource): number | undefined {
	if (source.kind === 'text') return source.request.input.seed;
	for (const node of Object.values(source.request.prompt)) {
		const seed = node.inputs.seed ?? node.inputs.noise_seed;
		if (typeof seed === 'number') return seed;
	}
	return undefined;
}

/** Where each image was put: its link and when the link stops opening it. */
interface ImageLink {
	url: string;
	expiresAt: string;
}

/**
 * Run as a tool, the answer describes each image (what n8n passes on) and either links it (put in
 * object storage) or says plainly that the image itself cannot reach the model. A text prompt
 * without a seed gets one picked here, so the answer can name it and the person can make the same
 * image again.
 */
function toolAnswer(
	result: { id: string; images: Uint8Array[] },
	format: keyof typeof FORMATS,
	seed: number | undefined,
	links: ImageLink[] | undefined,
): ItemResult {
	return [
		{
			json: {
				id: result.id,
				imageCount: result.images.length,
				images: result.images.map((image, n) => ({
					format,
					...(imageSize(image) ?? {}),
					...(seed === undefined ? {} : { seed }),
					bytes: image.length,
					...(links?.[n] ?? {}),
				})),
				delivered: links !== undefined,
				note: links ? IMAGE_LINK_NOTE : NO_IMAGE_STORAGE_NOTE,
			},
		},
	];
}

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	const client = await workloadClient(this);
	const asTool = isToolRun(this);
	const uploads = hasObjectStorage(this) ? new BinaryUploads(this) : undefined;
	/** Each image in the bucket, linked for the option's lifetime; the link is the output, the file stays. */
	const linkImages = async (
		minutes: number | undefined,
		images: Uint8Array[],
		fileNames: string[],
		mimeType: string,
	): Promise<ImageLink[] | undefined> => {
		if (!uploads || minutes === undefined) return undefined;
		const expiresAt = new Date(n8nClock.now() + minutes * 60_000).toISOString();
		return await Promise.all(
			images.map(async (image, n) => {
				const { url } = await uploads.uploadBytes(
					'images',
					image,
					{ fileName: fileNames[n], mimeType },
					minutes * 60,
				);
				return { url, expiresAt };
			}),
		);
	};
	return await runItems(this, items, readConcurrency(this), {
		prepare: (i) => {
			const prepared = prepare(this, i);
			if (uploads && !prepared.webhookUrl)
				prepared.linkMinutes = check(
					linkLifetimeSchema,
					this.getNodeParameter('options.linkLifetimeMinutes', i, DEFAULT_LINK_MINUTES),
					'Link Lifetime (Minutes)',
				);
			const { source } = prepared;
			if (asTool && source.kind === 'text' && source.request.input.seed === undefined)
				source.request.input.seed = randomInt(TOOL_SEED_MAX);
			return prepared;
		},
		run: async (
			{ source, format, webhookUrl, outputMode, binaryName, linkMinutes },
			_i,
			signal,
		): Promise<ItemResult> => {
			if (webhookUrl) {
				const accepted = await client.images.submit(source, { signal });
				return [{ json: { id: accepted.id, status: accepted.status, webhookUrl } }];
			}
			const result = await client.images.generate(source, { signal });
			const { extension, mimeType } = FORMATS[format];
			const fileNames = result.images.map((_image, n) => {
				const given = result.filenames?.[n]?.replace(/\.[A-Za-z0-9]+$/, '');
				return `${given ?? `${result.id}-${n + 1}`}.${extension}`;
			});
			const links = await linkImages(linkMinutes, result.images, fileNames, mimeType);
			if (asTool) return toolAnswer(result, format, seedOf(source), links);
			const files: IBinaryData[] = await Promise.all(
				result.images.map((image, n) =>
					this.helpers.prepareBinaryData(image, fileNames[n], mimeType),
				),
			);
			if (outputMode === 'allInOne') {
				const binary = Object.fromEntries(files.map((file, n) => [`${binaryName}_${n}`, file]));
				return [
					{
						json: {
							id: result.id,
							imageCount: files.length,
							fileNames: files.map((file) => file.fileName ?? ''),
							...(links ? { links } : {}),
						},
						binary,
					},
				];
			}
			return files.map((file, n) => ({
				json: { id: result.id, index: n, fileName: file.fileName ?? '', ...(links?.[n] ?? {}) },
				binary: { [binaryName]: file },
			}));
		},
	});
}
