import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { TRANSCRIPTION_ENDPOINT } from '../../shared/schemas';
import { CHROMIUM, describeWithChromium } from '../support/chromium';
import { Stack } from './harness';
import { wavBytes } from '../support/media-server';

/**
 * A person on the stand-in's page attaches a recording to a message, as Slack's composer does, and
 * runs "Transcribe with GPU Cloud" from the message's menu: the transcription appears in the file's
 * thread. The app has a public address here (webhooks on), so it serves the file to the emulator.
 */

describeWithChromium('a file attached on the stand-in page, transcribed', () => {
	let stack: Stack;
	let browser: Browser;

	beforeAll(async () => {
		const { chromium } = await import('playwright-core');
		stack = await Stack.start({ webhooks: true });
		browser = await chromium.launch({
			executablePath: CHROMIUM,
			args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
		});
	});

	afterAll(async () => {
		await browser?.close();
		await stack?.close();
	});

	it('attaches a WAV to a message and transcribes it into its thread with the message shortcut', async () => {
		const page = await browser.newPage();
		const problems: string[] = [];
		page.on('console', (message) => {
			if (message.type() === 'error') problems.push(`console: ${message.text()}`);
		});
		page.on('response', (response) => {
			if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
		});
		await page.goto(stack.standin.pageUrl);
		const folder = await mkdtemp(join(tmpdir(), 'gpu-page-file-'));
		const path = join(folder, 'standup.wav');
		await writeFile(path, wavBytes(2));
		await page.fill('#composer', 'the standup recording');
		await page.setInputFiles('#attach-file', path);
		const message = page.locator('#feed > .message').filter({ hasText: 'the standup recording' });
		await message.getByText('standup.wav').waitFor({ timeout: 10_000 });
		await message.getByRole('button', { name: 'More actions' }).click();
		await page.getByRole('menuitem', { name: 'Transcribe with GPU Cloud' }).click();
		await message.getByRole('button', { name: /^\d+ repl(y|ies)$/ }).click({ timeout: 15_000 });
		await page.locator('#pane').getByText('Succeeded in').waitFor({ timeout: 20_000 });
		const job = stack.emulator
			.jobsOf(stack.emulator.organization)
			.find((candidate) => candidate.inference_endpoint_name === TRANSCRIPTION_ENDPOINT);
		expect(job?.status).toBe('succeeded');
		expect((job?.output as { duration_in_seconds?: number }).duration_in_seconds).toBeCloseTo(2, 1);
		expect(problems).toEqual([]);
		await page.close();
	});
});
