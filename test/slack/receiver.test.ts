import { CHANNEL, Stack, USER } from './harness';

/**
 * The HTTP receiver: requests whose ack carries nothing are answered on arrival, before Bolt runs
 * any listener; modal submissions keep the ack their listener gives; Slack's housekeeping requests.
 */
describe('the ack-first receiver', () => {
	let stack: Stack;
	beforeAll(async () => {
		stack = await Stack.start();
	});
	afterAll(() => stack.close());

	it('acknowledges a slash command while its listener is still running', async () => {
		let release!: () => void;
		const held = new Promise<void>((resolve) => (release = resolve));
		let started!: () => void;
		const listenerStarted = new Promise<void>((resolve) => (started = resolve));
		stack.app.app.command('/held', async ({ ack }) => {
			started();
			await held;
			await ack();
		});
		const reply = await stack.standin.app.slashCommand({
			user: USER,
			channel: CHANNEL,
			text: 'x',
			command: '/held',
		});
		expect(reply).toEqual({ status: 200, body: '' });
		await listenerStarted;
		release();
		await stack.app.idle();
	});

	it('says in the log, not to Slack, that a reply passed to ack() of such a request is not shown', async () => {
		stack.app.app.command('/replies-in-ack', async ({ ack }) => ack('a reply Slack never sees'));
		const reply = await stack.standin.app.slashCommand({
			user: USER,
			channel: CHANNEL,
			text: 'x',
			command: '/replies-in-ack',
		});
		expect(reply).toEqual({ status: 200, body: '' });
		await stack.app.idle();
		expect(stack.logger.lines.join('\n')).toMatch(
			/\/replies-in-ack command was acknowledged on arrival; a reply passed to ack\(\) is not shown/,
		);
	});

	it("answers Slack's URL verification challenge and SSL check", async () => {
		const challenge = await stack.standin.app.send(
			JSON.stringify({ type: 'url_verification', token: 'x', challenge: 'c-123' }),
			'application/json',
		);
		expect(challenge.status).toBe(200);
		expect(JSON.parse(challenge.body)).toEqual({ challenge: 'c-123' });
		const ssl = await stack.standin.app.send(
			'ssl_check=1&token=x',
			'application/x-www-form-urlencoded',
			{ signature: null },
		);
		expect(ssl.status).toBe(200);
	});

	it('answers other methods and paths with 404, and a malformed body with 400', async () => {
		const eventsUrl = stack.app.eventsUrl ?? '';
		expect((await fetch(eventsUrl)).status).toBe(404);
		expect(
			(
				await fetch(eventsUrl.replace('/slack/events', '/elsewhere'), {
					method: 'POST',
					body: '{}',
				})
			).status,
		).toBe(404);
		const malformed = await stack.standin.app.send('{"type": ', 'application/json');
		expect(malformed.status).toBe(400);
	});
});
