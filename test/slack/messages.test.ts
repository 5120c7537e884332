import type { Job, InferenceEndpoint } from '../../shared/schemas';
import {
	ACTIONS,
	decodeValue,
	encodeValue,
	imageRequestSchema,
	jobRefSchema,
} from '../../slack-app/messages/actions';
import { answerMessage } from '../../slack-app/messages/chat';
import { endpointsPageMessage, ENDPOINTS_PAGE_SIZE } from '../../slack-app/messages/endpoints';
import { deniedMessage, usageErrorMessage } from '../../slack-app/messages/errors';
import { codeBlock, escapeText, formatDuration } from '../../slack-app/messages/format';
import { helpMessage } from '../../slack-app/messages/help';
import { jobModal, JOB_FORM } from '../../slack-app/messages/modal';
import { fileBlock } from '../../slack-app/messages/job-fields';
import type { SchemaField } from '../../shared/input-schema';
import { hideFileLinks, jobParentMessage, parentMessage } from '../../slack-app/messages/parent';
import { INLINE_OUTPUT_LIMIT, jobResultParts } from '../../slack-app/messages/results';
import { jobStatusMessage } from '../../slack-app/messages/status';
import type { KnownBlock, SlackMessage } from '../../slack-app/model';
import { LimitCheck } from '../../slack-standin/limits';

const JOB_ID = '3f2a9c1e-8b4d-4e6f-9a0b-1c2d3e4f5a6b';

function job(overrides: Partial<Job>): Job {
	return {
		id: JOB_ID,
		inference_endpoint_name: 'transcribe',
		organization_name: 'acme',
		input: { url: 'https://files.example/a.mp3' },
		status: 'pending',
		events: [{ action: 'created', time: '2025-01-01T00:00:00Z' }],
		create_time: '2025-01-01T00:00:00Z',
		update_time: '2025-01-01T00:00:00Z',
		...overrides,
	};
}

function endpoint(n: number): InferenceEndpoint {
	return {
		id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
		name: `endpoint-${n}`,
		organization_name: 'acme',
		display_name: `Endpoint ${n}`,
		description: n === 3 ? 'Speech to text' : 'Does things',
		readme: 'readme',
		price_description: '$1 per hour',
		icon_url: 'https://example.com/i.png',
		input_schema: '{}',
		output_schema: '{}',
	};
}

/** All visible text of a message, to assert on what a person reads. */
function visible(message: SlackMessage): string {
	return JSON.stringify(message.blocks);
}

function buttons(message: SlackMessage): { action_id: string; value?: string }[] {
	return message.blocks.flatMap((block: KnownBlock) =>
		block.type === 'actions'
			? block.elements.flatMap((e) =>
					e.type === 'button' ? [{ action_id: e.action_id ?? '', value: e.value }] : [],
				)
			: [],
	);
}

