import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import {
	describeWithChromium,
	launchChromium,
	screenshotsFolder,
	watchedPage,
} from '../support/chromium';
import { wavBytes } from '../support/media-server';
import { Stack } from './harness';

/**
 * A person on the stand-in's page runs the app's Workflow Builder steps as a workflow would: picks
 * a step, fills its typed inputs (a file shared in the channel for "Transcribe a file"), runs it, and
 * sees the step's outputs when the app completes it, or the error when the app fails it. Webhooks
 * are on so the app can serve the shared file to the emulator.
 */

describeWithChromium('Workflow Builder steps run from the stand-in page', () => {
	let stack: Stack;
	let browser: Browser;
	let page: Page;
	let problems: string[];

	beforeAll(async () => {
		stack = await Stack.start({ webhooks: true });
		browser = await launchChromium();
		({ page, problems } = await watchedPage(browser, stack.standin.pageUrl));
	});

	afterAll(async () => {
		await browser?.close();
		await stack?.close();
	});

	/** The newest run's card, once it has left `running`. */
	async function finishedRun(title: string) {
		const run = page.getByRole('article', { name: new RegExp(`^${title} `) }).first();
		await run.and(page.locator('[data-state="completed"], [data-state="failed"]')).waitFor({
			timeout: 30_000,
		});
		return run;
	}

	it('asks a model and shows the answer the step completed with', async () => {
		await page.getByRole('button', { name: 'Workflow steps' }).click();
		await page.getByLabel('Step', { exact: true }).selectOption({ label: 'Ask a model' });
		await page.getByLabel('Question', { exact: true }).fill('What is an interruptible GPU node?');
		await page.getByRole('button', { name: 'Run step' }).click();
		const run = await finishedRun('Ask a model');
		expect(await run.getAttribute('data-state')).toBe('completed');
		await run.getByText('What is an interruptible GPU node?').waitFor();
		expect(await run.locator('dt').allTextContents()).toEqual(['Answer']);
	});

	it('transcribes a file attached in the channel, picked as the step input', async () => {
		const folder = await mkdtemp(join(tmpdir(), 'gpu-step-file-'));
		const path = join(folder, 'meeting.wav');
		await writeFile(path, wavBytes(2));
		await page.getByRole('button', { name: '# general' }).click();
		await page.fill('#composer', 'the meeting');
		await page.setInputFiles('#attach-file', path);
		await page.locator('#feed > .message').getByText('meeting.wav').waitFor({ timeout: 10_000 });
		await page.getByRole('button', { name: 'Workflow steps' }).click();
		await page.getByLabel('Step', { exact: true }).selectOption({ label: 'Transcribe a file' });
		await page.getByLabel('File', { exact: true }).selectOption({ label: 'meeting.wav' });
		await page.getByRole('button', { name: 'Run step' }).click();
		const run = await finishedRun('Transcribe a file');
		expect(await run.getAttribute('data-state')).toBe('completed');
		expect(await run.locator('dt').allTextContents()).toEqual(
			expect.arrayContaining(['Job ID', 'Status', 'Transcript']),
		);
		await run.locator('dd').getByText('succeeded', { exact: true }).waitFor();
		await page.setViewportSize({ width: 1280, height: 1040 });
		await page.screenshot({ path: join(screenshotsFolder(), 'slack-workflow-step.png') });
	});

	it("shows the app's error when the step fails, and refuses a run missing a required input", async () => {
		await page.getByLabel('Step', { exact: true }).selectOption({ label: 'Run a GPU job' });
		await page.getByLabel('Inference endpoint', { exact: true }).fill('echo');
		await page.getByRole('button', { name: 'Run step' }).click();
		await page.getByRole('alert').getByText('Input (JSON) is required.').waitFor();
		await page.getByLabel('Input (JSON)', { exact: true }).fill('not json');
		await page.getByRole('button', { name: 'Run step' }).click();
		const run = await finishedRun('Run a GPU job');
		expect(await run.getAttribute('data-state')).toBe('failed');
		await run.getByText(/The step's Input must be JSON/).waitFor();
		expect(problems).toEqual([]);
	});
});
