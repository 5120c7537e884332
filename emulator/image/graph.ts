import { LIMITS, type PromptGraph, type TextToImageInput } from '../../shared/schemas';
import { hashOf } from '../determinism';

export const DEFAULT_SIDE = 512;
export const MAX_BATCH = 16;
/** Emulated GPU memory: a generation with more pixels than this fails as out of memory. */
export const PIXEL_BUDGET = 2048 * 2048 * 4;

export interface Generation {
	prompt: string;
	seed: number;
	width: number;
	height: number;
	count: number;
	filenamePrefix: string;
}

type Inputs = Record<string, unknown>;

function isLink(value: unknown): value is [string, number] {
	return (
		Array.isArray(value) &&
		value.length === 2 &&
		typeof value[0] === 'string' &&
		typeof value[1] === 'number'
	);
}

function numberInput(inputs: Inputs, ...names: string[]): number | undefined {
	for (const name of names) {
		const value = inputs[name];
		if (typeof value === 'number') return value;
	}
	return undefined;
}

/**
 * What a node graph asks for: the text of the sampler's positive prompt (else any text node), the
 * seed, the latent size (an EmptyLatentImage-like node with width and height, else 512) and batch.
 * Returns a message for values the emulated model cannot produce.
 */
export function generationOf(graph: PromptGraph): Generation | { error: string } {
	const nodes = Object.entries(graph);
	const textOf = (id: string): string | undefined => {
		const text = graph[id]?.inputs.text;
		return typeof text === 'string' ? text : undefined;
	};
	const positiveLink = nodes.map(([, node]) => node.inputs.positive).find(isLink);
	const anyText = nodes.map(([id]) => textOf(id)).find((text) => text !== undefined);
	const prompt = (positiveLink ? textOf(positiveLink[0]) : undefined) ?? anyText ?? '';
	const seedNode = nodes.find(
		([, node]) => numberInput(node.inputs, 'seed', 'noise_seed') !== undefined,
	);
	const seed = seedNode
		? (numberInput(seedNode[1].inputs, 'seed', 'noise_seed') ?? 0)
		: hashOf(prompt);
	const latent = nodes.find(
		([, node]) =>
			numberInput(node.inputs, 'width') !== undefined &&
			numberInput(node.inputs, 'height') !== undefined,
	);
	const width = latent ? (numberInput(latent[1].inputs, 'width') ?? DEFAULT_SIDE) : DEFAULT_SIDE;
	const height = latent ? (numberInput(latent[1].inputs, 'height') ?? DEFAULT_SIDE) : DEFAULT_SIDE;
	const count = latent ? (numberInput(latent[1].inputs, 'batch_size') ?? 1) : 1;
	const save = nodes.find(([, node]) => 'filename_prefix' in node.inputs);
	const prefix = save?.[1].inputs.filename_prefix;
	const where = latent ? `node "${latent[0]}"` : 'the graph';
	for (const [name, side] of [
		['width', width],
		['height', height],
	] as const) {
		if (!Number.isInteger(side) || side < LIMITS.imageSideMin || side > LIMITS.imageSideMax) {
			return {
				error: `${where} input ${name} ${side} must be a whole number of pixels from ${LIMITS.imageSideMin} to ${LIMITS.imageSideMax}`,
			};
		}
	}
	if (!Number.isInteger(count) || count < 1 || count > MAX_BATCH) {
		return {
			error: `${where} input batch_size ${count} must be a whole number from 1 to ${MAX_BATCH}`,
		};
	}
	if (!Number.isInteger(seed) || seed < 0)
		return { error: `the seed ${seed} must be a whole number of 0 or more` };
	return {
		prompt,
		seed,
		width,
		height,
		count,
		filenamePrefix: typeof prefix === 'string' && prefix.length > 0 ? prefix : 'output',
	};
}

/** The node graph a simple text-to-image request stands for, as the real workload builds it. */
export function textToImageGraph(workflow: string, input: TextToImageInput): PromptGraph {
	return {
		'3': {
			inputs: {
				seed: input.seed ?? hashOf(input.prompt),
				steps: input.steps ?? 20,
				cfg: input.cfg_scale ?? 7,
				sampler_name: input.sampler_name ?? 'euler',
				scheduler: input.scheduler ?? 'normal',
				denoise: input.denoise ?? 1,
				model: ['4', 0],
				positive: ['6', 0],
				negative: ['7', 0],
				latent_image: ['5', 0],
			},
			class_type: 'KSampler',
			_meta: { title: 'KSampler' },
		},
		'4': {
			inputs: { ckpt_name: 'emulated-model.safetensors' },
			class_type: 'CheckpointLoaderSimple',
			_meta: { title: 'Load Checkpoint' },
		},
		'5': {
			inputs: {
				width: input.width ?? DEFAULT_SIDE,
				height: input.height ?? DEFAULT_SIDE,
				batch_size: 1,
			},
			class_type: 'EmptyLatentImage',
			_meta: { title: 'Empty Latent Image' },
		},
		'6': {
			inputs: { text: input.prompt, clip: ['4', 1] },
			class_type: 'CLIPTextEncode',
			_meta: { title: 'Positive Prompt' },
		},
		'7': {
			inputs: { text: input.negative_prompt ?? '', clip: ['4', 1] },
			class_type: 'CLIPTextEncode',
			_meta: { title: 'Negative Prompt' },
		},
		'8': {
			inputs: { samples: ['3', 0], vae: ['4', 2] },
			class_type: 'VAEDecode',
			_meta: { title: 'VAE Decode' },
		},
		'9': {
			inputs: { filename_prefix: workflow, images: ['8', 0] },
			class_type: 'SaveImage',
			_meta: { title: 'Save Image' },
		},
	};
}
