import { ACTIONS } from '../../slack-app/messages/actions';
import { ANSWER_EVENT } from '../../slack-app/slack/slack-thread';
import { content, Stack } from './harness';

/** Images into threads, streamed chat with thread follow-ups, and the Regenerate / Show input buttons. */

const CHANNEL = 'C0MEDIA';

function answers(stack: Stack, parentTs: string, channel = CHANNEL) {
	return stack
		.replies(parentTs, channel)
		.filter((message) => message.metadata?.event_type === ANSWER_EVENT);
}

describe('images', () => {
	let stack: Stack;
	beforeAll(async () => {
		stack = await Stack.start();
	});
	afterAll(() => stack.close());

	it('uploads the generated images into the thread, then regenerates and shows the input on request', async () => {
		await stack.command(
			'image a red fox in the snow --count 2 --seed 7 --width 512 --height 512',
			'U0ART',
			CHANNEL,
		);
		const parent = await stack.waitForParent(1, CHANNEL);
		expect(content(parent)).toContain('<@U0ART> asked for 2 images: _a red fox in the snow_');
		const done = await stack.waitForParentText(parent.ts, /Succeeded in/, 15_000, CHANNEL);

		const files = stack
			.replies(parent.ts, CHANNEL)
			.flatMap((message) => message.fileIds.map((id) => stack.standin.workspace.files.get(id)));
		expect(files).toHaveLength(2);
		for (const file of files) {
			expect(file?.name).toMatch(/^image-[0-9a-f]{8}-[12]\.(png|jpg|webp)$/);
			expect(file?.content?.length).toBeGreaterThan(100);
			expect(file?.shared).toBe(true);
		}
		// files.uploadV2: upload URLs on the stand-in, then one completion into the thread.
		expect(stack.standin.api.callsOf('files.completeUploadExternal').at(-1)?.params.thread_ts).toBe(
			parent.ts,
		);

		const regenerate = JSON.stringify(done.blocks).includes(ACTIONS.regenerateImage);
		expect(regenerate).toBe(true);
		const value = JSON.stringify({
			prompt: 'a red fox in the snow',
			width: 512,
			height: 512,
			seed: 7,
			count: 2,
		});
		await stack.standin.app.click({
			user: 'U0ART',
			channel: CHANNEL,
			actionId: ACTIONS.regenerateImage,
			value,
			message: done,
		});
		await stack.standin.waitFor(
			() => stack.replies(parent.ts, CHANNEL).flatMap((message) => message.fileIds).length === 4,
			15_000,
			'four images',
		);
		await stack.waitForParentText(parent.ts, /Succeeded in/, 15_000, CHANNEL);

		await stack.standin.app.click({
			user: 'U0ART',
			channel: CHANNEL,
			actionId: ACTIONS.showInput,
			value,
			message: done,
		});
		await stack.waitForEphemeral(/Image request[\s\S]*a red fox in the snow/, 'U0ART');
	});

	it('ends the request as failed, saying so in its thread, when Slack refuses every upload of its images', async () => {
		// Slack keeps refusing (the bot may not share files there): asking again changes nothing.
		stack.standin.api.refuse('files.completeUploadExternal', 'not_in_channel', 100);
		try {
			await stack.command('image a lighthouse at dusk', 'U0ART', 'C0REFUSED');
			const parent = await stack.waitForParent(1, 'C0REFUSED');
			await stack.waitForParentText(parent.ts, /Failed after/, 20_000, 'C0REFUSED');
			const texts = stack.replies(parent.ts, 'C0REFUSED').map((message) => content(message));
			expect(texts).toEqual([
				expect.stringMatching(
					/Generating the image failed[\s\S]*Slack refused[\s\S]*not_in_channel/,
				),
			]);
			expect(stack.replies(parent.ts, 'C0REFUSED').flatMap((message) => message.fileIds)).toEqual(
				[],
			);
		} finally {
			stack.standin.api.refuse('files.completeUploadExternal', 'not_in_channel', 0);
		}
	});
});

