import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { CHROMIUM, describeWithChromium } from '../support/chromium';
import { Stack } from './harness';

const SCREENSHOTS =
	process.env.UPDATE_SCREENSHOTS === '1'
		? join(__dirname, '..', '..', 'docs', 'images')
		: mkdtempSync(join(tmpdir(), 'gpu-slack-screens-'));

/**
 * What a person sees on the stand-in's page while a chat model starts from zero: in the answer's
 * thread, the task "Starting the model" in progress, then complete, with the answer below it.
 */

describeWithChromium('a chat answer while its model starts, on the stand-in page', () => {
	let stack: Stack;
	let browser: Browser;

	beforeAll(async () => {
		const { chromium } = await import('playwright-core');
		stack = await Stack.start({ nativeStreaming: true, emulator: { chatColdStartMs: 4000 } });
		browser = await chromium.launch({
			executablePath: CHROMIUM,
			args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
		});
	});

	afterAll(async () => {
		await browser?.close();
		await stack?.close();
	});

	it('shows the task in progress, then complete above the text', async () => {
		const page = await browser.newPage();
		const problems: string[] = [];
		page.on('console', (message) => {
			if (message.type() === 'error') problems.push(`console: ${message.text()}`);
		});
		await page.goto(stack.standin.pageUrl);
		await page.fill('#composer', '/gpu chat What is an interruptible GPU node?');
		await page.press('#composer', 'Enter');
		const parent = page.locator('#feed > .message').filter({ hasText: 'asked: What is an' });
		await parent.getByRole('button', { name: /^\d+ repl(y|ies)$/ }).click({ timeout: 10_000 });
		const task = page
			.locator('#pane')
			.getByRole('listitem')
			.filter({ hasText: 'Starting the model' });
		await task.and(page.locator('[data-status="in_progress"]')).waitFor({ timeout: 10_000 });
		await page.screenshot({ path: join(SCREENSHOTS, 'slack-stream-task.png') });
		await task.and(page.locator('[data-status="complete"]')).waitFor({ timeout: 15_000 });
		await parent.getByText('Succeeded in').waitFor({ timeout: 15_000 });
		const answer = page.locator('#pane .markdown').first();
		expect((await answer.textContent())?.length).toBeGreaterThan(0);
		expect(problems).toEqual([]);
		await page.close();
	});
});
