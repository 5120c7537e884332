import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { parse } from 'yaml';
import { MANIFEST_PATH } from '../../slack-standin/app-config';
import { STEPS } from '../../slack-app/listeners/functions';
import { BOT, UNINVITED_CHANNEL, type StepExecution } from '../../slack-standin/workspace';
import { TRANSCRIPTION_ENDPOINT } from '../../shared/schemas';
import { CHANNEL, content, Stack, USER } from './harness';
import { wavBytes } from '../support/media-server';

/**
 * A file shared in Slack, transcribed: the message shortcut on a message carrying a WAV, through
 * signed requests on the stand-in (which serves the file only with the bot token). In HTTP mode the
 * app serves the file to GPU Cloud at a link of its own, for that one job; the link serves nothing
 * once the job has ended, and every download is counted in /metrics.
 */

const LINK = /^http:\/\/127\.0\.0\.1:\d+\/slack\/files\/[A-Za-z0-9_-]{43}\/standup\.wav$/;

let stack: Stack;
beforeAll(async () => {
	// Webhooks on: the app has a public address (its loopback one here).
	stack = await Stack.start({ webhooks: true, emulator: { jobDurationMs: 3000 } });
});
afterAll(() => stack.close());

function share(name: string, content: Buffer, channel = CHANNEL) {
	return stack.standin.workspace.shareFile({ user: USER, channel, name, content, text: 'listen' });
}

async function shortcut(message: ReturnType<typeof share>['message']) {
	return stack.standin.app.messageShortcut(
		USER,
		'gpu.transcribe_file',
		message,
		stack.standin.filesOf(message),
	);
}

/** The app's first reply in a thread. */
function appReply(threadTs: string) {
	return stack.standin.waitFor(
		() => stack.replies(threadTs).find((reply) => reply.user === BOT.userId),
		10_000,
		'the request in the thread',
	);
}

const transcriptions = () =>
	stack.emulator.requests.filter(
		(entry) =>
			entry.method === 'POST' &&
			entry.path.endsWith(`/inference-endpoints/${TRANSCRIPTION_ENDPOINT}/jobs`),
	);

async function metric(outcome: string): Promise<number> {
	const text = await (await fetch(`${stack.app.localUrl}/metrics`)).text();
	const line = new RegExp(
		`^gpu_cloud_slack_file_downloads_total\\{outcome="${outcome}"\\} (\\d+)$`,
		'm',
	);
	return Number(line.exec(text)?.[1] ?? 0);
}

it('transcribes the WAV of a message: the service reads it from the link, which ends with the job', async () => {
	const wav = wavBytes(3);
	const { message } = share('standup.wav', wav);
	const reply = await shortcut(message);
	expect(reply.status).toBe(200);

	// The request's message is a reply in the file's thread, and so is everything after it.
	const parent = await appReply(message.ts);
	expect(stack.parents()).toEqual([]);
	expect(content(parent)).toContain('transcription of the file standup.wav');
	const job = await stack.standin.waitFor(
		() =>
			stack.emulator
				.jobsOf(stack.emulator.organization)
				.find((candidate) => candidate.inference_endpoint_name === TRANSCRIPTION_ENDPOINT),
		10_000,
		'the transcription job',
	);
	const url = String((job.input as { url?: unknown }).url);
	expect(url).toMatch(LINK);
	// The parent names the file, never its link.
	expect(content(parent)).not.toContain(url);

	// What GPU Cloud does: a GET with no header, while the job runs.
	const served = await fetch(url);
	expect(served.status).toBe(200);
	expect(served.headers.get('content-type')).toBe('audio/wav');
	expect(Buffer.from(await served.arrayBuffer()).equals(wav)).toBe(true);
	// The app fetched it from Slack with its token; Slack saw no other request for it.
	expect(stack.standin.fileDownloads.at(-1)).toEqual({
		fileId: message.fileIds[0],
		authorized: true,
	});

	// GPU Cloud (the emulator) read the file through the link: the transcript has the WAV's length.
	const done = await stack.jobEnded(job.id);
	expect(done.status).toBe('succeeded');
	expect((done.output as { duration_in_seconds?: number }).duration_in_seconds).toBeCloseTo(3, 1);
	await stack.waitForParentText(parent.ts, /succeeded|Succeeded|:white_check_mark:/, 20_000);
	await stack.app.idle();
	const thread = stack.replies(message.ts);
	expect(thread.length).toBeGreaterThan(1);
	expect(thread.map(content).join('\n')).toMatch(/duration|transcript|text/i);
	expect(stack.standin.fileDownloads.filter((download) => download.authorized)).toHaveLength(2);
	// Used after the job ended: refused.
	expect((await fetch(url)).status).toBe(404);
	expect(await metric('served')).toBeGreaterThanOrEqual(1);
	expect(await metric('refused')).toBeGreaterThanOrEqual(1);
	// No log line carries the link.
	const token = url.split('/').at(-2) ?? '';
	expect(stack.logger.lines.filter((line) => line.includes(token))).toEqual([]);
});

