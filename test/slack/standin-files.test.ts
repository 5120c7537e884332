import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startStandin, type Standin } from '../../slack-standin';
import { DEFAULT_CHANNEL, UNINVITED_CHANNEL } from '../../slack-standin/workspace';
import { wavBytes } from '../support/media-server';

/**
 * Files people share, as Slack keeps them: the stand-in stores a file shared in a message, shows it
 * to the app as a file object (files.info, the message's `files`), and serves its private URLs only
 * with a token that may see it in the Authorization header
 * (https://docs.slack.dev/messaging/working-with-files).
 */

const BOT_TOKEN = 'xoxb-files-test';
const USER = 'U0ALICE';

let standin: Standin;
let appServer: Server;
/** What the stand-in sent the app, parsed. */
const received: Record<string, unknown>[] = [];

beforeAll(async () => {
	appServer = createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			const body = Buffer.concat(chunks).toString('utf8');
			const form = new URLSearchParams(body);
			received.push(
				JSON.parse(form.get('payload') ?? (body.startsWith('{') ? body : '{}')) as Record<
					string,
					unknown
				>,
			);
			res.end('');
		});
	});
	await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
	standin = await startStandin({ botToken: BOT_TOKEN, signingSecret: 'files-secret' });
	standin.setAppUrl(`http://127.0.0.1:${(appServer.address() as AddressInfo).port}/slack/events`);
});

afterAll(async () => {
	await standin.close();
	await new Promise((resolve) => appServer.close(resolve));
});

async function api(method: string, params: Record<string, string>, token = BOT_TOKEN) {
	const response = await fetch(`${standin.apiUrl}${method}`, {
		method: 'POST',
		headers: {
			authorization: `Bearer ${token}`,
			'content-type': 'application/x-www-form-urlencoded',
		},
		body: new URLSearchParams(params).toString(),
	});
	return (await response.json()) as Record<string, unknown>;
}

const fileObject = (value: unknown) => value as Record<string, string | number>;

test('a shared file reaches the app in its message, and files.info describes it as Slack does', async () => {
	const wav = wavBytes(2);
	const { file, message } = await standin.shareFileAsUser({
		user: USER,
		channel: DEFAULT_CHANNEL.id,
		name: 'standup.wav',
		content: wav,
		text: 'our standup',
	});
	const event = received.at(-1)?.event as Record<string, unknown>;
	expect(event).toMatchObject({ type: 'message', subtype: 'file_share', ts: message.ts });
	expect(event.files).toEqual([expect.objectContaining({ id: file.id, filetype: 'wav' })]);

	const info = await api('files.info', { file: file.id });
	expect(info.ok).toBe(true);
	const described = fileObject(info.file);
	expect(described).toMatchObject({
		id: file.id,
		name: 'standup.wav',
		mimetype: 'audio/wav',
		filetype: 'wav',
		size: wav.length,
		user: USER,
		// Slack measures a recording's length on upload.
		duration_ms: 2000,
	});
	expect(String(described.url_private)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files-pri\//);
	expect(String(described.url_private_download)).toContain('/download/');
	expect(standin.api.callsOf('files.info').at(-1)?.status).toBe(200);
});

test("a file's private URL serves the bytes only with the bot's token", async () => {
	const wav = wavBytes(1);
	const { file } = standin.workspace.shareFile({
		user: USER,
		channel: DEFAULT_CHANNEL.id,
		name: 'a.wav',
		content: wav,
	});
	const url = String(
		fileObject((await api('files.info', { file: file.id })).file).url_private_download,
	);

	const anonymous = await fetch(url);
	expect(anonymous.status).toBe(403);
	expect(Buffer.from(await anonymous.arrayBuffer()).equals(wav)).toBe(false);
	expect((await fetch(url, { headers: { authorization: 'Bearer xoxb-guess' } })).status).toBe(403);

	const withToken = await fetch(url, { headers: { authorization: `Bearer ${BOT_TOKEN}` } });
	expect(withToken.status).toBe(200);
	expect(withToken.headers.get('content-type')).toBe('audio/wav');
	expect(Buffer.from(await withToken.arrayBuffer()).equals(wav)).toBe(true);
});

test('a file in a channel the bot is not in is not found, by files.info or its URL', async () => {
	const { file } = standin.workspace.shareFile({
		user: USER,
		channel: UNINVITED_CHANNEL.id,
		name: 'secret.wav',
		content: wavBytes(1),
	});
	expect(await api('files.info', { file: file.id })).toEqual({
		ok: false,
		error: 'file_not_found',
	});
	const guessed = `${standin.apiUrl.replace(/\/api\/$/, '')}/files-pri/T0STANDIN-${file.id}/download/secret.wav`;
	expect((await fetch(guessed, { headers: { authorization: `Bearer ${BOT_TOKEN}` } })).status).toBe(
		404,
	);
});

test('a message shortcut on a message with a file carries the file, as Slack sends it', async () => {
	const { message, file } = standin.workspace.shareFile({
		user: USER,
		channel: DEFAULT_CHANNEL.id,
		name: 'call.mp4',
		content: Buffer.from('not really a video'),
	});
	await standin.app.messageShortcut(USER, 'gpu.transcribe_file', message, standin.filesOf(message));
	const payload = received.at(-1) as { type: string; message: { files: unknown[] } };
	expect(payload.type).toBe('message_action');
	expect(payload.message.files).toEqual([
		expect.objectContaining({ id: file.id, mimetype: 'video/mp4', filetype: 'mp4' }),
	]);
});

test('files.info needs the files:read scope', async () => {
	const scopeless = await startStandin({
		botToken: BOT_TOKEN,
		signingSecret: 'files-secret',
		manifest: { oauth_config: { scopes: { bot: ['chat:write'] } } },
	});
	try {
		const { file } = scopeless.workspace.shareFile({
			user: USER,
			channel: DEFAULT_CHANNEL.id,
			name: 'a.wav',
			content: wavBytes(1),
		});
		const response = await fetch(`${scopeless.apiUrl}files.info`, {
			method: 'POST',
			headers: { authorization: `Bearer ${BOT_TOKEN}`, 'content-type': 'application/json' },
			body: JSON.stringify({ file: file.id }),
		});
		expect(await response.json()).toEqual({ ok: false, error: 'missing_scope' });
	} finally {
		await scopeless.close();
	}
});
