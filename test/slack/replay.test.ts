import { slackSignature } from '../../slack-standin';
import { CHANNEL, Stack, USER } from './harness';

/**
 * A signed Slack request acts once: the same body, timestamp and signature sent again within
 * Slack's 5-minute window (by someone who captured it) is answered 200 and does nothing.
 */
describe('a replayed signed Slack request', () => {
	let stack: Stack;
	beforeAll(async () => {
		stack = await Stack.start();
	});
	afterAll(() => stack.close());

	/** Sends the exact same signed request `times` times; returns the statuses. */
	async function sendSame(body: string, times: number): Promise<number[]> {
		const timestamp = Math.floor(Date.now() / 1000);
		const headers = {
			'content-type': 'application/x-www-form-urlencoded',
			'x-slack-request-timestamp': String(timestamp),
			'x-slack-signature': slackSignature(stack.credentials.signingSecret, timestamp, body),
		};
		const statuses: number[] = [];
		for (let n = 0; n < times; n++)
			statuses.push(
				(await fetch(stack.app.eventsUrl ?? '', { method: 'POST', headers, body })).status,
			);
		return statuses;
	}

	it('starts one image generation for a command sent three times', async () => {
		const channel = 'C0REPLAY';
		const body = stack.standin.app.slashCommandBody({
			user: USER,
			channel,
			text: 'image a lighthouse',
		});
		expect(await sendSame(body, 3)).toEqual([200, 200, 200]);
		await stack.waitForParent(1, channel);
		// Each command's work is queued before its 200 is sent, so idle() covers all three.
		await stack.app.idle();
		expect(stack.parents(channel)).toHaveLength(1);
		expect(stack.serviceCalls('POST', /^\/workloads\/image\//)).toBe(1);
	});

	it('still runs the same command typed again (a new timestamp and signature)', async () => {
		const before = stack.parents(CHANNEL).length;
		await stack.command('help');
		await stack.command('transcribe https://files.example/twice.mp3');
		await stack.command('transcribe https://files.example/twice.mp3');
		await stack.standin.waitFor(
			() => stack.parents(CHANNEL).length === before + 2,
			10_000,
			'two parents',
		);
	});
});