it('transcribes a file shared inside a thread into that same thread', async () => {
	const root = stack.standin.workspace.post({ channel: CHANNEL, user: USER, text: 'recordings' });
	const { message } = stack.standin.workspace.shareFile({
		user: USER,
		channel: CHANNEL,
		name: 'retro.wav',
		content: wavBytes(1),
		threadTs: root.ts,
	});
	await shortcut(message);
	const parent = await appReply(root.ts);
	expect(content(parent)).toContain('retro.wav');
	await stack.waitForParentText(parent.ts, /succeeded|Succeeded|:white_check_mark:/, 20_000);
	await stack.app.idle();
	expect(stack.replies(message.ts)).toEqual([]);
});

it("delivers the transcript into the file's thread after a restart while the job ran", async () => {
	const { message } = share('standup.wav', wavBytes(2));
	const downloads = stack.standin.fileDownloads.length;
	await shortcut(message);
	const parent = await appReply(message.ts);
	// GPU Cloud has read the file; the app goes away while the job runs, and comes back.
	await stack.standin.waitFor(
		() => stack.standin.fileDownloads.length > downloads,
		10_000,
		'the download',
	);
	await stack.app.stop();
	await stack.startApp();
	await stack.waitForParentText(parent.ts, /succeeded|Succeeded|:white_check_mark:/, 20_000);
	await stack.app.idle();
	expect(stack.replies(message.ts).length).toBeGreaterThan(1);
	expect(stack.parents()).toEqual([]);
});

it("Slack's stop button on the file's thread cancels its transcription", async () => {
	const { message } = share('long-call.wav', wavBytes(2));
	const before = stack.emulator.jobsOf(stack.emulator.organization).length;
	await shortcut(message);
	const parent = await appReply(message.ts);
	const job = await stack.standin.waitFor(
		() => stack.emulator.jobsOf(stack.emulator.organization)[before],
		10_000,
		'the job',
	);
	await stack.standin.waitFor(
		() => stack.standin.workspace.session(CHANNEL, message.ts)?.status === 'processing',
		10_000,
		'the session to be processing',
	);
	expect(await stack.standin.stopSession(USER, CHANNEL, message.ts)).toBe(true);
	await stack.waitForParentText(parent.ts, /[Cc]ancelled/, 20_000);
	expect(stack.emulator.getJob(job.id)?.status).toBe('cancelled');
});

it('transcribes a file sent to the app in a direct message that asks for it, in that thread', async () => {
	const dm = stack.standin.workspace.directMessageOf(USER);
	const { message } = await stack.standin.shareFileAsUser({
		user: USER,
		channel: dm,
		name: 'voice-note.wav',
		content: wavBytes(1),
		text: 'transcribe please',
	});
	const parent = await stack.standin.waitFor(
		() => stack.replies(message.ts, dm).find((reply) => reply.user === BOT.userId),
		10_000,
		'the request in the DM thread',
	);
	expect(content(parent)).toContain('voice-note.wav');
	await stack.waitForParentText(parent.ts, /succeeded|Succeeded|:white_check_mark:/, 20_000, dm);
});

