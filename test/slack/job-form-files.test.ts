import { FILE_BLOCK_PREFIX } from '../../slack-app/messages/job-fields';
import { JOB_FORM } from '../../slack-app/messages/modal';
import { ACTIONS, encodeValue } from '../../slack-app/messages/actions';
import { mediaFileProblem } from '../../slack-app/features/file-transcription';
import { TRANSCRIPTION_ENDPOINT } from '../../shared/schemas';
import { BOT, UNINVITED_CHANNEL } from '../../slack-standin/workspace';
import { content, Stack } from './harness';
import {
	choose,
	field,
	jobsOn,
	nextJob,
	openForm,
	select,
	stateOf,
	url,
	type Block,
} from './job-form-support';
import { wavBytes } from '../support/media-server';

/**
 * A file in the job form: each media field of an endpoint (a URL the service downloads) gets a
 * file input beside its URL box. A file attached there reaches GPU Cloud the way a shared file
 * does (the app's own link for that one job, in HTTP mode), after the spec's limits and Slack's
 * file object were checked; every refusal comes back on the field's block, and no job is made.
 */

const CHANNEL = 'C0FORMFILES';
const LINK = /^http:\/\/127\.0\.0\.1:\d+\/slack\/files\/[A-Za-z0-9_-]{43}\/standup\.wav$/;
const fileBlock = (name: string) => `${FILE_BLOCK_PREFIX}${name}`;

let stack: Stack;
beforeAll(async () => {
	// Webhooks on: the app has a public address (its loopback one here), so it serves files itself.
	stack = await Stack.start({ webhooks: true, emulator: { jobDurationMs: 2000 } });
});
afterAll(() => stack.close());

function blockOf(blocks: Block[], id: string): Block | undefined {
	return blocks.find((block) => block.block_id === id);
}

/** A file a person uploads in the form's file input (it is shared nowhere else). */
function upload(user: string, name: string, bytes: Buffer) {
	return stack.standin.workspace.uploadToView({ user, name, content: bytes });
}

async function transcribeForm(user: string) {
	const opened = await openForm(stack, user, CHANNEL);
	return choose(stack, user, opened.id, TRANSCRIPTION_ENDPOINT);
}

/** Submits the transcribe form with a URL and/or file ids in the file input; the reply's field errors. */
async function submit(
	user: string,
	form: { id: string; blocks: Block[] },
	{ link, files = [] }: { link?: string; files?: string[] },
) {
	const reply = await stack.standin.app.submitView({
		user,
		viewId: form.id,
		values: stateOf(form.blocks, {
			[JOB_FORM.endpoint.block]: { [JOB_FORM.endpoint.action]: select(TRANSCRIPTION_ENDPOINT) },
			...(link ? { [field('url')]: { value: url(link) } } : {}),
		}),
		files: { [fileBlock('url')]: files },
	});
	expect(reply.status).toBe(200);
	if (reply.body === '') return undefined;
	return (JSON.parse(reply.body) as { errors: Record<string, string> }).errors;
}

describe('each media field offers a file input beside its URL', () => {
	it.each([
		[TRANSCRIPTION_ENDPOINT, ['wav', 'mp3', 'mp4', 'mov'], ['png', 'pdf']],
		['caption-image', ['png', 'jpg'], ['wav', 'pdf']],
		['document-ocr', ['pdf', 'png'], ['wav', 'mp4']],
	])('%s: one file of the kinds it reads, either block optional', async (endpoint, has, hasNot) => {
		const opened = await openForm(stack, 'U0FFI1', CHANNEL);
		const { blocks } = await choose(stack, 'U0FFI1', opened.id, endpoint);
		const files = blockOf(blocks, fileBlock('url'));
		expect(files).toMatchObject({
			type: 'input',
			optional: true,
			element: { type: 'file_input', max_files: 1 },
		});
		const filetypes = files?.element?.filetypes as string[];
		for (const type of has) expect(filetypes).toContain(type);
		for (const type of hasNot) expect(filetypes).not.toContain(type);
		// The URL stays: a field that is required takes one of the two.
		expect(blockOf(blocks, field('url'))).toMatchObject({
			optional: true,
			element: { type: 'url_text_input' },
		});
	});

	it("Slack's client attaches only the listed kinds, one file", async () => {
		const form = await transcribeForm('U0FFI10');
		const text = upload('U0FFI10', 'notes.txt', Buffer.from('just words'));
		await expect(submit('U0FFI10', form, { files: [text.id] })).rejects.toThrow(
			'does not accept .txt files',
		);
		const wavs = [upload('U0FFI10', 'a.wav', wavBytes(1)), upload('U0FFI10', 'b.wav', wavBytes(1))];
		await expect(submit('U0FFI10', form, { files: wavs.map(({ id }) => id) })).rejects.toThrow(
			'takes at most 1 file(s)',
		);
	});

	it('a field that is not media gets no file input', async () => {
		const opened = await openForm(stack, 'U0FFI2', CHANNEL);
		const { blocks } = await choose(stack, 'U0FFI2', opened.id, 'product-listing');
		expect(blocks.filter((block) => block.element?.type === 'file_input')).toEqual([]);
	});
});

