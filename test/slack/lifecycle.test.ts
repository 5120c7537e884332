import { content, Stack } from './harness';

/** One request lifecycle, seen from Slack: what a request's parent and thread say at its end. */

let stack: Stack;
beforeAll(async () => {
  stack = await Stack.start();
});
afterAll(() => stack.close());

let channelCounter = 0;
function freshChannel(): string {
  channelCounter++;
  return `C0LIFE${channelCounter}`;
}

describe('a queue request', () => {
  it('says the queue was created once it was, not that it is being created', async () => {
    const channel = freshChannel();
    await stack.command('queue lifecycle-done', 'U0QDONE', channel);
    const parent = await stack.waitForParent(1, channel);
    expect(content(parent)).toContain('is creating queue `lifecycle-done`');
    const done = await stack.waitForParentText(parent.ts, /Succeeded in/, 10_000, channel);
    expect(content(done)).toContain('created queue `lifecycle-done`');
    expect(content(done)).not.toContain('is creating queue');
  });

  it('posts a duplicate-queue error once: in the thread, with the parent saying only that it failed', async () => {
    const channel = freshChannel();
    await stack.command('queue lifecycle-twice', 'U0QDUP', channel);
    const first = await stack.waitForParent(1, channel);
    await stack.waitForParentText(first.ts, /Succeeded in/, 10_000, channel);

    await stack.command('queue lifecycle-twice', 'U0QDUP', channel);
    const second = await stack.waitForParent(2, channel);
    const failed = await stack.waitForParentText(second.ts, /Failed after/, 10_000, channel);
    await stack.app.idle();
    const detail = /already exists/;
    const replies = stack.replies(second.ts, channel);
    expect(replies.filter((reply) => detail.test(content(reply)))).toHaveLength(1);
    expect(content(failed)).not.toMatch(detail);
    expect(content(failed)).toContain('could not create queue `lifecycle-twice`');
  });
});

describe('a chat answer that stops', () => {
  it('says why once, in the answer; the parent says only that it failed', async () => {
    const failing = await Stack.start({ emulator: { faults: { streamErrorRate: 1, surfaces: ['chat'] } } });
    try {
      const channel = 'C0CHATFAIL';
      await failing.command('chat Tell me about GPUs', 'U0STOP', channel);
      const parent = await failing.waitForParent(1, channel);
      const failed = await failing.waitForParentText(parent.ts, /Failed after/, 15_000, channel);
      await failing.app.idle();
      const stopped = /The answer stopped/;
      expect(failing.replies(parent.ts, channel).filter((reply) => stopped.test(content(reply)))).toHaveLength(1);
      const answerDetail = /The answer stopped: ([^"\\]+)/.exec(content(failing.replies(parent.ts, channel)[0]))?.[1] ?? '';
      expect(answerDetail.length).toBeGreaterThan(0);
      expect(content(failed)).not.toContain(answerDetail.trim());
    } finally {
      await failing.close();
    }
  });
});

describe('draining for a shutdown', () => {
  it('lets the image under way finish, then answers new commands privately that the app is restarting', async () => {
    // The image workload answers after 1.5 s, so the request is still under way when the drain begins.
    const draining = await Stack.start({ emulator: { faults: { latencyMs: 1500, surfaces: ['image'] } } });
    try {
      const channel = 'C0DRAIN';
      await draining.command('image a lighthouse at dusk', 'U0DRAIN', channel);
      const parent = await draining.waitForParent(1, channel);
      expect(content(parent)).toMatch(/Running/);
      await draining.app.drain();
      expect(content(draining.standin.workspace.find(channel, parent.ts))).toMatch(/Succeeded in/);
      expect(draining.replies(parent.ts, channel).flatMap((message) => message.fileIds)).toHaveLength(1);

      const jobsBefore = draining.serviceCalls('POST', /\/jobs$/);
      await draining.command('transcribe https://files.example/late.mp3', 'U0LATE', channel);
      await draining.waitForEphemeral(/restarting/, 'U0LATE');
      await draining.app.idle();
      expect(draining.parents(channel)).toHaveLength(1);
      expect(draining.serviceCalls('POST', /\/jobs$/)).toBe(jobsBefore);
    } finally {
      await draining.close();
    }
  });
});