describe('Block Kit renderers', () => {
	it('help lists every subcommand with an example', () => {
		const text = visible(helpMessage('/gpu'));
		for (const name of [
			'endpoints',
			'job',
			'transcribe',
			'status',
			'cancel',
			'queue',
			'image',
			'chat',
		])
			expect(text).toContain(`/gpu ${name}`);
		expect(text).toContain('_e.g._');
	});

	it('a usage error shows the problem and the correct usage, escaped', () => {
		const message = usageErrorMessage('/gpu', 'The input is not valid JSON: <oops>.', 'job');
		expect(visible(message)).toContain('&lt;oops&gt;');
		expect(visible(message)).toContain('/gpu job &lt;endpoint&gt; [json input]');
		expect(message.text).toContain('Usage:');
	});

	it('a denial says who to ask without escaping a configured mention', () => {
		const message = deniedMessage('You are not on the list.', 'To get access, ask', '<@U0ADMIN>');
		expect(visible(message)).toContain('To get access, ask <@U0ADMIN>.');
	});

	describe('parent message', () => {
		it('says who asked for what and shows the live status with Cancel while the job runs', () => {
			const message = jobParentMessage(
				job({ status: 'running' }),
				{ user: 'U1', kind: 'transcribe' },
				Date.parse('2025-01-01T00:00:12Z'),
			);
			expect(visible(message)).toContain(
				'<@U1> asked for a transcription of https://files.example/a.mp3',
			);
			// Each reader's client shows the start as "12 seconds ago"; the fallback says the same.
			expect(visible(message)).toContain(
				`Running · started <!date^${Date.parse('2025-01-01T00:00:00Z') / 1000}^{ago}|12s ago>`,
			);
			expect(buttons(message).map((b) => b.action_id)).toEqual([ACTIONS.cancel, ACTIONS.showInput]);
			expect(decodeValue(jobRefSchema, buttons(message)[0].value)).toEqual({
				endpoint: 'transcribe',
				jobId: JOB_ID,
			});
		});

		it('names a shared file by its name, never by the URL it is read from (a capability)', () => {
			for (const url of [
				`https://gpu-bot.example.com/slack/files/${'x'.repeat(43)}/stand%20up.wav`,
				'https://s3.example/bucket/slack/T1/abc/stand%20up.wav?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=' +
					'0'.repeat(64),
			]) {
				const message = jobParentMessage(
					job({ status: 'running', input: { url } }),
					{ user: 'U1', kind: 'transcribe' },
					Date.parse('2025-01-01T00:00:12Z'),
				);
				expect(visible(message)).toContain(
					'<@U1> asked for a transcription of the file stand up.wav',
				);
				expect(visible(message)).not.toContain('slack/files');
				expect(visible(message)).not.toContain('X-Amz');
			}
		});

		it('shows the total time and drops Cancel once the job has ended', () => {
			const done = job({ status: 'succeeded', update_time: '2025-01-01T00:01:05Z' });
			const message = jobParentMessage(
				done,
				{ user: 'U1', kind: 'job' },
				Date.parse('2025-01-01T05:00:00Z'),
			);
			expect(visible(message)).toContain('Succeeded in 1m 5s');
			expect(visible(message)).toContain('ran a job on `transcribe`');
			expect(buttons(message).map((b) => b.action_id)).toEqual([ACTIONS.showInput]);
		});

		it('never reads "waiting 0s": a fresh request shows no count, sub-second work says "under a second"', () => {
			const pending = parentMessage({
				user: 'U1',
				subject: { kind: 'job', endpoint: 'echo' },
				state: 'pending',
			});
			expect(visible(pending)).toContain('Pending');
			expect(visible(pending)).not.toMatch(/\b0s\b/);
			const justQueued = jobParentMessage(
				job({ status: 'pending' }),
				{ user: 'U1', kind: 'job' },
				Date.parse('2025-01-01T00:00:00.200Z'),
			);
			expect(visible(justQueued)).not.toMatch(/\b0s\b/);
			expect(visible(justQueued)).toContain('queued <!date^');
			const quick = job({ status: 'succeeded', update_time: '2025-01-01T00:00:00.400Z' });
			expect(
				visible(
					jobParentMessage(quick, { user: 'U1', kind: 'job' }, Date.parse('2025-01-01T00:00:01Z')),
				),
			).toContain('Succeeded in under a second');
		});

		it('offers Regenerate on a finished image request, carrying the request', () => {
			const request = { prompt: 'a red fox', count: 2, seed: 4 };
			const running = parentMessage({
				user: 'U1',
				subject: { kind: 'image', request },
				state: 'running',
			});
			const done = parentMessage({
				user: 'U1',
				subject: { kind: 'image', request },
				state: 'succeeded',
				elapsedMs: 3000,
			});
			expect(buttons(running).map((b) => b.action_id)).toEqual([ACTIONS.showInput]);
			const regenerate = buttons(done).find((b) => b.action_id === ACTIONS.regenerateImage);
			expect(decodeValue(imageRequestSchema, regenerate?.value)).toEqual(request);
			expect(visible(done)).toContain('asked for 2 images: _a red fox_');
		});

		it('escapes what users typed', () => {
			const message = parentMessage({
				user: 'U1',
				subject: { kind: 'chat', message: '<!channel> & friends' },
				state: 'running',
			});
			expect(visible(message)).toContain('&lt;!channel&gt; &amp; friends');
		});
	});

	describe('job results', () => {
		it('shows short output inline as a code block', () => {
			const parts = jobResultParts(
				job({ status: 'succeeded', inference_endpoint_name: 'echo', output: { answer: 42 } }),
			);
			expect(parts).toHaveLength(1);
			expect(parts[0].kind).toBe('message');
			expect(parts[0].key).toBe(`${JOB_ID}:result`);
			expect(JSON.stringify(parts)).toContain('\\"answer\\": 42');
		});

		it('uploads long output as a file with a preview', () => {
			const output = { text: 'x'.repeat(INLINE_OUTPUT_LIMIT + 1), extra: true, summary: 1 };
			const parts = jobResultParts(
				job({ status: 'succeeded', inference_endpoint_name: 'echo', output: { data: output } }),
			);
			expect(parts.map((p) => p.kind)).toEqual(['message', 'file']);
			const file = parts[1];
			expect(file.kind === 'file' && file.file.filename).toBe('output-3f2a9c1e.json');
			expect(file.kind === 'file' && JSON.parse(file.file.content.toString('utf8'))).toEqual({
				data: output,
			});
		});

		it('renders a transcript with its summary and translations', () => {
			const parts = jobResultParts(
				job({
					status: 'succeeded',
					output: {
						text: 'Bonjour à tous.',
						summary: 'A greeting.',
						llm_translation: { German: 'Hallo zusammen.' },
						duration_in_seconds: 65,
						processing_time: 3,
					},
				}),
			);
			expect(parts).toHaveLength(1);
			const text = JSON.stringify(parts[0]);
			expect(text).toContain('*Transcript* (1m 5s of audio, processed in 3s)');
			expect(text).toContain('Bonjour à tous.');
			expect(text).toContain('*Summary*\\nA greeting.');
			expect(text).toContain('*German*\\nHallo zusammen.');
		});

		it('attaches the full transcript and word timestamps as files when long', () => {
			const parts = jobResultParts(
				job({
					status: 'succeeded',
					output: {
						text: 'word '.repeat(2000),
						word_segments: [{ word: 'word', start: 0, end: 0.4 }],
					},
				}),
			);
			expect(parts.map((p) => p.key)).toEqual([
				`${JOB_ID}:result`,
				'transcript-3f2a9c1e.txt',
				'word-timestamps-3f2a9c1e.json',
			]);
		});

		it('reports a failure with the service detail and a cancellation with who did it', () => {
			expect(
				JSON.stringify(
					jobResultParts(job({ status: 'failed', output: { error: 'file not reachable' } })),
				),
			).toContain('file not reachable');
			expect(JSON.stringify(jobResultParts(job({ status: 'cancelled' }), 'U9'))).toContain(
				'cancelled by <@U9>',
			);
			expect(jobResultParts(job({ status: 'running' }))).toEqual([]);
		});
	});

	describe('catalogue pages', () => {
		const all = Array.from({ length: ENDPOINTS_PAGE_SIZE * 2 + 1 }, (_, i) => endpoint(i + 1));

		it('pages with Next and Previous buttons that carry the page', () => {
			const first = endpointsPageMessage('/gpu', all, 1);
			expect(buttons(first).map((b) => [b.action_id, b.value])).toEqual([
				[`${ACTIONS.endpointsPage}.next`, '{"page":2}'],
			]);
			const middle = endpointsPageMessage('/gpu', all, 2);
			expect(buttons(middle).map((b) => b.value)).toEqual(['{"page":1}', '{"page":3}']);
			expect(visible(middle)).toContain('page 2 of 3');
			expect(visible(endpointsPageMessage('/gpu', all, 99))).toContain('page 3 of 3');
		});

		it('filters by search words and keeps the search in the buttons', () => {
			const found = endpointsPageMessage('/gpu', all, 1, 'speech');
			expect(visible(found)).toContain('endpoint-3');
			expect(visible(found)).toContain('1 in all');
			expect(visible(endpointsPageMessage('/gpu', all, 1, 'nothing-like-this'))).toContain(
				'Nothing matches',
			);
		});
	});

	it('the job form picks from the catalogue and remembers where it was opened', () => {
		const view = jobModal({ channel: 'C1', endpoint: 'endpoint-2' }, [endpoint(1), endpoint(2)]);
		expect(JSON.parse(view.private_metadata ?? '')).toEqual({
			channel: 'C1',
			endpoint: 'endpoint-2',
		});
		const picker = view.blocks.find(
			(block) => block.type === 'input' && block.block_id === JOB_FORM.endpoint.block,
		);
		expect(JSON.stringify(picker)).toContain(
			'"initial_option":{"text":{"type":"plain_text","text":"Endpoint 2 (endpoint-2)"},"value":"endpoint-2"}',
		);
	});

	it('a job form over a catalogue of 130 endpoints stays within Slack and says which are listed', () => {
		const catalogue = Array.from({ length: 130 }, (_, i) => endpoint(i + 1));
		const view = jobModal({ channel: 'C1', endpoint: 'endpoint-120' }, catalogue);
		const check = new LimitCheck('invalid_arguments');
		check.view(view, '/view', 'modal');
		expect(check.problems).toEqual([]);
		const picker = view.blocks.find(
			(block) => block.type === 'input' && block.block_id === JOB_FORM.endpoint.block,
		);
		// The endpoint the person named is offered and chosen even past the first 100.
		expect(JSON.stringify(picker)).toContain(
			'"initial_option":{"text":{"type":"plain_text","text":"Endpoint 120 (endpoint-120)"}',
		);
		expect(JSON.stringify(picker)).toMatch(/100 of 130 endpoints/);
	});

	it('a job form of 80 required media fields stays within 100 blocks: each shown with its file input', () => {
		const properties = Object.fromEntries(
			Array.from({ length: 80 }, (_, i) => [
				`clip_${i}`,
				{ type: 'string', format: 'uri', 'x-media': 'audio/*' },
			]),
		);
		const media = {
			...endpoint(7),
			input_schema: JSON.stringify({
				type: 'object',
				properties,
				required: Object.keys(properties),
			}),
		};
		const view = jobModal({ channel: 'C1', endpoint: 'endpoint-7' }, [media]);
		const check = new LimitCheck('invalid_arguments');
		check.view(view, '/view', 'modal');
		expect(check.problems).toEqual([]);
		const ids = view.blocks.map((block) => block.block_id ?? '');
		const urls = ids.filter((id) => id.startsWith('field.'));
		// Endpoint, note, Advanced: JSON and metadata take 4 of the 100 blocks; each field takes 2.
		expect(urls).toHaveLength(48);
		for (const id of urls) expect(ids[ids.indexOf(id) + 1]).toBe(id.replace('field.', 'file.'));
		expect(JSON.stringify(view.blocks)).toContain('48 of the 80 fields');
	});

	it("a media field's file input lists the extensions of the kinds it reads, or none (any file) for a kind it cannot name", () => {
		const media = (accept: string): SchemaField => ({
			name: 'source',
			title: 'Source',
			kind: 'url',
			required: true,
			media: accept,
		});
		const element = (accept: string) => {
			const block = fileBlock(media(accept), 'file.source');
			return block.type === 'input' ? block.element : undefined;
		};
		expect(element('application/pdf')).toEqual({
			type: 'file_input',
			action_id: 'files',
			max_files: 1,
			filetypes: ['pdf'],
		});
		expect(element('image/*,application/pdf')).toHaveProperty(
			'filetypes',
			expect.arrayContaining(['png', 'pdf']),
		);
		expect(element('text/csv')).not.toHaveProperty('filetypes');
		expect(element('audio/*,text/csv')).not.toHaveProperty('filetypes');
	});

	it("/gpu status shows times in each reader's own time zone, with a UTC fallback", () => {
		const running = job({
			status: 'running',
			events: [
				{ action: 'created', time: '2025-01-01T00:00:00Z' },
				{ action: 'started', time: '2025-01-01T00:00:05Z' },
			],
		});
		const text = visible(jobStatusMessage(running, Date.parse('2025-01-01T00:00:09Z')));
		expect(text).toContain(
			'created <!date^1735689600^{date_short_pretty} {time}|2025-01-01 00:00 UTC>',
		);
		expect(text).toContain(
			'started <!date^1735689605^{date_short_pretty} {time}|2025-01-01 00:00 UTC>',
		);
		expect(text).not.toContain('2025-01-01T00:00:05Z');
	});

	it('a chat answer carries Regenerate when done and says why it stopped', () => {
		expect(buttons(answerMessage('Hello', 'done')).map((b) => b.action_id)).toEqual([
			ACTIONS.regenerateChat,
		]);
		expect(visible(answerMessage('Hel', 'failed', 'model overloaded'))).toContain(
			'The answer stopped: model overloaded',
		);
		expect(buttons(answerMessage('Hel', 'streaming'))).toEqual([]);
	});

	it('formatting helpers keep Slack markup safe', () => {
		expect(escapeText('<a> & b')).toBe('&lt;a&gt; &amp; b');
		expect(codeBlock('x```y')).not.toContain('x```y');
		expect(formatDuration(59_400)).toBe('59s');
		expect(formatDuration(400)).toBe('under a second');
		expect(formatDuration(3_723_000)).toBe('1h 2m');
		expect(encodeValue({ big: 'x'.repeat(3000) })).toBeUndefined();
	});
});

describe('hideFileLinks', () => {
	it('names presigned and app-served files by their names, anywhere in an input, and leaves other URLs', () => {
		const presigned =
			'https://bucket.s3.example/slack/T1/F1/minutes%20final.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=abc123';
		expect(
			hideFileLinks({
				document: presigned,
				pages: [{ image: presigned }],
				source: 'https://files.example/public.pdf',
				count: 2,
			}),
		).toEqual({
			document: 'minutes final.pdf (a shared file; its link is not shown)',
			pages: [{ image: 'minutes final.pdf (a shared file; its link is not shown)' }],
			source: 'https://files.example/public.pdf',
			count: 2,
		});
	});
});
