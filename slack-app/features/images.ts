import { randomInt, randomUUID } from 'node:crypto';
import type { WorkloadClient } from '../../shared/client';
import type { TextToImageInput } from '../../shared/schemas';
import type { ImageRequest } from '../messages/actions';
import { noticeMessage } from '../messages/errors';
import type { ParentView } from '../messages/parent';
import { SLACK_LIMITS, truncate } from '../messages/format';
import { errorParts, imageFilename, imageFilePrefix } from '../messages/results';
import type { ResultPart, ThreadRef } from '../model';
import type { RequestLifecycle } from '../requests/lifecycle';
import type { PrivateReply, RequestContext } from '../requests/outcome';
import type { DeliveryRecord } from '../requests/delivery-record';
import type { InflightRequest } from '../state/state-file';
import type { SlackThreads } from '../slack/slack-thread';
import { plainText } from './conversation';

export interface ImageServiceOptions {
	workload?: WorkloadClient;
	workflow: string;
	lifecycle: RequestLifecycle;
	deliveries: DeliveryRecord;
	threads: SlackThreads;
}

/** The largest seed picked for a step that gives none (any value the workload takes). */
const STEP_SEED_MAX = 2 ** 32;

/** A file title is a label under the image: the prompt's start; the whole prompt is in the parent and Show input. */
const IMAGE_TITLE_LENGTH = 100;

/** What a failed image request is called in its thread. */
const FAILURE = 'Generating the image';
const IMAGES_OFF =
	'Image generation is off: the app has no image workload configured (GPU_CLOUD_IMAGE_URL).';

/** The file extension matching the image bytes (the workload may convert to JPEG or WebP). */
export function imageExtension(bytes: Buffer): string {
	if (bytes.subarray(0, 4).toString('hex') === '89504e47') return 'png';
	if (bytes.subarray(0, 2).toString('hex') === 'ffd8') return 'jpg';
	if (
		bytes.subarray(0, 4).toString('ascii') === 'RIFF' &&
		bytes.subarray(8, 12).toString('ascii') === 'WEBP'
	)
		return 'webp';
	return 'png';
}

/** `/gpu image`: generates images and uploads them into the request's thread; Regenerate repeats it. */
export class ImageService {
	constructor(private readonly options: ImageServiceOptions) {}

	/** A new request (new parent), or a regeneration into an existing thread. */
	async generate(
		context: RequestContext,
		request: ImageRequest,
		existing?: ThreadRef,
	): Promise<PrivateReply> {
		const { lifecycle, workload } = this.options;
		if (!workload) return lifecycle.refuse(context, noticeMessage(IMAGES_OFF));
		const view: ParentView = {
			user: context.user,
			subject: { kind: 'image', request },
			state: 'running',
			note: existing ? `Regenerating for <@${context.user}>…` : undefined,
		};
		return lifecycle.start({
			context,
			kind: 'image',
			usesSlot: true,
			place: existing
				? { kind: 'thread', thread: existing, parent: view }
				: { kind: 'new', parent: view },
			remember: { image: request },
			failure: FAILURE,
			work: async ({ ref }) => ({ state: 'succeeded', parts: await this.render(ref, request) }),
		});
	}

	/**
	 * Workflow Builder's "Generate an image": one image, shared in the workflow's channel with who
	 * asked and the prompt, its file id the step's output (with the seed, picked when none was given,
	 * so the image can be made again). The app's access rules apply as to a `/gpu image` there.
	 */
	async generateForStep(
		context: RequestContext,
		request: Omit<ImageRequest, 'count'>,
	): Promise<{ fileId: string; seed: number } | { refused: string }> {
		const { lifecycle, workload, threads } = this.options;
		const refused = workload
			? lifecycle.refusal(context)
			: lifecycle.refuse(context, noticeMessage(IMAGES_OFF));
		if (refused || !workload) return { refused: plainText(refused?.text ?? '') };
		const seed = request.seed ?? randomInt(STEP_SEED_MAX);
		const [part] = await this.render(randomUUID(), { ...request, seed, count: 1 });
		if (part?.kind !== 'file') throw new Error('The image workload returned no image.');
		const fileId = await threads.shareFile(
			context.channel,
			part.file,
			`<@${context.user}>'s image, from a workflow: ${truncate(request.prompt, IMAGE_TITLE_LENGTH)}`,
		);
		return { fileId, seed };
	}

	/**
	 * After a restart, or on another replica when the one generating died: generates again what was
	 * under way, unless the thread already shows all of its images (the app died after uploading).
	 * Parts already in the thread are never posted twice.
	 */
	redo(inflight: InflightRequest): void {
		const request = inflight.image;
		if (!request) return;
		const { workload } = this.options;
		const thread = { channel: inflight.channel, threadTs: inflight.threadTs };
		this.options.lifecycle.adopt({
			ref: inflight.ref,
			user: inflight.user,
			kind: 'image',
			thread,
			startedAt: inflight.startedAt,
			parent: { user: inflight.user, subject: { kind: 'image', request }, state: 'running' },
			remembered: true,
			failure: FAILURE,
			work: async ({ ref }) => {
				// Turned off since: the thread says so, and the request ends instead of waiting for ever.
				if (!workload) return { state: 'failed', parts: errorParts(ref, FAILURE, IMAGES_OFF) };
				const shown = await this.options.deliveries.partsShown(thread, imageFilePrefix(ref));
				return {
					state: 'succeeded',
					parts: shown >= request.count ? [] : await this.render(ref, request),
				};
			},
		});
	}

	/** One request per image; a given seed makes the set reproducible (seed, seed + 1, ...). */
	private async render(ref: string, request: ImageRequest): Promise<ResultPart[]> {
		const { workload, workflow } = this.options;
		if (!workload) return [];
		const results = await Promise.all(
			Array.from({ length: request.count }, (_, index) => {
				const input: TextToImageInput = {
					prompt: request.prompt,
					...(request.width ? { width: request.width } : {}),
					...(request.height ? { height: request.height } : {}),
					...(request.seed !== undefined ? { seed: request.seed + index } : {}),
				};
				return workload.images.generate({ kind: 'text', workflow, request: { input } });
			}),
		);
		const images = results.flatMap((result) => result.images).slice(0, request.count);
		return images.map((content, index) => {
			const filename = imageFilename(ref, index, imageExtension(content));
			return {
				kind: 'file',
				key: filename,
				file: {
					filename,
					title: `${truncate(request.prompt, IMAGE_TITLE_LENGTH)} (${index + 1}/${images.length})`,
					content,
					altText: truncate(request.prompt, SLACK_LIMITS.altText),
				},
			};
		});
	}
}
