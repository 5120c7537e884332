import { ANSWER_EVENT } from '../../slack-app/slack/slack-thread';
import type { ApiCall } from '../../slack-standin/web-api';
import { Stack } from './harness';

/**
 * A chat answer whose model is starting (the text workload scaled up from zero: 503 until a replica
 * is ready) shows Slack's native task progress: a task "Starting the model" in progress, then
 * complete, then the answer's text, in one streamed message. A model already up shows no task.
 */

const CHANNEL = 'C0COLD';
const COLD_START_MS = 2500;

function answers(stack: Stack, parentTs: string) {
	return stack
		.replies(parentTs, CHANNEL)
		.filter((message) => message.metadata?.event_type === ANSWER_EVENT);
}

/** The task_update chunks a stream call carried. */
function taskUpdates(call: ApiCall): { id: string; title: string; status: string }[] {
	const chunks = JSON.parse(call.params.chunks ?? '[]') as { type: string }[];
	return chunks.filter(
		(chunk): chunk is { type: string; id: string; title: string; status: string } =>
			chunk.type === 'task_update',
	);
}

let stack: Stack;
beforeAll(async () => {
	stack = await Stack.start({
		nativeStreaming: true,
		emulator: { chatColdStartMs: COLD_START_MS },
	});
});
afterAll(() => stack.close());

it('shows "Starting the model" in progress while the model starts, complete before the text', async () => {
	await stack.command('chat What is an interruptible GPU node?', 'U0COLD', CHANNEL);
	const parent = await stack.waitForParent(1, CHANNEL);
	await stack.waitForParentText(parent.ts, /Succeeded in/, 20_000, CHANNEL);
	const [answer] = answers(stack, parent.ts);
	const calls = stack.standin.api.calls.filter(
		(call) =>
			call.method.endsWith('Stream') &&
			(call.params.thread_ts === parent.ts || call.params.ts === answer.ts),
	);
	expect(calls.every((call) => call.error === undefined)).toBe(true);
	const [start] = calls;
	expect(start.method).toBe('chat.startStream');
	expect(start.params.task_display_mode).toBe('timeline');
	expect(taskUpdates(start)).toEqual([
		expect.objectContaining({ title: 'Starting the model', status: 'in_progress' }),
	]);
	// The task is complete before any of the answer's text is in the message.
	const completedAt = calls.findIndex((call) =>
		taskUpdates(call).some((task) => task.status === 'complete'),
	);
	const firstText = calls.findIndex(
		(call) =>
			Boolean(call.params.markdown_text) || (call.params.chunks ?? '').includes('markdown_text'),
	);
	expect(completedAt).toBeGreaterThan(0);
	expect(firstText).toBeGreaterThanOrEqual(completedAt);
	// The workload was asked for the answer only once a replica was ready.
	expect(stack.serviceCalls('POST', /\/v1\/chat\/completions$/)).toBe(1);
	expect(answer).toMatchObject({
		streaming: false,
		tasks: [expect.objectContaining({ title: 'Starting the model', status: 'complete' })],
	});
	expect(answer.text.length).toBeGreaterThan(0);
});

it('shows no task when the model is already up', async () => {
	await stack.command('chat And how do I survive one?', 'U0COLD', CHANNEL);
	const parent = await stack.waitForParent(2, CHANNEL);
	await stack.waitForParentText(parent.ts, /Succeeded in/, 20_000, CHANNEL);
	const [answer] = answers(stack, parent.ts);
	expect(answer.tasks).toBeUndefined();
	expect(answer.text.length).toBeGreaterThan(0);
});

describe('where Slack does not stream natively', () => {
	let edits: Stack;
	beforeAll(async () => {
		edits = await Stack.start({
			nativeStreaming: false,
			emulator: { chatColdStartMs: COLD_START_MS },
		});
	});
	afterAll(() => edits.close());

	it('says the model is starting in the answer until its text comes', async () => {
		await edits.command('chat What is an interruptible GPU node?', 'U0COLD', CHANNEL);
		const parent = await edits.waitForParent(1, CHANNEL);
		await edits.waitForParentText(parent.ts, /Succeeded in/, 20_000, CHANNEL);
		const [answer] = answers(edits, parent.ts);
		const writes = edits.standin.api.calls.filter(
			(call) =>
				(call.method === 'chat.postMessage' && call.params.thread_ts === parent.ts) ||
				(call.method === 'chat.update' && call.params.ts === answer.ts),
		);
		expect(writes[0].params.text).toBe('Starting the model…');
		expect(answer.text).not.toContain('Starting the model');
		expect(JSON.stringify(answer.blocks)).not.toContain('Starting the model');
	});
});

describe('the Ask a model step while the model starts', () => {
	let cold: Stack;
	beforeAll(async () => {
		cold = await Stack.start({ emulator: { chatColdStartMs: COLD_START_MS } });
	});
	afterAll(() => cold.close());

	it('waits for the model and completes with its answer, asking it once', async () => {
		const { execution } = await cold.standin.app.functionExecuted('ask_model', {
			question: 'What is an interruptible GPU node?',
			channel_id: CHANNEL,
			user_id: 'U0COLD',
		});
		const done = await cold.standin.waitFor(
			() => (execution.state === 'running' ? undefined : execution),
			20_000,
			'the step to end',
		);
		expect(done.error).toBeUndefined();
		expect(String(done.outputs?.answer)).toContain('What is an interruptible GPU node?');
		expect(cold.serviceCalls('POST', /\/v1\/chat\/completions$/)).toBe(1);
	});
});
