import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import {
	describeWithChromium,
	launchChromium,
	screenshotsFolder,
	watchedPage,
} from '../support/chromium';
import { Stack } from './harness';

/**
 * What a person sees on the stand-in's page while a chat model starts from zero: in the answer's
 * thread, the task "Starting the model" in progress, then complete, with the answer below it.
 */

describeWithChromium('a chat answer while its model starts, on the stand-in page', () => {
	let stack: Stack;
	let browser: Browser;

	beforeAll(async () => {
		stack = await Stack.start({ nativeStreaming: true, emulator: { chatColdStartMs: 4000 } });
		browser = await launchChromium();
	});

	afterAll(async () => {
		await browser?.close();
		await stack?.close();
	});

	it('shows the task in progress, then complete above the text', async () => {
		const { page, problems } = await watchedPage(browser, stack.standin.pageUrl);
		await page.fill('#composer', '/gpu chat What is an interruptible GPU node?');
		await page.press('#composer', 'Enter');
		const parent = page.locator('#feed > .message').filter({ hasText: 'asked: What is an' });
		await parent.getByRole('button', { name: /^\d+ repl(y|ies)$/ }).click({ timeout: 10_000 });
		const task = page
			.locator('#pane')
			.getByRole('listitem')
			.filter({ hasText: 'Starting the model' });
		await task.and(page.locator('[data-status="in_progress"]')).waitFor({ timeout: 10_000 });
		await page.screenshot({ path: join(screenshotsFolder(), 'slack-stream-task.png') });
		await task.and(page.locator('[data-status="complete"]')).waitFor({ timeout: 15_000 });
		await parent.getByText('Succeeded in').waitFor({ timeout: 15_000 });
		const answer = page.locator('#pane .markdown').first();
		expect((await answer.textContent())?.length).toBeGreaterThan(0);
		expect(problems).toEqual([]);
		await page.close();
	});
});
