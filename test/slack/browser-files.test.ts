import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { TRANSCRIPTION_ENDPOINT } from '../../shared/schemas';
import { FILE_BLOCK_PREFIX } from '../../slack-app/messages/job-fields';
import { JOB_FORM } from '../../slack-app/messages/modal';
import {
	describeWithChromium,
	launchChromium,
	screenshotsFolder,
	watchedPage,
} from '../support/chromium';
import { Stack } from './harness';
import { wavBytes } from '../support/media-server';

/**
 * A person on the stand-in's page attaches a recording to a message, as Slack's composer does, and
 * runs "Transcribe with GPU Cloud" from the message's menu: the transcription appears in the file's
 * thread; or attaches it in the job form's file input. The app has a public address here (webhooks
 * on), so it serves the file to the emulator.
 */

describeWithChromium('a file attached on the stand-in page, transcribed', () => {
	let stack: Stack;
	let browser: Browser;

	beforeAll(async () => {
		stack = await Stack.start({ webhooks: true });
		browser = await launchChromium();
	});

	afterAll(async () => {
		await browser?.close();
		await stack?.close();
	});

	it('attaches a WAV to a message and transcribes it into its thread with the message shortcut', async () => {
		const { page, problems } = await watchedPage(browser, stack.standin.pageUrl);
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

	it("attaches a WAV in the job form's file input and runs transcribe on it", async () => {
		const { page, problems } = await watchedPage(browser, stack.standin.pageUrl);
		const folder = await mkdtemp(join(tmpdir(), 'gpu-page-form-file-'));
		const path = join(folder, 'weekly.wav');
		await writeFile(path, wavBytes(3));
		await page.fill('#composer', '/gpu job');
		await page.press('#composer', 'Enter');
		const modal = page.locator('#modal');
		const endpoint = modal.locator(`select[data-block-id="${JOB_FORM.endpoint.block}"]`);
		await endpoint
			.locator(`option[value="${TRANSCRIPTION_ENDPOINT}"]`)
			.waitFor({ state: 'attached', timeout: 10_000 });
		await endpoint.selectOption(TRANSCRIPTION_ENDPOINT);
		const fileInput = modal.locator(`input[type="file"][data-block-id="${FILE_BLOCK_PREFIX}url"]`);
		await fileInput.waitFor({ state: 'attached', timeout: 10_000 });
		// The input offers the kinds the field reads, as Slack's file picker does.
		expect(await fileInput.getAttribute('accept')).toContain('.wav');
		const uploaded = stack.standin.workspace.files.size;
		await fileInput.setInputFiles(path);
		// Slack's client uploads the chosen file at once; the submission carries it.
		await stack.standin.waitFor(
			() => stack.standin.workspace.files.size > uploaded,
			10_000,
			'the upload',
		);
		await page.setViewportSize({ width: 1100, height: 900 });
		await page.screenshot({ path: join(screenshotsFolder(), 'slack-job-form-file.png') });
		await modal.getByRole('button', { name: 'Run job' }).click();
		await page.locator('#modal-backdrop').waitFor({ state: 'hidden', timeout: 10_000 });
		const parent = page
			.locator('#feed > .message')
			.filter({ hasText: `ran a job on ${TRANSCRIPTION_ENDPOINT}` });
		await parent.getByText('Succeeded in').waitFor({ timeout: 20_000 });
		const job = stack.emulator
			.jobsOf(stack.emulator.organization)
			.filter((candidate) => candidate.inference_endpoint_name === TRANSCRIPTION_ENDPOINT)
			.at(-1);
		expect((job?.output as { duration_in_seconds?: number }).duration_in_seconds).toBeCloseTo(3, 1);
		expect(problems).toEqual([]);
		await page.close();
	});
});
