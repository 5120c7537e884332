import { randomUUID } from 'node:crypto';
import type { Logger } from '@slack/bolt';
import type { WorkloadClient } from '../../shared/client';
import type { Clock } from '../../shared/clock';
import type { TextToImageInput } from '../../shared/schemas';
import type { ImageRequest } from '../messages/actions';
import { deniedMessage, noticeMessage } from '../messages/errors';
import { parentMessage, type ParentView } from '../messages/parent';
import { errorParts, imageFilename, imageFilePrefix } from '../messages/results';
import type { ResultPart, ThreadRef } from '../model';
import type { AccessPolicy } from './access';
import type { BackgroundTasks } from './background';
import { describeError, errorSummary } from './errors';
import type { PrivateReply, RequestContext } from './outcome';
import { cannotPostMessage } from './slack-errors';
import type { SlackThreads } from './slack-thread';
import type { InflightRequest, StateStore } from './state-store';

export interface ImageServiceOptions {
  workload?: WorkloadClient;
  workflow: string;
  threads: SlackThreads;
  access: AccessPolicy;
  state: StateStore;
  background: BackgroundTasks;
  clock: Clock;
  logger: Logger;
}

/** The file extension matching the image bytes (the workload may convert to JPEG or WebP). */
export function imageExtension(bytes: Buffer): string {
  if (bytes.subarray(0, 4).toString('hex') === '89504e47') return 'png';
  if (bytes.subarray(0, 2).toString('hex') === 'ffd8') return 'jpg';
  if (bytes.subarray(0, 4).toString('ascii') === 'RIFF' && bytes.subarray(8, 12).toString('ascii') === 'WEBP') return 'webp';
  return 'png';
}

/** `/gpu image`: generates images and uploads them into the request's thread; Regenerate repeats it. */
export class ImageService {
  constructor(private readonly options: ImageServiceOptions) {}

  /** A new request (new parent), or a regeneration into an existing thread. */
  async generate(context: RequestContext, request: ImageRequest, existing?: ThreadRef): Promise<PrivateReply> {
    const { access, threads, state, workload, clock, background } = this.options;
    const denial = access.check(context.user, context.channel);
    if (denial) return deniedMessage(denial.reason, denial.hint, access.settings.contact);
    if (!workload) return noticeMessage('Image generation is off: the app has no image workload configured (GPU_CLOUD_IMAGE_URL).');
    const ref = randomUUID();
    const full = access.acquire(context.user, ref);
    if (full) return deniedMessage(full.reason, full.hint, access.settings.contact);

    const view: ParentView = {
      user: context.user,
      subject: { kind: 'image', request },
      state: 'running',
      note: existing ? `Regenerating for <@${context.user}>…` : undefined,
    };
    let thread: ThreadRef;
    try {
      if (existing) {
        thread = existing;
        await threads.update(thread.channel, thread.threadTs, parentMessage(view));
      } else {
        const threadTs = await threads.postParent(context.channel, parentMessage(view), { kind: 'image', user: context.user });
        thread = { channel: context.channel, threadTs };
      }
    } catch (error) {
      access.release(context.user, ref);
      const message = cannotPostMessage(error);
      if (message) return message;
      throw error;
    }
    const inflight: InflightRequest = { ref, kind: 'image', channel: thread.channel, threadTs: thread.threadTs, messageTs: thread.threadTs, user: context.user, startedAt: clock.now(), image: request };
    await state.startInflight(inflight);
    background.run(`Image request ${ref}`, () => this.produce(inflight, request, view));
    return undefined;
  }

  /**
   * After a restart: generates again what was under way, unless the thread already shows all of its
   * images (the app died after uploading). Parts already in the thread are never posted twice.
   */
  resume(inflight: InflightRequest): void {
    const request = inflight.image;
    if (!request || !this.options.workload) return;
    this.options.access.adopt(inflight.user, inflight.ref);
    const view: ParentView = { user: inflight.user, subject: { kind: 'image', request }, state: 'running' };
    this.options.background.run(`Resumed image request ${inflight.ref}`, async () => {
      const thread = { channel: inflight.channel, threadTs: inflight.threadTs };
      const prefix = imageFilePrefix(inflight.ref);
      const posted = [...(await this.options.threads.postedKeys(thread))].filter((key) => key.startsWith(prefix));
      await this.produce(inflight, request, view, posted.length >= request.count);
    });
  }

  private async produce(inflight: InflightRequest, request: ImageRequest, view: ParentView, alreadyPosted = false): Promise<void> {
    const { threads, state, access, clock, logger } = this.options;
    const thread = { channel: inflight.channel, threadTs: inflight.threadTs };
    try {
      const parts = alreadyPosted ? [] : await this.render(inflight.ref, request);
      await threads.postParts(thread, parts);
      await threads.update(thread.channel, thread.threadTs, parentMessage({ ...view, state: 'succeeded', note: undefined, elapsedMs: clock.now() - inflight.startedAt }));
    } catch (error) {
      logger.warn(`Image request ${inflight.ref} failed: ${errorSummary(error)}`);
      const detail = describeError(error);
      await threads.postParts(thread, errorParts(inflight.ref, 'Generating the image', detail));
      await threads.update(thread.channel, thread.threadTs, parentMessage({ ...view, state: 'failed', note: detail, elapsedMs: clock.now() - inflight.startedAt }));
    } finally {
      access.release(inflight.user, inflight.ref);
      await state.endInflight(inflight.ref);
    }
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
      return { kind: 'file', key: filename, file: { filename, title: `${request.prompt} (${index + 1}/${images.length})`, content, altText: request.prompt } };
    });
  }
}