it('transcribes a file shared with "/gpu transcribe" in a channel thread, in that thread', async () => {
	const root = stack.standin.workspace.post({ channel: CHANNEL, user: USER, text: 'call notes' });
	await stack.standin.shareFileAsUser({
		user: USER,
		channel: CHANNEL,
		name: 'call.wav',
		content: wavBytes(1),
		text: '/gpu transcribe',
		threadTs: root.ts,
	});
	const parent = await appReply(root.ts);
	expect(content(parent)).toContain('call.wav');
	await stack.waitForParentText(parent.ts, /succeeded|Succeeded|:white_check_mark:/, 20_000);
});

it('tells the person to invite the app when it cannot see the file, and creates no job', async () => {
	const before = transcriptions().length;
	const { message } = share('secret.wav', wavBytes(1), UNINVITED_CHANNEL.id);
	await shortcut(message);
	await stack.standin.waitFor(
		() => stack.ephemeralTexts().some((text) => text.includes('/invite @GPU Cloud')),
		10_000,
		'the invitation sentence',
	);
	expect(transcriptions().length).toBe(before);
});

it('refuses a file that is not audio or video before any job, naming what Slack says it is', async () => {
	const before = transcriptions().length;
	const { message } = share('notes.txt', Buffer.from('just words'));
	await shortcut(message);
	await stack.standin.waitFor(
		() =>
			stack
				.ephemeralTexts()
				.some((text) => text.includes('notes.txt is not an audio or video file')),
		10_000,
		'the refusal',
	);
	expect(transcriptions().length).toBe(before);
});

it('refuses a recording of 2.5 hours or more before any job, by the length Slack gives', async () => {
	const before = transcriptions().length;
	// A real WAV of 9,001 seconds: one 8-bit sample a second.
	const { message } = share('all-day.wav', wavBytes(9001, { sampleRate: 1 }));
	await shortcut(message);
	await stack.standin.waitFor(
		() =>
			stack
				.ephemeralTexts()
				.some((text) =>
					text.includes(
						'all-day.wav is 2 h 30 min long; GPU Cloud transcribes recordings shorter than 2.5 hours',
					),
				),
		10_000,
		'the refusal',
	);
	expect(transcriptions().length).toBe(before);
});

it('says so when the message has no file', async () => {
	const message = stack.standin.workspace.post({
		channel: CHANNEL,
		user: USER,
		text: 'no file here',
	});
	await stack.standin.app.messageShortcut(USER, 'gpu.transcribe_file', message);
	await stack.standin.waitFor(
		() => stack.ephemeralTexts().some((text) => text.includes('This message has no file')),
		10_000,
		'the no-file answer',
	);
});

describe('the Workflow Builder step "Transcribe a file"', () => {
	const FLOW_CHANNEL = 'C0FLOWS';

	function runStep(fileId: string) {
		return stack.standin.app.functionExecuted(STEPS.transcribeFile, {
			file_id: fileId,
			channel_id: FLOW_CHANNEL,
			user_id: USER,
		});
	}

	function ended(execution: StepExecution): Promise<StepExecution> {
		return stack.standin.waitFor(
			() => (execution.state === 'running' ? undefined : execution),
			30_000,
			`step ${execution.id} to end`,
		);
	}

	it('completes with the transcript when the job ends, its thread in the chosen channel', async () => {
		const { file } = share('interview.wav', wavBytes(2));
		const { execution, reply } = await runStep(file.id);
		expect(reply.status).toBe(200);
		const done = await ended(execution);
		expect(done.state).toBe('completed');
		expect(done.outputs).toMatchObject({ status: 'succeeded' });
		expect(String(done.outputs?.transcript).length).toBeGreaterThan(0);
		const job = stack.emulator.getJob(String(done.outputs?.job_id));
		expect((job?.output as { duration_in_seconds?: number }).duration_in_seconds).toBeCloseTo(2, 1);
		const parent = stack
			.parents(FLOW_CHANNEL)
			.find((message) => content(message).includes('interview.wav'));
		expect(parent).toBeDefined();
	});

	it('fails at once, saying why, when the app cannot see the file', async () => {
		const { file } = share('hidden.wav', wavBytes(1), UNINVITED_CHANNEL.id);
		const before = transcriptions().length;
		const done = await ended((await runStep(file.id)).execution);
		expect(done.state).toBe('failed');
		expect(done.error).toContain('/invite @GPU Cloud');
		expect(transcriptions().length).toBe(before);
	});

	it('fails naming the field when the file id is not one', async () => {
		const done = await ended((await runStep('not-a-file')).execution);
		expect(done.state).toBe('failed');
		expect(done.error).toContain('file_id');
	});
});

