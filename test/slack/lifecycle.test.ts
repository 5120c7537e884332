import { content, Stack, type StackOptions } from './harness';

/** One request lifecycle, seen from Slack: what a request's parent and thread say at its end. */

/** A stack for the tests of one describe block; emulator faults apply to all of it. */
function stackFor(options: StackOptions = {}): () => Stack {
	let stack: Stack | undefined;
	beforeAll(async () => {
		stack = await Stack.start(options);
	});
	afterAll(() => stack?.close());
	return () => {
		if (!stack) throw new Error('The stack has not started.');
		return stack;
	};
}

/** Sends a command and waits for the `n`-th parent it makes in the channel. */
async function posted(stack: Stack, text: string, user: string, channel: string, n = 1) {
	await stack.command(text, user, channel);
	return stack.waitForParent(n, channel);
}

let channelCounter = 0;
function freshChannel(): string {
	channelCounter++;
	return `C0LIFE${channelCounter}`;
}

describe('a queue request', () => {
	const stack = stackFor();
	it('says the queue was created once it was, not that it is being created', async () => {
		const channel = freshChannel();
		const parent = await posted(stack(), 'queue lifecycle-done', 'U0QDONE', channel);
		expect(content(parent)).toContain('is creating queue `lifecycle-done`');
		const done = await stack().waitForParentText(parent.ts, /Succeeded in/, 10_000, channel);
		expect(content(done)).toContain('created queue `lifecycle-done`');
		expect(content(done)).not.toContain('is creating queue');
	});

	it('posts a duplicate-queue error once: in the thread, with the parent saying only that it failed', async () => {
		const channel = freshChannel();
		const first = await posted(stack(), 'queue lifecycle-twice', 'U0QDUP', channel);
		await stack().waitForParentText(first.ts, /Succeeded in/, 10_000, channel);

		const second = await posted(stack(), 'queue lifecycle-twice', 'U0QDUP', channel, 2);
		const failed = await stack().waitForParentText(second.ts, /Failed after/, 10_000, channel);
		await stack().app.idle();
		const detail = /already exists/;
		const replies = stack().replies(second.ts, channel);
		expect(replies.filter((reply) => detail.test(content(reply)))).toHaveLength(1);
		expect(content(failed)).not.toMatch(detail);
		expect(content(failed)).toContain('could not create queue `lifecycle-twice`');
	});
});

describe('a chat answer that stops', () => {
	const failing = stackFor({ emulator: { faults: { streamErrorRate: 1, surfaces: ['chat'] } } });

	it('says why once, in the answer; the parent says only that it failed', async () => {
		const channel = 'C0CHATFAIL';
		const parent = await posted(failing(), 'chat Tell me about GPUs', 'U0STOP', channel);
		const failed = await failing().waitForParentText(parent.ts, /Failed after/, 15_000, channel);
		await failing().app.idle();
		const stopped = /The answer stopped/;
		expect(
			failing()
				.replies(parent.ts, channel)
				.filter((reply) => stopped.test(content(reply))),
		).toHaveLength(1);
		const answerDetail =
			/The answer stopped: ([^"\\]+)/.exec(
				content(failing().replies(parent.ts, channel)[0]),
			)?.[1] ?? '';
		expect(answerDetail.length).toBeGreaterThan(0);
		expect(content(failed)).not.toContain(answerDetail.trim());
	});
});

describe('draining for a shutdown', () => {
	// The image workload answers after 1.5 s, so the request is still under way when the drain begins.
	const draining = stackFor({ emulator: { faults: { latencyMs: 1500, surfaces: ['image'] } } });

	it('lets the image under way finish, then answers new commands privately that the app is restarting', async () => {
		const channel = 'C0DRAIN';
		const parent = await posted(draining(), 'image a lighthouse at dusk', 'U0DRAIN', channel);
		expect(content(parent)).toMatch(/Running/);
		await draining().app.drain();
		expect(content(draining().standin.workspace.find(channel, parent.ts))).toMatch(/Succeeded in/);
		expect(
			draining()
				.replies(parent.ts, channel)
				.flatMap((message) => message.fileIds),
		).toHaveLength(1);

		const jobsBefore = draining().serviceCalls('POST', /\/jobs$/);
		await draining().command('transcribe https://files.example/late.mp3', 'U0LATE', channel);
		await draining().waitForEphemeral(/restarting/, 'U0LATE');
		await draining().app.idle();
		expect(draining().parents(channel)).toHaveLength(1);
		expect(draining().serviceCalls('POST', /\/jobs$/)).toBe(jobsBefore);
	});
});
