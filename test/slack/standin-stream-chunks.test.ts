import { WebClient } from '@slack/web-api';
import type { AnyChunk } from '@slack/types';
import { DEFAULT_CHANNEL, startStandin, type Standin } from '../../slack-standin';

/**
 * The stand-in takes a stream's task and plan chunks as Slack does
 * (https://docs.slack.dev/reference/methods/chat.appendStream, "Using the chunks parameter"): it
 * keeps each task's latest update and the plan's title, shows them, and refuses a malformed chunk
 * with `invalid_arguments`, called here by Slack's own Web API client.
 */

const TOKEN = 'xoxb-stream-chunks';
let standin: Standin;
let client: WebClient;
let parentTs: string;

beforeAll(async () => {
	standin = await startStandin({ botToken: TOKEN, signingSecret: 'chunks-secret' });
	client = new WebClient(TOKEN, {
		slackApiUrl: standin.apiUrl,
		retryConfig: { retries: 0 },
	});
	const parent = await client.chat.postMessage({ channel: DEFAULT_CHANNEL.id, text: 'a question' });
	parentTs = parent.ts ?? '';
});
afterAll(() => standin.close());

function start(chunks: AnyChunk[], mode?: string) {
	return client.chat.startStream({
		channel: DEFAULT_CHANNEL.id,
		thread_ts: parentTs,
		chunks,
		...(mode ? { task_display_mode: mode } : {}),
	});
}

describe('task and plan chunks on the stand-in', () => {
	it('keeps each task as its latest update, the plan title and the text, and shows them', async () => {
		const started = await start(
			[
				{ type: 'plan_update', title: 'Answering' },
				{ type: 'task_update', id: 'model', title: 'Starting the model', status: 'in_progress' },
			],
			'timeline',
		);
		const ts = started.ts ?? '';
		await client.chat.appendStream({
			channel: DEFAULT_CHANNEL.id,
			ts,
			chunks: [
				{ type: 'task_update', id: 'model', title: 'Starting the model', status: 'complete' },
				{ type: 'markdown_text', text: 'Hello' },
			],
		});
		await client.chat.stopStream({ channel: DEFAULT_CHANNEL.id, ts, markdown_text: '!' });
		const message = standin.workspace.find(DEFAULT_CHANNEL.id, ts);
		expect(message).toMatchObject({
			text: 'Hello!',
			planTitle: 'Answering',
			taskDisplayMode: 'timeline',
			tasks: [{ id: 'model', title: 'Starting the model', status: 'complete' }],
			streaming: false,
		});
		const shown = JSON.stringify(standin.snapshot(DEFAULT_CHANNEL.id));
		expect(shown).toContain('"planTitle":"Answering"');
		expect(shown).toContain('"status":"complete"');
	});

	it.each([
		['an unknown type', { type: 'progress_bar', value: 3 }, '/chunks/0/type'],
		[
			'a task without an id',
			{ type: 'task_update', title: 'T', status: 'pending' },
			'/chunks/0/id',
		],
		[
			'a task without a title',
			{ type: 'task_update', id: 't', status: 'pending' },
			'/chunks/0/title',
		],
		[
			'a task with a bad status',
			{ type: 'task_update', id: 't', title: 'T', status: 'done' },
			'/chunks/0/status',
		],
		['a plan without a title', { type: 'plan_update' }, '/chunks/0/title'],
		['text without text', { type: 'markdown_text' }, '/chunks/0/text'],
	])('refuses %s with invalid_arguments, naming the field', async (_name, chunk, pointer) => {
		const before = standin.workspace.replies(DEFAULT_CHANNEL.id, parentTs).length;
		// The SDK's types hold well-formed chunks only: what a careless caller sends goes as its JSON.
		const refused = client.apiCall('chat.startStream', {
			channel: DEFAULT_CHANNEL.id,
			thread_ts: parentTs,
			chunks: JSON.stringify([chunk]),
		});
		await expect(refused).rejects.toMatchObject({
			data: {
				error: 'invalid_arguments',
				response_metadata: { messages: [expect.stringContaining(`[json-pointer:${pointer}]`)] },
			},
		});
		expect(standin.workspace.replies(DEFAULT_CHANNEL.id, parentTs)).toHaveLength(before);
	});

	it('refuses a bad task_display_mode and a start with neither text nor chunks', async () => {
		await expect(start([{ type: 'markdown_text', text: 'x' }], 'carousel')).rejects.toMatchObject({
			data: { error: 'invalid_arguments' },
		});
		await expect(
			client.chat.startStream({ channel: DEFAULT_CHANNEL.id, thread_ts: parentTs }),
		).rejects.toMatchObject({ data: { error: 'invalid_arguments' } });
	});

	it('refuses a malformed task in an append, leaving the message as it was', async () => {
		const started = await start([{ type: 'markdown_text', text: 'so far' }]);
		const ts = started.ts ?? '';
		await expect(
			client.apiCall('chat.appendStream', {
				channel: DEFAULT_CHANNEL.id,
				ts,
				chunks: JSON.stringify([{ type: 'task_update', id: 'x', title: 'X', status: 'paused' }]),
			}),
		).rejects.toMatchObject({ data: { error: 'invalid_arguments' } });
		expect(standin.workspace.find(DEFAULT_CHANNEL.id, ts)?.text).toBe('so far');
		expect(standin.workspace.find(DEFAULT_CHANNEL.id, ts)?.tasks).toBeUndefined();
	});
});
