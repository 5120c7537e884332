import { randomBytes } from 'node:crypto';
import { startSlackApp } from '../../slack-app/app';
import { freePort, localConfig } from '../../slack-app/local';
import { content, Stack } from './harness';

/**
 * The organization's webhook secret was rotated after the app read it: the app reads it again on
 * the first mismatch (through the shared verifier, as the n8n trigger does) and keeps posting
 * results, without a restart.
 */
it('keeps accepting job webhooks after the organization secret was rotated', async () => {
	const stack = await Stack.start({ app: false, emulator: { jobDurationMs: 300 } });
	const port = await freePort();
	const config = localConfig({
		service: stack.emulator,
		slack: { standin: stack.standin, ...stack.credentials },
		port,
		webhooks: true,
		stateFile: stack.stateFile,
		env: { SLACK_POLL_INTERVAL_MS: '600000' },
	});
	const rotatedAway = randomBytes(32).toString('base64');
	const app = await startSlackApp({
		config: { ...config, service: { ...config.service, webhookSecret: rotatedAway } },
		logger: stack.logger,
	});
	try {
		stack.standin.setAppUrl(app.eventsUrl ?? '');
		const channel = 'C0ROTATE';
		for (const n of [1, 2]) {
			await stack.command(`transcribe https://files.example/rotated-${n}.mp3`, 'U0ROTATE', channel);
			const parent = await stack.waitForParent(n, channel);
			await stack.waitForParentText(parent.ts, /Succeeded in/, 15_000, channel);
			await stack.standin.waitFor(
				() => stack.replies(parent.ts, channel).length === 1,
				10_000,
				'the result',
			);
			expect(content(stack.replies(parent.ts, channel)[0])).toMatch(/Transcript/);
		}
		await stack.emulator.deliveriesSettled();
		const toApp = stack.emulator.deliveries.filter(
			(delivery) => delivery.url === app.localWebhookUrl,
		);
		// At least each job's completion reached the app, so "every delivery was accepted" means something.
		expect(toApp.length).toBeGreaterThanOrEqual(2);
		expect(toApp.every((delivery) => delivery.ok)).toBe(true);
		// The rotation costs one read of the secret, however many deliveries follow.
		expect(stack.serviceCalls('GET', /webhook-secret-key/)).toBe(1);
	} finally {
		await app.idle();
		await app.stop();
		await stack.close();
	}
}, 60_000);
