import type { InferenceEndpoint, Job } from '../../shared/schemas';
import { askAboutMessagePrompt, askModal } from '../../slack-app/messages/ask';
import { answerFooter, answerMessage } from '../../slack-app/messages/chat';
import { endpointsPageMessage } from '../../slack-app/messages/endpoints';
import {
	deniedMessage,
	noticeMessage,
	serviceErrorMessage,
	threadRepliesNotReadMessage,
	usageErrorMessage,
} from '../../slack-app/messages/errors';
import { codeBlock, escapeWithin } from '../../slack-app/messages/format';
import { homeView } from '../../slack-app/messages/home';
import { unavailableJobModal } from '../../slack-app/messages/modal';
import {
	jobParentMessage,
	parentMessage,
	type RequestSubject,
} from '../../slack-app/messages/parent';
import {
	errorParts,
	INLINE_OUTPUT_LIMIT,
	jobResultParts,
	queueCreatedParts,
} from '../../slack-app/messages/results';
import { inputMessage, jobStatusMessage } from '../../slack-app/messages/status';
import type { ResultPart } from '../../slack-app/model';
import { content, Stack } from './harness';

/**
 * Nothing the app echoes can ping or format: text that is not the app's own (job outputs, model
 * replies, prompts, endpoint data, error details) reaches Slack with `&`, `<` and `>` escaped, in
 * every builder, in streamed answers and in their chat.update fallback.
 */

const HOSTILE =
	'Hey <!channel> <!here> <@U0BOSS> <!subteam^S0TEAM> <#C0SECRET> <https://evil.example|click me> & more';