it('transcribes a WAV attached in the form: the service reads it from a link that ends with the job', async () => {
	const form = await transcribeForm('U0FFI3');
	const wav = wavBytes(3);
	const file = upload('U0FFI3', 'standup.wav', wav);
	const before = jobsOn(stack, TRANSCRIPTION_ENDPOINT).length;
	const parents = stack.parents(CHANNEL).length;
	expect(await submit('U0FFI3', form, { files: [file.id] })).toBeUndefined();

	const job = await nextJob(stack, TRANSCRIPTION_ENDPOINT, before);
	const link = String((job.input as { url?: unknown }).url);
	expect(link).toMatch(LINK);
	// What GPU Cloud does: a GET with no header, while the job runs.
	const served = await fetch(link);
	expect(served.status).toBe(200);
	expect(Buffer.from(await served.arrayBuffer()).equals(wav)).toBe(true);

	const parent = await stack.waitForParent(parents + 1, CHANNEL);
	expect(content(parent)).toContain('ran a job on `transcribe`');
	expect(content(parent)).not.toContain(link);
	const done = await stack.jobEnded(job.id);
	expect(done.status).toBe('succeeded');
	// The emulator read the WAV through the link: the transcript has its length.
	expect((done.output as { duration_in_seconds?: number }).duration_in_seconds).toBeCloseTo(3, 1);
	await stack.waitForParentText(
		parent.ts,
		/succeeded|Succeeded|:white_check_mark:/,
		20_000,
		CHANNEL,
	);
	await stack.app.idle();
	const thread = stack.replies(parent.ts, CHANNEL);
	expect(thread.some((reply) => reply.user === BOT.userId)).toBe(true);
	expect(thread.map(content).join('\n')).toMatch(/duration|transcript|text/i);
	// The link served its job and nothing after it.
	expect((await fetch(link)).status).toBe(404);
});

it('Show input names the attached file, never its link: the link reads a file only its owner shared', async () => {
	const form = await transcribeForm('U0FFI11');
	const file = upload('U0FFI11', 'standup.wav', wavBytes(1));
	const before = jobsOn(stack, TRANSCRIPTION_ENDPOINT).length;
	expect(await submit('U0FFI11', form, { files: [file.id] })).toBeUndefined();
	const job = await nextJob(stack, TRANSCRIPTION_ENDPOINT, before);
	const link = String((job.input as { url?: unknown }).url);
	expect(link).toMatch(LINK);
	const token = /\/files\/([A-Za-z0-9_-]{43})\//.exec(link)?.[1] ?? link;

	// Someone else in the channel clicks Show input on the job's parent.
	const onlooker = 'U0FFI12';
	const shownBefore = stack.ephemeralTexts(onlooker).length;
	await stack.standin.app.click({
		user: onlooker,
		channel: CHANNEL,
		actionId: ACTIONS.showInput,
		value: encodeValue({ endpoint: TRANSCRIPTION_ENDPOINT, jobId: job.id }),
	});
	const shown = await stack.standin.waitFor(
		() => stack.ephemeralTexts(onlooker)[shownBefore],
		10_000,
		'the answer to Show input',
	);
	expect(shown).toContain(`Input of job ${job.id}`);
	expect(shown).toContain('standup.wav');
	expect(shown).not.toContain(token);
	await stack.jobEnded(job.id);
	await stack.app.idle();
});

