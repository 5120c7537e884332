import { slackSignature } from '../../slack-standin';
import { content, Stack } from './harness';

/** Forged requests, allow-lists, per-user limits, and secrets that never leak. */

describe('requests that are not from Slack', () => {
	let stack: Stack;
	beforeAll(async () => {
		stack = await Stack.start();
	});
	afterAll(() => stack.close());

	const cases: [
		string,
		(body: string) => { timestampSeconds?: number; signature?: string | null },
	][] = [
		['unsigned', () => ({ signature: null })],
		[
			'signed with the wrong secret',
			(body) => ({
				signature: slackSignature('not-the-secret', Math.floor(Date.now() / 1000), body),
			}),
		],
		[
			'stale (10 minutes old, correctly signed)',
			() => ({ timestampSeconds: Math.floor(Date.now() / 1000) - 600 }),
		],
		['tampered after signing', () => ({ signature: 'v0=' + '0'.repeat(64) })],
	];

	it.each(cases)('%s: 401, and nothing is posted or created', async (_name, forge) => {
		const channel = `C0FORGE${Math.floor(Math.random() * 1e6)}`;
		const before = stack.emulator.requests.length;
		const slackCallsBefore = stack.standin.api.calls.length;
		const body = stack.standin.app.slashCommandBody({
			user: 'U0EVE',
			channel,
			text: 'transcribe https://files.example/a.mp3',
		});
		const reply = await stack.standin.app.send(
			body,
			'application/x-www-form-urlencoded',
			forge(body),
		);
		expect(reply.status).toBe(401);
		await stack.app.idle();
		expect(stack.parents(channel)).toHaveLength(0);
		expect(stack.ephemeralTexts('U0EVE')).toHaveLength(0);
		expect(stack.emulator.requests.length).toBe(before);
		expect(stack.standin.api.calls.length).toBe(slackCallsBefore);
	});

	it('a correctly signed request is accepted (the control case)', async () => {
		const reply = await stack.command('help', 'U0EVE2', 'C0FORGEOK');
		expect(reply.status).toBe(200);
	});
});

describe('access control', () => {
	let stack: Stack;
	beforeAll(async () => {
		stack = await Stack.start({
			env: {
				SLACK_ALLOWED_USERS: 'U0ALLOWED,U0LIMITED',
				SLACK_ALLOWED_CHANNELS: 'C0ALLOWED',
				SLACK_MAX_JOBS_PER_USER: '1',
				SLACK_ACCESS_CONTACT: '<@U0ADMIN>',
			},
			emulator: { jobDurationMs: 4000 },
		});
	});
	afterAll(() => stack.close());

	it('refuses a user who is not on the allow-list, saying who to ask; nothing is created', async () => {
		const before = stack.serviceCalls('POST', /\/jobs$/);
		await stack.command('transcribe https://files.example/a.mp3', 'U0STRANGER', 'C0ALLOWED');
		const text = await stack.waitForEphemeral(/not on the list of people/, 'U0STRANGER');
		expect(text).toContain('ask <@U0ADMIN>');
		expect(stack.parents('C0ALLOWED')).toHaveLength(0);
		expect(stack.serviceCalls('POST', /\/jobs$/)).toBe(before);
	});

	it('refuses a channel that is not on the allow-list', async () => {
		await stack.command('image a fox', 'U0ALLOWED', 'C0ELSEWHERE');
		await stack.waitForEphemeral(/not enabled in this channel/, 'U0ALLOWED');
		expect(stack.parents('C0ELSEWHERE')).toHaveLength(0);
	});

	it('limits each user to their concurrent jobs and explains it', async () => {
		await stack.command('transcribe https://files.example/one.mp3', 'U0LIMITED', 'C0ALLOWED');
		const first = await stack.waitForParent(1, 'C0ALLOWED');
		await stack.waitForParentText(first.ts, /Job `/, 10_000, 'C0ALLOWED');
		const before = stack.serviceCalls('POST', /\/jobs$/);
		await stack.command('transcribe https://files.example/two.mp3', 'U0LIMITED', 'C0ALLOWED');
		await stack.waitForEphemeral(/already have 1 GPU job running \(the limit is 1\)/, 'U0LIMITED');
		expect(stack.serviceCalls('POST', /\/jobs$/)).toBe(before);
		// When the first job ends, the slot is free again.
		await stack.waitForParentText(first.ts, /Succeeded in/, 15_000, 'C0ALLOWED');
		await stack.command('transcribe https://files.example/three.mp3', 'U0LIMITED', 'C0ALLOWED');
		await stack.waitForParent(2, 'C0ALLOWED');
	});
});

describe('secrets', () => {
	it('never appear in any Slack message, file or log line', async () => {
		const stack = await Stack.start();
		try {
			await stack.command('transcribe https://files.example/a.mp3 --summary 10');
			await stack.command('job no-such-endpoint {}');
			await stack.command('chat hello', 'U0CHATTER');
			const parent = await stack.waitForParent(1);
			await stack.waitForParentText(parent.ts, /Succeeded in/);
			await stack.app.idle();
			const everything = [
				...stack.standin.workspace.messages.map(content),
				...stack.standin.workspace.ephemerals.map(
					(message) => `${message.text} ${JSON.stringify(message.blocks)}`,
				),
				...[...stack.standin.workspace.files.values()].map(
					(file) => file.content?.toString('utf8') ?? '',
				),
				...stack.logger.lines,
			].join('\n');
			expect(stack.logger.lines.length).toBeGreaterThan(0);
			for (const secret of stack.secrets()) expect(everything).not.toContain(secret);
		} finally {
			await stack.close();
		}
	});
});
