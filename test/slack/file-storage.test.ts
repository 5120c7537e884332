import { TRANSCRIPTION_ENDPOINT } from '../../shared/schemas';
import { BOT } from '../../slack-standin/workspace';
import { startS3Server, type S3Server } from '../support/s3-server';
import { CHANNEL, content, Stack, USER } from './harness';
import { PDF_BYTES, wavBytes } from '../support/media-server';
import { FILE_BLOCK_PREFIX } from '../../slack-app/messages/job-fields';
import { JOB_FORM } from '../../slack-app/messages/modal';
import { choose, jobsOn, nextJob, openForm, select, stateOf } from './job-form-support';

/**
 * A file shared in Slack, put in the operator's object storage for its job: in Socket Mode, with no
 * public address, the app streams the file from Slack into a real S3-compatible server that checks
 * Signature V4 (test/support/s3-server.ts) and hands GPU Cloud a presigned URL; the object is
 * deleted when the job has ended.
 */

let s3: S3Server;
let stack: Stack;
beforeAll(async () => {
	s3 = await startS3Server('slack-files');
	stack = await Stack.start({
		socketMode: { retryDelaysMs: [0, 1000, 2000] },
		emulator: { jobDurationMs: 1500 },
		env: {
			SLACK_STORAGE_ENDPOINT: s3.endpoint,
			SLACK_STORAGE_REGION: 'us-east-1',
			SLACK_STORAGE_BUCKET: s3.bucket,
			SLACK_STORAGE_KEY_PREFIX: 'gpu-cloud/',
			SLACK_STORAGE_ACCESS_KEY_ID: s3.accessKeyId,
			SLACK_STORAGE_SECRET_ACCESS_KEY: s3.secretAccessKey,
		},
	});
});
afterAll(async () => {
	await stack.close();
	await s3.close();
});

it('puts the file in the bucket, hands GPU Cloud a presigned URL and deletes the object after the job', async () => {
	const wav = wavBytes(2);
	const { message } = stack.standin.workspace.shareFile({
		user: USER,
		channel: CHANNEL,
		name: 'board meeting.wav',
		content: wav,
	});
	await stack.standin.app.messageShortcut(
		USER,
		'gpu.transcribe_file',
		message,
		stack.standin.filesOf(message),
	);
	const parent = await stack.standin.waitFor(
		() => stack.replies(message.ts).find((reply) => reply.user === BOT.userId),
		10_000,
		'the request in the thread',
	);
	const job = await stack.standin.waitFor(
		() =>
			stack.emulator
				.jobsOf(stack.emulator.organization)
				.find((candidate) => candidate.inference_endpoint_name === TRANSCRIPTION_ENDPOINT),
		10_000,
		'the transcription job',
	);
	const url = String((job.input as { url?: unknown }).url);
	expect(url.startsWith(`${s3.endpoint}/${s3.bucket}/gpu-cloud/slack/`)).toBe(true);
	expect(url).toMatch(/[?&]X-Amz-Signature=[0-9a-f]{64}/);

	const done = await stack.jobEnded(job.id);
	expect(done.status).toBe('succeeded');
	expect((done.output as { duration_in_seconds?: number }).duration_in_seconds).toBeCloseTo(2, 1);
	await stack.waitForParentText(parent.ts, /succeeded|Succeeded|:white_check_mark:/, 20_000);
	await stack.app.idle();
	// The parent names the file, never the presigned URL.
	const shown = content(stack.standin.workspace.find(CHANNEL, parent.ts));
	expect(shown).toContain('board meeting.wav');
	expect(shown).not.toContain('X-Amz-Signature');
	// The object is gone: the URL, still within its time, finds nothing.
	const after = await fetch(url);
	expect(after.status).toBe(404);
	expect(await after.text()).toContain('NoSuchKey');
});

it("puts a file attached in the job form's media field in the bucket for its job, and deletes it after", async () => {
	const opened = await openForm(stack, USER, CHANNEL);
	const form = await choose(stack, USER, opened.id, 'document-ocr');
	const scan = stack.standin.workspace.uploadToView({
		user: USER,
		name: 'invoice.pdf',
		content: PDF_BYTES,
	});
	const before = jobsOn(stack, 'document-ocr').length;
	const parents = stack.parents(CHANNEL).length;
	const reply = await stack.standin.app.submitView({
		user: USER,
		viewId: form.id,
		values: stateOf(form.blocks, {
			[JOB_FORM.endpoint.block]: { [JOB_FORM.endpoint.action]: select('document-ocr') },
		}),
		files: { [`${FILE_BLOCK_PREFIX}url`]: [scan.id] },
	});
	expect(reply.body).toBe('');
	const parent = await stack.waitForParent(parents + 1, CHANNEL);
	const job = await nextJob(stack, 'document-ocr', before);
	const url = String((job.input as { url?: unknown }).url);
	expect(url.startsWith(`${s3.endpoint}/${s3.bucket}/gpu-cloud/slack/`)).toBe(true);
	expect(url).toMatch(/invoice\.pdf\?/);
	// The emulator read the PDF through the presigned URL.
	expect((await stack.jobEnded(job.id)).status).toBe('succeeded');
	await stack.waitForParentText(parent.ts, /succeeded|Succeeded|:white_check_mark:/, 20_000);
	await stack.app.idle();
	expect((await fetch(url)).status).toBe(404);
});

it('refuses storage settings that cannot work at start, naming the variable', async () => {
	await stack.app.stop();
	await expect(stack.startApp({ env: { SLACK_STORAGE_BUCKET: 'Not A Bucket' } })).rejects.toThrow(
		/SLACK_STORAGE_BUCKET must be 3-63 lower-case letters/,
	);
	await stack.startApp();
});
