import { randomUUID } from 'node:crypto';
import type { z } from 'zod/v4';
import {
	imagePromptRequestSchema,
	textToImageRequestSchema,
	type ConvertOutput,
	type PromptGraph,
} from '../../shared/schemas';
import { gatewayRefusal } from '../gateway';
import { describeIssues, json, type Reply, type RequestContext } from '../http';
import type { ResolvedOptions } from '../options';
import type { WebhookSender } from '../webhooks';
import { PIXEL_BUDGET, generationOf, textToImageGraph, type Generation } from './graph';
import { renderImage, type ImageFormat } from './render';

export const IMAGE_PREFIX = '/workloads/image';
export const WORKFLOWS = ['txt2img', 'text2img'] as const;
const VERSION = '1.9.0-emulator';
/** The real workload tries a webhook this many times. */
const WEBHOOK_ATTEMPTS = 3;

interface ImageDeps {
	options: ResolvedOptions;
	webhooks: WebhookSender;
}

interface ImageJob {
	/** The request body as sent; replies echo it. */
	body: Record<string, unknown>;
	id: string;
	graph: PromptGraph;
	convert?: ConvertOutput;
	webhook?: string;
	webhookV2?: string;
}

function errorReply(status: number, error: string, location: string): Reply {
	return json(status, { error, location });
}

function formatOf(convert: ConvertOutput | undefined): ImageFormat {
	if (!convert) return 'png';
	return convert.format === 'webp' ? 'webp' : 'jpeg';
}