describe('chat', () => {
	it('streams natively into the thread and continues the conversation from thread replies', async () => {
		const stack = await Stack.start({ nativeStreaming: true });
		try {
			await stack.command('chat What is an interruptible GPU node?', 'U0ASK', CHANNEL);
			const parent = await stack.waitForParent(1, CHANNEL);
			expect(content(parent)).toContain('<@U0ASK> asked: What is an interruptible GPU node?');
			await stack.waitForParentText(parent.ts, /Succeeded in/, 15_000, CHANNEL);
			const [first] = answers(stack, parent.ts);
			expect(first.text.length).toBeGreaterThan(0);
			expect(stack.standin.api.callsOf('chat.startStream')).toHaveLength(1);
			expect(stack.standin.api.callsOf('chat.stopStream')).toHaveLength(1);

			const chatCallsBefore = stack.serviceCalls('POST', /\/v1\/chat\/completions$/);
			await stack.standin.postAsUser('U0ASK', CHANNEL, 'And how do I survive one?', parent.ts);
			await stack.standin.waitFor(
				() => answers(stack, parent.ts).length === 2 && !answers(stack, parent.ts)[1].streaming,
				15_000,
				'a second answer',
			);
			expect(stack.serviceCalls('POST', /\/v1\/chat\/completions$/)).toBe(chatCallsBefore + 1);
			const lastChat = stack.emulator.requests
				.filter((request) => /\/v1\/chat\/completions$/.test(request.path))
				.at(-1);
			const sent = JSON.parse(lastChat?.body ?? '{}') as {
				messages?: { role: string; content: string }[];
			};
			expect(sent.messages?.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
			expect(sent.messages?.[2].content).toBe('And how do I survive one?');

			// Regenerate on the older turn: that turn is answered again in its own place, from its own
			// question; the later turn stays as it was.
			const [olderAnswer, laterAnswer] = answers(stack, parent.ts);
			const laterText = laterAnswer.text;
			const updatesBefore = stack.standin.api.callsOf('chat.update').length;
			await stack.standin.app.click({
				user: 'U0ASK',
				channel: CHANNEL,
				actionId: ACTIONS.regenerateChat,
				value: 'answer',
				message: olderAnswer,
			});
			await stack.standin.waitFor(
				() => stack.serviceCalls('POST', /\/v1\/chat\/completions$/) === chatCallsBefore + 2,
				15_000,
				'the regenerated request',
			);
			await stack.app.idle();
			const regenerated = JSON.parse(
				stack.emulator.requests
					.filter((request) => /\/v1\/chat\/completions$/.test(request.path))
					.at(-1)?.body ?? '{}',
			) as { messages?: { role: string; content: string }[] };
			expect(regenerated.messages).toEqual([
				{ role: 'user', content: 'What is an interruptible GPU node?' },
			]);
			const after = answers(stack, parent.ts);
			expect(after.map((answer) => answer.ts)).toEqual([olderAnswer.ts, laterAnswer.ts]);
			expect(after[1].text).toBe(laterText);
			const rewritten = stack.standin.api
				.callsOf('chat.update')
				.slice(updatesBefore)
				.filter((call) => call.params.ts === olderAnswer.ts);
			expect(rewritten.length).toBeGreaterThanOrEqual(1);
			expect(JSON.stringify(after[0].blocks)).toContain(ACTIONS.regenerateChat);

			// A reply in a thread that is not a chat is answered privately with what the thread takes.
			await stack.command('transcribe https://files.example/x.mp3', 'U0ASK', 'C0OTHER');
			const other = await stack.waitForParent(1, 'C0OTHER');
			await stack.standin.postAsUser('U0ASK', 'C0OTHER', 'thanks!', other.ts);
			await stack.app.idle();
			expect(answers(stack, other.ts, 'C0OTHER')).toHaveLength(0);
			const note = stack.standin.workspace
				.ephemeralsFor('U0ASK')
				.find((message) => message.channel === 'C0OTHER');
			expect(note?.threadTs).toBe(other.ts);
			expect(note?.text).toMatch(
				/This thread shows a transcription[\s\S]*\/gpu chat &lt;message&gt;/,
			);
		} finally {
			await stack.close();
		}
	});

	it("does not answer in a thread another app started, however its parent's metadata looks", async () => {
		const stack = await Stack.start({});
		try {
			const foreign = stack.standin.workspace.post({
				channel: CHANNEL,
				user: 'U0OTHERBOT',
				botId: 'B0OTHERBOT',
				text: 'Ask me anything',
				metadata: {
					event_type: 'gpu_cloud_request',
					event_payload: { kind: 'chat', user: 'U0ASK', prompt: 'Say something costly.' },
				},
			});
			await stack.standin.postAsUser('U0ASK', CHANNEL, 'go on', foreign.ts);
			await stack.app.idle();
			expect(stack.serviceCalls('POST', /\/v1\/chat\/completions$/)).toBe(0);
			expect(answers(stack, foreign.ts)).toHaveLength(0);
		} finally {
			await stack.close();
		}
	});

	it('falls back to message edits, about one per interval, and regenerates an answer', async () => {
		// A short interval against the emulator's quick tokens: several edits, far fewer than words.
		const stack = await Stack.start({ nativeStreaming: false, streamIntervalMs: 50 });
		try {
			await stack.command('chat Write a short poem about GPUs', 'U0POET', CHANNEL);
			const parent = await stack.waitForParent(1, CHANNEL);
			await stack.waitForParentText(parent.ts, /Succeeded in/, 20_000, CHANNEL);
			const [answer] = answers(stack, parent.ts);
			expect(answer.text.length).toBeGreaterThan(0);
			expect(JSON.stringify(answer.blocks)).toContain(ACTIONS.regenerateChat);
			const edits = stack.standin.api
				.callsOf('chat.update')
				.filter((call) => call.params.ts === answer.ts);
			const started = stack.standin.api.callsOf('chat.startStream');
			expect(started.every((call) => call.error === 'unknown_method')).toBe(true);
			// Streamed in pieces, but throttled: far fewer edits than streamed words.
			expect(edits.length).toBeGreaterThanOrEqual(2);
			expect(edits.length).toBeLessThan(answer.text.split(/\s+/).length / 2);

			const updatesBefore = stack.standin.api.callsOf('chat.update').length;
			await stack.standin.app.click({
				user: 'U0POET',
				channel: CHANNEL,
				actionId: ACTIONS.regenerateChat,
				value: 'answer',
				message: answer,
			});
			await stack.standin.waitFor(
				() =>
					stack.standin.api
						.callsOf('chat.update')
						.slice(updatesBefore)
						.some((call) => call.params.ts === answer.ts),
				20_000,
				'the answer rewritten',
			);
			await stack.app.idle();
			// Regenerated in place: still one answer, with its Regenerate button back.
			const all = answers(stack, parent.ts);
			expect(all).toHaveLength(1);
			expect(JSON.stringify(all[0].blocks)).toContain(ACTIONS.regenerateChat);
		} finally {
			await stack.close();
		}
	});
});