describe('a file refused on its field, before any job', () => {
	async function refused(user: string, options: { link?: string; files?: string[] }) {
		const form = await transcribeForm(user);
		const before = jobsOn(stack, TRANSCRIPTION_ENDPOINT).length;
		const errors = await submit(user, form, options);
		await stack.app.idle();
		expect(jobsOn(stack, TRANSCRIPTION_ENDPOINT).length).toBe(before);
		// Each error names a block the view has: Slack shows it under that block.
		for (const block of Object.keys(errors ?? {}))
			expect(form.blocks.some((candidate) => candidate.block_id === block)).toBe(true);
		return errors;
	}

	it('a URL and a file: one of the two', async () => {
		const file = upload('U0FFI4', 'standup.wav', wavBytes(1));
		expect(
			await refused('U0FFI4', { link: 'https://files.example/a.wav', files: [file.id] }),
		).toEqual({
			[fileBlock('url')]: 'Give a URL or attach a file, not both.',
		});
	});

	it('neither, for a required field', async () => {
		expect(await refused('U0FFI5', {})).toEqual({
			[field('url')]: 'This field is required: give a URL, or attach a file below.',
		});
	});

	it('a file that is not audio or video, naming what Slack says it is', async () => {
		// Slack's client holds the input to its extensions; what the file is, Slack tells by its bytes.
		const file = stack.standin.workspace.uploadToView({
			user: 'U0FFI6',
			name: 'notes.wav',
			content: Buffer.from('just words'),
			mimetype: 'text/plain',
		});
		expect(await refused('U0FFI6', { files: [file.id] })).toEqual({
			[fileBlock('url')]:
				'notes.wav is not an audio or video file (Slack says text/plain); this field takes audio or video.',
		});
	});

	it('a recording of 2.5 hours or more, by the length Slack gives', async () => {
		const file = upload('U0FFI7', 'all-day.wav', wavBytes(9001, { sampleRate: 1 }));
		expect(await refused('U0FFI7', { files: [file.id] })).toEqual({
			[fileBlock('url')]:
				'all-day.wav is 2 h 30 min long; GPU Cloud transcribes recordings shorter than 2.5 hours.',
		});
	});

	it('a file the app cannot see: invite it', async () => {
		const { file } = stack.standin.workspace.shareFile({
			user: 'U0FFI8',
			channel: UNINVITED_CHANNEL.id,
			name: 'secret.wav',
			content: wavBytes(1),
		});
		const errors = await refused('U0FFI8', { files: [file.id] });
		expect(errors?.[fileBlock('url')]).toContain('/invite @GPU Cloud');
	});
});

it('holds a file to the spec: under 3 GB, of a type the field reads', () => {
	const wav = { name: 'big.wav', mimetype: 'audio/wav', size: 3_000_000_000 };
	expect(mediaFileProblem(wav, 'audio/*,video/*')).toBe(
		'big.wav is 3.0 GB; GPU Cloud reads files under 3 GB.',
	);
	expect(mediaFileProblem({ ...wav, size: 2_999_999_999 }, 'audio/*,video/*')).toBeUndefined();
	expect(mediaFileProblem({ ...wav, size: 10 }, 'application/pdf,image/*')).toBe(
		'big.wav is not a PDF or image file (Slack says audio/wav); this field takes a PDF or an image.',
	);
	expect(mediaFileProblem({ ...wav, size: 0 }, 'audio/*')).toBe('big.wav is empty.');
});

describe('in Socket Mode, with no public address and no storage', () => {
	let socket: Stack;
	beforeAll(async () => {
		socket = await Stack.start({ socketMode: { retryDelaysMs: [0, 1000, 2000] } });
	});
	afterAll(() => socket.close());

	it("the file's field says why it cannot be sent and what the operator sets; no job", async () => {
		const opened = await openForm(socket, 'U0FFI9', CHANNEL);
		const form = await choose(socket, 'U0FFI9', opened.id, TRANSCRIPTION_ENDPOINT);
		const file = socket.standin.workspace.uploadToView({
			user: 'U0FFI9',
			name: 'standup.wav',
			content: wavBytes(1),
		});
		const reply = await socket.standin.app.submitView({
			user: 'U0FFI9',
			viewId: form.id,
			values: stateOf(form.blocks, {
				[JOB_FORM.endpoint.block]: {
					[JOB_FORM.endpoint.action]: select(TRANSCRIPTION_ENDPOINT),
				},
			}),
			files: { [fileBlock('url')]: [file.id] },
		});
		const { errors } = JSON.parse(reply.body) as { errors: Record<string, string> };
		expect(Object.keys(errors)).toEqual([fileBlock('url')]);
		expect(errors[fileBlock('url')]).toContain('no public address');
		expect(errors[fileBlock('url')]).toContain('SLACK_PUBLIC_URL');
		expect(errors[fileBlock('url')]).toContain('SLACK_STORAGE_ENDPOINT');
		await socket.app.idle();
		expect(jobsOn(socket, TRANSCRIPTION_ENDPOINT)).toEqual([]);
		expect(socket.standin.fileDownloads).toEqual([]);
	});
});