describe('hostile requests for links', () => {
	function get(path: string): Promise<number> {
		const { port } = new URL(stack.app.localUrl);
		return new Promise((resolve, reject) => {
			// Sent as written: fetch would normalise `..` and encoded slashes away.
			const req = request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
				res.resume();
				resolve(res.statusCode ?? 0);
			});
			req.on('error', reject);
			req.end();
		});
	}

	it('serves nothing to a guessed token or a path trick', async () => {
		const guessed = 'A'.repeat(43);
		for (const path of [
			`/slack/files/${guessed}/standup.wav`,
			'/slack/files/',
			`/slack/files/${guessed}/../../metrics`,
			`/slack/files/${guessed}%2F..%2F..%2Fmetrics/x`,
			`/slack/files/%2E%2E%2Fmetrics/x`,
			`/slack/files/${guessed}/standup.wav/more`,
			`/slack/files/${guessed.slice(1)}/standup.wav`,
		])
			expect([path, await get(path)]).toEqual([path, 404]);
	});
});

describe('an installation made before the app asked for files:read', () => {
	let old: Stack;
	beforeAll(async () => {
		const manifest = parse(readFileSync(MANIFEST_PATH, 'utf8')) as {
			oauth_config: { scopes: { bot: string[] } };
		};
		manifest.oauth_config.scopes.bot = manifest.oauth_config.scopes.bot.filter(
			(scope) => scope !== 'files:read',
		);
		old = await Stack.start({ webhooks: true, slackApp: { manifest } });
	});
	afterAll(() => old.close());

	it('says an admin must reinstall it, and creates no job', async () => {
		const { message } = old.standin.workspace.shareFile({
			user: USER,
			channel: CHANNEL,
			name: 'standup.wav',
			content: wavBytes(1),
		});
		await old.standin.app.messageShortcut(
			USER,
			'gpu.transcribe_file',
			message,
			old.standin.filesOf(message),
		);
		await old.standin.waitFor(
			() => old.ephemeralTexts().some((text) => text.includes('files:read')),
			10_000,
			'the reinstall sentence',
		);
		expect(old.emulator.jobsOf(old.emulator.organization)).toEqual([]);
	});
});

describe('in Socket Mode, with no public address and no storage', () => {
	let socket: Stack;
	beforeAll(async () => {
		socket = await Stack.start({ socketMode: { retryDelaysMs: [0, 1000, 2000] } });
	});
	afterAll(() => socket.close());

	it('tells the person plainly why a file cannot be sent, and what the operator can set', async () => {
		const { message } = socket.standin.workspace.shareFile({
			user: USER,
			channel: CHANNEL,
			name: 'standup.wav',
			content: wavBytes(1),
		});
		await socket.standin.app.messageShortcut(
			USER,
			'gpu.transcribe_file',
			message,
			socket.standin.filesOf(message),
		);
		const refusal = await socket.standin.waitFor(
			() => socket.ephemeralTexts().find((text) => text.includes('no public address')),
			10_000,
			'the refusal',
		);
		expect(refusal).toContain('SLACK_PUBLIC_URL');
		expect(
			socket.emulator.requests.filter(
				(entry) => entry.method === 'POST' && entry.path.endsWith('/jobs'),
			),
		).toEqual([]);
		// Slack was not even asked for the file.
		expect(socket.standin.fileDownloads).toEqual([]);
	});
});