/** The image generation workload: node-graph prompts, simple text-to-image workflows, webhooks. */
export function createImageRoutes(deps: ImageDeps) {
	const { options, webhooks } = deps;
	const { clock } = options;

	async function generate(job: ImageJob, generation: Generation) {
		const started = clock.now();
		const format = formatOf(job.convert);
		const extension = format === 'jpeg' ? 'jpg' : format;
		const images = await Promise.all(
			Array.from({ length: generation.count }, (_, index) =>
				renderImage({
					prompt: generation.prompt,
					seed: generation.seed,
					width: generation.width,
					height: generation.height,
					index,
					format,
					quality: job.convert?.options?.quality,
					progressive: job.convert?.options?.progressive,
					lossless: job.convert?.options?.lossless,
				}),
			),
		);
		const generated = clock.now();
		const filenames = images.map(
			(_, i) => `${generation.filenamePrefix}_${String(i + 1).padStart(5, '0')}_.${extension}`,
		);
		const base64 = images.map((image) => image.toString('base64'));
		const done = clock.now();
		const stats = {
			preprocess_time: 0,
			generation_time: generated - started,
			postprocess_time: done - generated,
			total_time: done - started,
		};
		return { ...job.body, id: job.id, prompt: job.graph, images: base64, filenames, stats };
	}

	function outOfMemory(generation: Generation): string | undefined {
		const pixels = generation.width * generation.height * generation.count;
		if (pixels <= PIXEL_BUDGET) return undefined;
		return `Generation failed: out of GPU memory (${generation.count} image(s) of ${generation.width}x${generation.height} exceed what the node can hold; lower batch_size or the size).`;
	}

	function deliverLater(job: ImageJob, generation: Generation): void {
		const timestamp = () => new Date(clock.now()).toISOString();
		const failure = outOfMemory(generation);
		const work = failure ? Promise.reject(new Error(failure)) : generate(job, generation);
		work.then(
			(reply) => {
				if (job.webhookV2) {
					webhooks.send({
						url: job.webhookV2,
						type: 'prompt.complete',
						payload: { type: 'prompt.complete', timestamp: timestamp(), ...reply },
						signed: true,
						webhookId: job.id,
						jobId: job.id,
						maxAttempts: WEBHOOK_ATTEMPTS,
					});
				}
				if (job.webhook) {
					reply.images.forEach((image, i) => {
						webhooks.send({
							url: job.webhook ?? '',
							type: 'output.complete',
							payload: {
								event: 'output.complete',
								image,
								id: job.id,
								filename: reply.filenames[i],
								prompt: job.graph,
								stats: reply.stats,
							},
							signed: false,
							jobId: job.id,
							maxAttempts: WEBHOOK_ATTEMPTS,
						});
					});
				}
			},
			(error: unknown) => {
				options.log(
					`image prompt ${job.id} failed: ${error instanceof Error ? error.message : String(error)}`,
				);
				if (!job.webhookV2) return;
				const message = error instanceof Error ? error.message : String(error);
				webhooks.send({
					url: job.webhookV2,
					type: 'prompt.failed',
					payload: {
						type: 'prompt.failed',
						timestamp: timestamp(),
						id: job.id,
						prompt: job.graph,
						error: message,
					},
					signed: true,
					webhookId: job.id,
					jobId: job.id,
					maxAttempts: WEBHOOK_ATTEMPTS,
				});
			},
		);
	}

	async function run(job: ImageJob): Promise<Reply> {
		const generation = generationOf(job.graph);
		if ('error' in generation) return errorReply(400, generation.error, 'prompt');
		if (job.webhook || job.webhookV2) {
			deliverLater(job, generation);
			return json(202, { ...job.body, status: 'ok', id: job.id });
		}
		const failure = outOfMemory(generation);
		if (failure) return json(500, { error: failure, location: 'execution' });
		return json(200, await generate(job, generation));
	}

	/** The first issue's field is the location; graph problems are 400, other fields 422. */
	function invalid(
		error: z.ZodError,
		body: unknown,
		graphStatus: number,
		otherStatus: number,
	): Reply {
		const first = error.issues[0]?.path.map(String).join('.') ?? 'body';
		const location = first.startsWith('prompt') ? 'prompt' : first || 'body';
		return errorReply(
			location === 'prompt' ? graphStatus : otherStatus,
			describeIssues(error, body),
			location,
		);
	}

	async function readObject(
		ctx: RequestContext,
	): Promise<{ body: Record<string, unknown> } | { refusal: Reply }> {
		const read = await ctx.readJson();
		if (!read.ok)
			return { refusal: errorReply(400, `The body is not valid JSON: ${read.reason}`, 'body') };
		if (typeof read.value !== 'object' || read.value === null || Array.isArray(read.value)) {
			return { refusal: errorReply(400, 'The body must be a JSON object.', 'body') };
		}
		return { body: { ...read.value } };
	}

	async function prompt(ctx: RequestContext): Promise<Reply> {
		const read = await readObject(ctx);
		if ('refusal' in read) return read.refusal;
		const { body } = read;
		const parsed = imagePromptRequestSchema.safeParse(body);
		if (!parsed.success) return invalid(parsed.error, body, 400, 422);
		const request = parsed.data;
		return run({
			body,
			id: request.id ?? randomUUID(),
			graph: request.prompt,
			convert: request.convert_output,
			webhook: request.webhook,
			webhookV2: request.webhook_v2,
		});
	}

	async function workflow(ctx: RequestContext, name: string): Promise<Reply> {
		if (!(WORKFLOWS as readonly string[]).includes(name)) {
			return json(404, {
				error: `Workflow "${name}" does not exist here; available: ${WORKFLOWS.join(', ')}.`,
			});
		}
		const read = await readObject(ctx);
		if ('refusal' in read) return read.refusal;
		const { body } = read;
		const parsed = textToImageRequestSchema.safeParse(body);
		if (!parsed.success) return invalid(parsed.error, body, 422, 422);
		const request = parsed.data;
		return run({
			body,
			id: request.id ?? randomUUID(),
			graph: textToImageGraph(name, request.input),
			convert: request.convert_output,
			webhookV2: request.webhook_v2,
		});
	}

	const apiKeys = options.organizations.map((org) => org.apiKey);
	return async function handle(ctx: RequestContext): Promise<Reply> {
		const refusal = gatewayRefusal(ctx, apiKeys, options.workloadAuth);
		if (refusal) return refusal;
		const path = ctx.path.slice(IMAGE_PREFIX.length);
		if (path === '/health' && ctx.method === 'GET')
			return json(200, { version: VERSION, status: 'healthy' });
		if (path === '/ready' && ctx.method === 'GET')
			return json(200, { version: VERSION, status: 'ready' });
		if (path === '/prompt')
			return ctx.method === 'POST'
				? prompt(ctx)
				: json(405, { error: 'Use POST.' }, { allow: 'POST' });
		const workflowMatch = /^\/workflow\/([^/]+)$/.exec(path);
		if (workflowMatch?.[1]) {
			return ctx.method === 'POST'
				? workflow(ctx, workflowMatch[1])
				: json(405, { error: 'Use POST.' }, { allow: 'POST' });
		}
		return json(404, { error: `Not found: ${ctx.path}` });
	};
}
