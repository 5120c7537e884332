import { mkdtemp } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileLinks, type LinkedJob, type SharedFile } from '../../slack-app/requests/file-links';
import { LocalSharedState } from '../../slack-app/state/local-state';
import { StateFile } from '../../slack-app/state/state-file';
import { startStandin, type Standin } from '../../slack-standin';
import { DEFAULT_CHANNEL, TEAM } from '../../slack-standin/workspace';
import { ManualClock } from '../support/manual-clock';
import { CapturingLogger } from './harness';
import { wavBytes } from '../support/media-server';

/**
 * The app's file links on their own, served over loopback from a stand-in file: each is a
 * capability for one file of one workspace, for one job and a limited time. The hostile cases:
 * replay after expiry, after the job ended, a link of a workspace the app does not serve, and a
 * download address that is not Slack's (the bot token goes nowhere else).
 */

const BOT_TOKEN = 'xoxb-links-test';
const TTL_MS = 60_000;

let standin: Standin;
let server: Server;
let links: FileLinks;
let clock: ManualClock;
const ended = new Set<string>();
const outcomes: string[] = [];
const logger = new CapturingLogger();

beforeAll(async () => {
	standin = await startStandin({ botToken: BOT_TOKEN, signingSecret: 'links-secret' });
	clock = new ManualClock(Date.now());
	const state = await StateFile.open(
		join(await mkdtemp(join(tmpdir(), 'gpu-file-links-')), 's.json'),
		() => undefined,
	);
	server = createServer((req, res) => links.route(req, res));
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	const standinOrigin = new URL(standin.apiUrl).origin;
	links = new FileLinks({
		store: new LocalSharedState(state, clock),
		publicUrl: `http://127.0.0.1:${port}`,
		clock,
		ttlMs: TTL_MS,
		logger,
		counted: (outcome) => outcomes.push(outcome),
		isSlackUrl: (url) => new URL(url).origin === standinOrigin,
		source: (team) =>
			Promise.resolve(
				team === TEAM.id
					? {
							botToken: () => BOT_TOKEN,
							jobEnded: (job: LinkedJob) => Promise.resolve(ended.has(job.id)),
						}
					: undefined,
			),
	});
});

afterAll(async () => {
	await standin.close();
	await new Promise((resolve) => server.close(resolve));
});

function sharedFile(name = 'call.wav'): { file: SharedFile; bytes: Buffer } {
	const bytes = wavBytes(1);
	const { file } = standin.workspace.shareFile({
		user: 'U0ALICE',
		channel: DEFAULT_CHANNEL.id,
		name,
		content: bytes,
	});
	const described = standin.api.publicFile(file);
	return {
		bytes,
		file: {
			id: file.id,
			name,
			mimetype: file.mimetype,
			size: file.size,
			source: String(described.url_private_download),
		},
	};
}

it('serves the file to anyone holding the link, with no header, and says nothing of it in the logs', async () => {
	const { file, bytes } = sharedFile();
	const link = await links.create(TEAM.id, file);
	const token = link.url.split('/').at(-2) ?? '';
	expect(Buffer.from(token, 'base64url')).toHaveLength(32);
	const response = await fetch(link.url);
	expect(response.status).toBe(200);
	expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);
	expect(outcomes.at(-1)).toBe('served');
	expect(logger.lines.join('\n')).not.toContain(token);
});

it('refuses a link replayed after its time, though the file is still in Slack', async () => {
	const link = await links.create(TEAM.id, sharedFile().file);
	expect((await fetch(link.url)).status).toBe(200);
	await clock.advance(TTL_MS + 1);
	expect((await fetch(link.url)).status).toBe(404);
	expect(outcomes.at(-1)).toBe('refused');
});

it('refuses a link once its job has ended, on whichever replica the job ended', async () => {
	const link = await links.create(TEAM.id, sharedFile().file);
	await link.bind({ endpoint: 'transcribe', id: 'job-ended-elsewhere' });
	expect((await fetch(link.url)).status).toBe(200);
	// Another replica delivered the job: this one learns it from the service when asked.
	ended.add('job-ended-elsewhere');
	expect((await fetch(link.url)).status).toBe(404);
	ended.delete('job-ended-elsewhere');
	// Refused for good: the record is gone.
	expect((await fetch(link.url)).status).toBe(404);
});

it('refuses a revoked link', async () => {
	const link = await links.create(TEAM.id, sharedFile().file);
	await link.revoke();
	expect((await fetch(link.url)).status).toBe(404);
});

it("serves nothing for a workspace the app does not serve, nor from another link's token", async () => {
	const { file } = sharedFile();
	const foreign = await links.create('T0ELSEWHERE', file);
	expect((await fetch(foreign.url)).status).toBe(404);
	const mine = await links.create(TEAM.id, file);
	// The file name in the URL is decoration; another name with a valid token still names one file.
	const renamed = mine.url.replace(/[^/]+$/, 'other.wav');
	expect((await fetch(renamed)).status).toBe(200);
	const flipped = mine.url.replace(
		/\/([A-Za-z0-9_-])([A-Za-z0-9_-]{42})\//,
		(_, first: string, rest: string) => `/${first === 'A' ? 'B' : 'A'}${rest}/`,
	);
	expect((await fetch(flipped)).status).toBe(404);
});

it('streams the file as Slack sends it: GPU Cloud gets the first bytes before Slack has sent the rest', async () => {
	// A file host that sends half, and the rest only once the reader has bytes through the link:
	// a link that held the file whole would wait for ever.
	let readerGotBytes = () => {};
	const firstBytesRead = new Promise<void>((resolve) => (readerGotBytes = resolve));
	const half = Buffer.alloc(256 * 1024, 1);
	const host = createServer((req, res) => {
		expect(req.headers.authorization).toBe(`Bearer ${BOT_TOKEN}`);
		res.writeHead(200, { 'content-length': String(half.length * 2) });
		res.write(half);
		void firstBytesRead.then(() => res.end(half));
	});
	await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
	const { port } = host.address() as AddressInfo;
	const streaming = new FileLinks({
		store: new LocalSharedState(
			await StateFile.open(
				join(await mkdtemp(join(tmpdir(), 'gpu-file-links-')), 's.json'),
				() => undefined,
			),
			clock,
		),
		publicUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		clock,
		ttlMs: TTL_MS,
		logger,
		counted: () => undefined,
		isSlackUrl: () => true,
		source: () =>
			Promise.resolve({ botToken: () => BOT_TOKEN, jobEnded: () => Promise.resolve(false) }),
	});
	const previous = links;
	links = streaming;
	try {
		const link = await streaming.create(TEAM.id, {
			id: 'F0BIG',
			name: 'big.wav',
			mimetype: 'audio/wav',
			size: half.length * 2,
			source: `http://127.0.0.1:${port}/big.wav`,
		});
		const response = await fetch(link.url);
		const reader = response.body?.getReader();
		if (!reader) throw new Error('no body');
		let received = 0;
		for (;;) {
			const { done, value } = await reader.read();
			if (done) break;
			received += value.length;
			readerGotBytes();
		}
		expect(received).toBe(half.length * 2);
	} finally {
		links = previous;
		await new Promise((resolve) => host.close(resolve));
	}
});

it('never sends the bot token to an address that is not Slack', async () => {
	const { file } = sharedFile();
	await expect(
		links.create(TEAM.id, { ...file, source: 'https://attacker.example/collect' }),
	).rejects.toThrow("is not Slack's");
});