/** What Slack would turn into a notification or a link. */
const MARKUP = /<[!@#]|<https?:/;
/** The app's own markup: the asker's mention and Slack date tokens (digits and a format; they ping no one). */
const APP_MENTION = /<@U0ASKER>|<!date\^\d+\^\{[a-z_]+\}(?: \{[a-z_]+\})?\|[^<>]*>/g;

/** Every string of a message Slack reads as mrkdwn or markdown (plain_text is never parsed). */
function markupFields(value: unknown, key = ''): string[] {
	if (typeof value === 'string') return key === 'plain_text' ? [] : [value];
	if (Array.isArray(value)) return value.flatMap((item) => markupFields(item, key));
	if (value && typeof value === 'object') {
		const record = value as Record<string, unknown>;
		if (record.type === 'plain_text') return [];
		return Object.entries(record).flatMap(([name, item]) =>
			['text', 'markdown_text', 'blocks', 'elements', 'fields'].includes(name)
				? markupFields(item, name)
				: [],
		);
	}
	return [];
}

function expectNoMarkup(fields: string[]): void {
	for (const field of fields) expect(field.replace(APP_MENTION, '')).not.toMatch(MARKUP);
}

/** The hostile text is shown (escaped), and nothing in the message would ping or link. */
function expectInert(message: unknown): void {
	const fields = markupFields(message);
	expect(fields.join(' ')).toContain('&lt;!channel&gt;');
	expectNoMarkup(fields);
}

function messagesOf(parts: ResultPart[]) {
	return parts.flatMap((part) => (part.kind === 'message' ? [part.message] : []));
}

function job(overrides: Partial<Job>): Job {
	return {
		id: '3f2a9c1e-8b4d-4e6f-9a0b-1c2d3e4f5a6b',
		inference_endpoint_name: 'echo',
		organization_name: 'acme',
		input: { text: HOSTILE },
		status: 'succeeded',
		events: [{ action: 'created', time: '2025-01-01T00:00:00Z' }],
		create_time: '2025-01-01T00:00:00Z',
		update_time: '2025-01-01T00:00:05Z',
		...overrides,
	};
}

const hostileEndpoint: InferenceEndpoint = {
	id: '00000000-0000-4000-8000-000000000001',
	name: 'echo',
	organization_name: 'acme',
	display_name: HOSTILE,
	description: HOSTILE,
	readme: HOSTILE,
	price_description: HOSTILE,
	icon_url: 'https://example.com/i.png',
	input_schema: '{}',
	output_schema: '{}',
};

describe('every Block Kit builder escapes hostile text', () => {
	it.each([
		['a short job output', () => messagesOf(jobResultParts(job({ output: { said: HOSTILE } })))],
		[
			'a long job output (preview and file)',
			() =>
				messagesOf(
					jobResultParts(job({ output: `${HOSTILE} ${'x'.repeat(INLINE_OUTPUT_LIMIT)}` })),
				),
		],
		['a string output', () => messagesOf(jobResultParts(job({ output: HOSTILE })))],
		[
			'a failed job',
			() => messagesOf(jobResultParts(job({ status: 'failed', output: { error: HOSTILE } }))),
		],
		[
			'a transcript, summary and translation',
			() =>
				messagesOf(
					jobResultParts(
						job({
							inference_endpoint_name: 'transcribe',
							output: { text: HOSTILE, summary: HOSTILE, llm_translation: { [HOSTILE]: HOSTILE } },
						}),
					),
				),
		],
		[
			'a transcript returned as a file URL',
			() =>
				messagesOf(
					jobResultParts(
						job({
							inference_endpoint_name: 'transcribe',
							output: { url: `https://files.example/a.txt?${HOSTILE}` },
						}),
					),
				),
		],
		['an error in the thread', () => messagesOf(errorParts('ref-1', HOSTILE, HOSTILE))],
		[
			'a queue created',
			() =>
				messagesOf(
					queueCreatedParts(
						'ref-1',
						{ id: 'q-1', name: 'jobs', display_name: HOSTILE, description: HOSTILE },
						'demo',
					),
				),
		],
	])('%s', (_name, build) => {
		const messages = build();
		expect(messages.length).toBeGreaterThan(0);
		for (const message of messages) expectInert(message);
	});

	const subjects: RequestSubject[] = [
		{ kind: 'job', endpoint: HOSTILE },
		{ kind: 'transcribe', url: HOSTILE },
		{ kind: 'image', request: { prompt: HOSTILE, count: 1 } },
		{ kind: 'chat', message: HOSTILE },
		{ kind: 'queue', name: HOSTILE, project: HOSTILE },
	];
	it.each(subjects.map((subject) => [subject.kind, subject] as const))(
		'the parent of a %s request, its note and its fallback text',
		(_kind, subject) => {
			const message = parentMessage({ user: 'U0ASKER', subject, state: 'failed', note: HOSTILE });
			expectInert(message);
			expect(message.text).toContain('<@U0ASKER>');
		},
	);

	it('a job parent built from the job itself', () => {
		expectInert(
			jobParentMessage(
				job({ inference_endpoint_name: 'transcribe', input: { url: HOSTILE } }),
				{ user: 'U0ASKER', kind: 'transcribe' },
				Date.now(),
				HOSTILE,
			),
		);
	});

	it('a chat answer (the chat.update fallback) and its failure line', () => {
		expectInert(answerMessage(HOSTILE, 'streaming'));
		expectInert(answerMessage(HOSTILE, 'failed', HOSTILE));
		expectInert({ blocks: answerFooter('failed', HOSTILE) });
	});

	it('the endpoint catalogue, and a search typed by the user', () => {
		expectInert(endpointsPageMessage('/gpu', [hostileEndpoint], 1));
		expectInert(endpointsPageMessage('/gpu', [hostileEndpoint], 1, HOSTILE));
	});

	it('usage, service, denial and notice messages', () => {
		expectInert(usageErrorMessage('/gpu', HOSTILE, 'job'));
		expectInert(serviceErrorMessage(HOSTILE, HOSTILE));
		expectInert(deniedMessage(HOSTILE, HOSTILE, 'a workspace admin'));
		expectInert(noticeMessage(HOSTILE));
	});

	it('job status and the input of a job', () => {
		expectInert(
			jobStatusMessage(
				job({ output: HOSTILE, events: [{ action: HOSTILE, time: '2025-01-01T00:00:00Z' }] }),
				Date.now(),
			),
		);
		expectInert(inputMessage('Input', { text: HOSTILE }));
	});

	it('the Home tab (a request, its parent and a notice of the app) and the "Ask about this message" form', () => {
		const parent = parentMessage({
			user: 'U0ASKER',
			subject: { kind: 'chat', message: HOSTILE },
			state: 'succeeded',
			note: HOSTILE,
		});
		expectInert(
			homeView({
				requests: [{ parent }],
				running: 0,
				limit: 3,
				notice: noticeMessage(HOSTILE).text,
			}),
		);
		expectInert(askModal({ channel: 'C1', message: HOSTILE }));
		expectNoMarkup(markupFields(threadRepliesNotReadMessage('/gpu', 'image')));
		expect(askAboutMessagePrompt({ channel: 'C1', message: HOSTILE }, 'why?')).toContain(HOSTILE);
	});

	it('the job form when the catalogue cannot be loaded', () => {
		expectInert(unavailableJobModal({ channel: 'C1' }, HOSTILE));
	});

	it('never cuts an entity in half, in code blocks either', () => {
		for (let max = 5; max < 40; max++) {
			expect(escapeWithin('<<<<<<<<<<&&&&&&&&&&', max)).not.toMatch(/&[a-z]*…$/);
			expect(codeBlock('<'.repeat(100), max)).toMatch(/^```(&lt;)*…```$/);
		}
	});
});

describe('the stand-in shows no ping from hostile text', () => {
	for (const nativeStreaming of [true, false]) {
		it(`in a chat answer ${nativeStreaming ? 'streamed natively' : 'written by chat.update edits'} and in job output`, async () => {
			const stack = await Stack.start({ nativeStreaming });
			try {
				const channel = 'C0HOSTILETEXT';
				await stack.command(`chat ${HOSTILE}`, 'U0ASKER', channel);
				const chat = await stack.waitForParent(1, channel);
				await stack.standin.waitFor(
					() =>
						stack.replies(chat.ts, channel).some((message) => /Regenerate/.test(content(message))),
					15_000,
					'the answer',
				);
				await stack.command(
					`job echo {"text": "${HOSTILE.replace(/"/g, '\\"')}"}`,
					'U0ASKER',
					channel,
				);
				const job = await stack.waitForParent(2, channel);
				await stack.waitForParentText(job.ts, /Succeeded in/, 15_000, channel);
				await stack.standin.waitFor(
					() => stack.replies(job.ts, channel).length > 0,
					10_000,
					'the output',
				);
				await stack.app.idle();
				const posted = stack.standin.workspace
					.channelMessages(channel)
					.flatMap((parent) => [parent, ...stack.replies(parent.ts, channel)]);
				const answer = stack.replies(chat.ts, channel)[0];
				expect(answer.streamed).toBe(nativeStreaming);
				expectInert(posted.map((message) => ({ text: message.text, blocks: message.blocks })));
				// The API calls themselves, streamed chunks included.
				const chatCalls = stack.standin.api.calls.filter((call) => /^chat\./.test(call.method));
				expect(chatCalls.length).toBeGreaterThan(0);
				for (const { method, params } of chatCalls) {
					const sent = markupFields({
						text: params.text,
						markdown_text: params.markdown_text,
						blocks: params.blocks ? (JSON.parse(params.blocks) as unknown) : [],
					});
					for (const field of sent)
						expect(`${method}: ${field.replace(APP_MENTION, '')}`).not.toMatch(MARKUP);
				}
			} finally {
				await stack.close();
			}
		}, 60_000);
	}
});
