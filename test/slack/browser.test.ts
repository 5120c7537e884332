import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { JOB_FORM } from '../../slack-app/messages/modal';
import { FIELD_BLOCK_PREFIX } from '../../slack-app/messages/job-fields';
import { DIRECT_MESSAGE, LOCAL_USER } from '../../slack-standin';
import {
	describeWithChromium,
	launchChromium,
	screenshotsFolder,
	watchedPage,
} from '../support/chromium';
import { CHANNEL, Stack } from './harness';

/**
 * A person using the stand-in's page in headless Chromium: types `/gpu image a red fox` and sees
 * the image appear in the thread. Needs Debian's chromium (`apt-get install chromium`); without it
 * the suite is skipped on a developer's machine and fails in CI (`CI=true`), which installs it.
 */

describeWithChromium('the stand-in page in a browser', () => {
	let stack: Stack;
	let browser: Browser;

	beforeAll(async () => {
		stack = await Stack.start();
		browser = await launchChromium();
	});

	afterAll(async () => {
		await browser?.close();
		await stack?.close();
	});

	/** The page at the size of the screenshots in docs/slack-app.md, watched for problems. */
	const openPage = () => watchedPage(browser, stack.standin.pageUrl, { width: 1100, height: 900 });

	/** After a choice in the job form's endpoint picker: the form as the app rebuilt it, shown by the page. */
	async function formRebuiltFor(page: Page, endpoint: string) {
		await stack.standin.waitFor(
			() =>
				[...stack.standin.workspace.views.values()].some((open) =>
					String(open.view.private_metadata).includes(`"endpoint":"${endpoint}"`),
				),
			10_000,
			`the job form rebuilt for ${endpoint}`,
		);
		await page.waitForFunction(
			`Number(document.body.dataset.revision) >= ${stack.standin.workspace.revision}`,
		);
	}

	async function type(page: Page, text: string) {
		await page.fill('#composer', text);
		await page.press('#composer', 'Enter');
	}

	it('shows a generated image in the thread after typing /gpu image a red fox', async () => {
		const { page, problems } = await openPage();
		await type(page, '/gpu image a red fox');

		const parent = page.locator('#feed > .message').filter({ hasText: 'asked for an image' });
		await parent.waitFor({ timeout: 15_000 });
		await parent.getByText('Succeeded in').waitFor({ timeout: 15_000 });
		// The app is shown by its name, as in Slack.
		await expect(parent.locator('.meta b').first().textContent()).resolves.toBe('GPU Cloud');
		// As in Slack, the thread is collapsed to "N replies" and opens in a side pane.
		expect(await page.locator('#feed img.file-image').count()).toBe(0);
		await parent.getByRole('button', { name: /^\d+ repl(y|ies)$/ }).click();
		const pane = page.locator('#pane');
		await pane.locator('img.file-image').first().waitFor({ timeout: 15_000 });
		// Evaluated in the page (strings keep DOM types out of this Node-typed test).
		await page.waitForFunction(
			`(() => { const img = document.querySelector('#pane img.file-image'); return !!img && img.complete && img.naturalWidth > 0; })()`,
		);
		// The page's Regenerate button really works: a second image arrives in the same thread.
		await parent.getByRole('button', { name: 'Regenerate' }).click();
		await page.waitForFunction(
			`document.querySelectorAll('#pane img.file-image').length >= 2`,
			undefined,
			{ timeout: 15_000 },
		);
		await page.screenshot({ path: join(screenshotsFolder(), 'slack-thread.png') });
		expect(problems).toEqual([]);
		await page.close();
	});

	it('shows mistakes only to the person, like Slack, and forgets them on reload', async () => {
		const { page, problems } = await openPage();
		await type(page, '/gpu queue Bad_Name');
		await page
			.locator('.ephemeral')
			.filter({ hasText: 'must be 2-63 lower-case letters' })
			.waitFor({ timeout: 10_000 });
		expect(stack.ephemeralTexts(LOCAL_USER.id).join('\n')).toContain(
			'must be 2-63 lower-case letters',
		);
		await page.reload();
		// Rendered the state that still holds the ephemeral message (Slack's clients forget them).
		await page.waitForFunction(
			`Number(document.body.dataset.revision) >= ${stack.standin.workspace.revision}`,
		);
		expect(await page.locator('.ephemeral').count()).toBe(0);
		expect(problems).toEqual([]);
		await page.close();
	});

	it('job form: a failed submit keeps what was typed with the field error; a valid one closes it; Cancel closes it', async () => {
		const { page, problems } = await openPage();
		await type(page, '/gpu job');
		const modal = page.locator('#modal');
		const select = modal.locator('select');
		await select.locator('option[value="echo"]').waitFor({ state: 'attached', timeout: 10_000 });
		await select.selectOption('echo');
		await formRebuiltFor(page, 'echo');
		const input = modal.locator(`textarea[data-block-id="${JOB_FORM.input.block}"]`);
		await input.fill('{"prompt": ');
		await modal.getByRole('button', { name: 'Run job' }).click();
		await modal
			.locator('.field-error')
			.filter({ hasText: 'not valid JSON' })
			.waitFor({ timeout: 10_000 });
		// Slack keeps the typed values when the app answers with field errors.
		expect(await input.inputValue()).toBe('{"prompt": ');
		expect(await select.inputValue()).toBe('echo');

		await input.fill('{"prompt": "from the page"}');
		await modal.getByRole('button', { name: 'Run job' }).click();
		await page.locator('#modal-backdrop').waitFor({ state: 'hidden', timeout: 10_000 });
		await page
			.locator('#feed > .message')
			.filter({ hasText: 'ran a job on' })
			.getByText('Succeeded in')
			.waitFor({ timeout: 15_000 });

		// Opened again, the form starts afresh, and its Cancel closes it.
		await type(page, '/gpu job');
		await page.locator('#modal-backdrop').waitFor({ state: 'visible', timeout: 10_000 });
		expect(await page.locator('#modal .field-error').count()).toBe(0);
		await modal.getByRole('button', { name: 'Cancel' }).click();
		await page.locator('#modal-backdrop').waitFor({ state: 'hidden', timeout: 10_000 });
		expect(problems).toEqual([]);
		await page.close();
	});

	it("job form from the endpoint's schema: its fields appear as Slack's inputs, a wrong value is marked, the fields become the job's input", async () => {
		const { page, problems } = await openPage();
		await type(page, '/gpu job');
		const modal = page.locator('#modal');
		const endpoint = modal.locator(`select[data-block-id="${JOB_FORM.endpoint.block}"]`);
		await endpoint
			.locator('option[value="product-listing"]')
			.waitFor({ state: 'attached', timeout: 10_000 });
		await endpoint.selectOption('product-listing');
		await formRebuiltFor(page, 'product-listing');
		const control = (name: string) =>
			modal.locator(`[data-block-id="${FIELD_BLOCK_PREFIX}${name}"]`);
		await control('product_name').waitFor({ timeout: 10_000 });
		expect(await control('max_words').getAttribute('type')).toBe('number');
		expect(await control('max_words').getAttribute('step')).toBe('1');
		expect(await control('price').getAttribute('step')).toBe('any');
		expect(await control('image_url').getAttribute('type')).toBe('url');
		expect(await control('include_seo').isChecked()).toBe(true);
		expect(await control('tone').inputValue()).toBe('friendly');
		expect(await control('notes').evaluate((element) => element.tagName)).toBe('TEXTAREA');
		await control('product_name').fill('Trail shoe');
		await control('category').selectOption('sports');
		await control('max_words').fill('5');
		await page.screenshot({ path: join(screenshotsFolder(), 'slack-job-form-fields.png') });
		await modal.getByRole('button', { name: 'Run job' }).click();
		await modal
			.locator('.field-error')
			.filter({ hasText: 'This field must be at least 20.' })
			.waitFor({ timeout: 10_000 });
		expect(await control('product_name').inputValue()).toBe('Trail shoe');
		const jobs = () =>
			stack.emulator
				.jobsOf(stack.emulator.organization)
				.filter((job) => job.inference_endpoint_name === 'product-listing');
		const before = jobs().length;
		await control('max_words').fill('120');
		await control('include_seo').uncheck();
		await modal.getByRole('button', { name: 'Run job' }).click();
		await page.locator('#modal-backdrop').waitFor({ state: 'hidden', timeout: 10_000 });
		const job = await stack.standin.waitFor(() => jobs()[before], 10_000, 'the job');
		expect(job.input).toEqual({
			product_name: 'Trail shoe',
			category: 'sports',
			tone: 'friendly',
			max_words: 120,
			include_seo: false,
			language: 'en',
			temperature: 0.7,
		});
		expect(problems).toEqual([]);
		await page.close();
	});

	it('a running job: the time ticks between edits, and Cancel asks "Cancel job" / "Keep running"', async () => {
		const { page, problems } = await openPage();
		await type(page, '/gpu job batch-echo {"n": 1}');
		const parent = page.locator('#feed > .message').filter({ hasText: 'ran a job on' }).last();
		const since = parent.locator('time.slack-date');
		await since.waitFor({ timeout: 10_000 });
		const first = await since.textContent();
		expect(first).toMatch(/^\d+ seconds? ago$/);
		// The app edits the message every 15 s; the reader's clock moves it on meanwhile.
		await page.waitForFunction(
			`document.querySelector('#feed time.slack-date')?.textContent !== ${JSON.stringify(first)}`,
			undefined,
			{ timeout: 5_000 },
		);

		await parent.getByRole('button', { name: 'Cancel' }).click();
		const dialog = page.locator('#confirm');
		await dialog.getByRole('button', { name: 'Keep running' }).click();
		await page.locator('#confirm-backdrop').waitFor({ state: 'hidden' });
		await parent.getByRole('button', { name: 'Cancel' }).click();
		await dialog.getByRole('button', { name: 'Cancel job' }).click();
		await parent.getByText('Cancelled after').waitFor({ timeout: 15_000 });
		expect(stack.serviceCalls('DELETE', /\/jobs\/[^/]+$/)).toBe(1);
		expect(problems).toEqual([]);
		await page.close();
	});

	it('App Home: recent requests with status, Cancel and thread links, the slots in use, and the settings for admins', async () => {
		const { page, problems } = await openPage();
		await type(page, '/gpu job batch-echo {"from": "home"}');
		await page
			.locator('#feed > .message')
			.filter({ hasText: 'ran a job on batch-echo' })
			.last()
			.waitFor({ timeout: 10_000 });
		await page.getByRole('button', { name: 'GPU Cloud · Home' }).click();
		const home = page.locator('#home');
		const job = home.locator('.section').filter({ hasText: 'ran a job on' }).first();
		await job.waitFor({ timeout: 10_000 });
		await home.getByText(/You have 1 of \d+ GPU job slots in use/).waitFor({ timeout: 10_000 });
		// The local person is a workspace admin: the settings show.
		await home.getByText('Linked organization:').waitFor();
		await home
			.getByText(/Running|Pending/)
			.first()
			.waitFor();
		await page.screenshot({ path: join(screenshotsFolder(), 'slack-home.png') });

		// Cancel from Home: asked like in the channel, and Home follows the job to its end.
		const cancelsBefore = stack.serviceCalls('DELETE', /\/jobs\/[^/]+$/);
		const cancel = home.getByRole('button', { name: 'Cancel' });
		// Home is published again once the job exists: a request still Pending has no job to cancel.
		await cancel.first().waitFor({ timeout: 10_000 });
		expect(await cancel.count()).toBe(1);
		await cancel.click();
		await page.locator('#confirm').getByRole('button', { name: 'Cancel job' }).click();
		await cancel.waitFor({ state: 'detached', timeout: 15_000 });
		await home.getByText(/You have 0 of \d+ GPU job slots in use/).waitFor({ timeout: 10_000 });
		expect(
			await home.locator('.context').filter({ hasText: 'Cancelled after' }).count(),
		).toBeGreaterThanOrEqual(1);
		expect(stack.serviceCalls('DELETE', /\/jobs\/[^/]+$/)).toBe(cancelsBefore + 1);

		// "Open thread" is a permalink that opens the thread in the side pane.
		const link = await home.getByRole('link', { name: 'Open thread' }).first().getAttribute('href');
		expect(link).toMatch(/\?thread=/);
		await page.goto(link ?? '');
		await page.locator('#pane').getByText('cancelled by').first().waitFor({ timeout: 10_000 });
		expect(problems).toEqual([]);
		await page.close();
	});

	it('global shortcut "Run a GPU job": the job form asks where to post, and the job runs there', async () => {
		const { page, problems } = await openPage();
		await page.getByRole('button', { name: 'Shortcuts' }).click();
		await page.getByRole('menuitem', { name: 'Run a GPU job' }).click();
		const modal = page.locator('#modal');
		const where = modal.locator(`select[data-block-id="${JOB_FORM.channel.block}"]`);
		await where.waitFor({ timeout: 10_000 });
		// Slack preselects the conversation the person is looking at.
		expect(await where.inputValue()).toBe(CHANNEL);
		await modal
			.locator(`select[data-block-id="${JOB_FORM.endpoint.block}"] option[value="echo"]`)
			.waitFor({ state: 'attached', timeout: 10_000 });
		await modal.locator(`select[data-block-id="${JOB_FORM.endpoint.block}"]`).selectOption('echo');
		await formRebuiltFor(page, 'echo');
		await modal
			.locator(`textarea[data-block-id="${JOB_FORM.input.block}"]`)
			.fill('{"from": "the shortcut"}');
		await page.screenshot({ path: join(screenshotsFolder(), 'slack-shortcut-job-form.png') });
		const before = stack.parents().length;
		await modal.getByRole('button', { name: 'Run job' }).click();
		await page.locator('#modal-backdrop').waitFor({ state: 'hidden', timeout: 10_000 });
		const parent = await stack.waitForParent(before + 1);
		expect(parent.text).toContain('ran a job on `echo`');
		await stack.waitForParentText(parent.ts, /Succeeded in/);
		expect(problems).toEqual([]);
		await page.close();
	});

	it('message shortcut "Ask GPU Cloud about this message": a chat thread with the message as its context', async () => {
		const { page, problems } = await openPage();
		await type(page, 'Our GPU bill doubled last week & nobody knows why');
		const message = page.locator('#feed > .message').filter({ hasText: 'Our GPU bill doubled' });
		await message.waitFor({ timeout: 10_000 });
		await message.getByRole('button', { name: 'More actions' }).click();
		await page.getByRole('menuitem', { name: 'Ask GPU Cloud about this message' }).click();
		const modal = page.locator('#modal');
		await modal
			.getByText('Our GPU bill doubled last week & nobody knows why')
			.waitFor({ timeout: 10_000 });
		await modal.locator('textarea').fill('What could cause this?');
		await page.screenshot({ path: join(screenshotsFolder(), 'slack-shortcut-ask.png') });
		const chatsBefore = stack.serviceCalls('POST', /\/v1\/chat\/completions$/);
		await modal.getByRole('button', { name: 'Ask' }).click();
		await page.locator('#modal-backdrop').waitFor({ state: 'hidden', timeout: 10_000 });
		const parent = page
			.locator('#feed > .message')
			.filter({ hasText: 'asked: About this Slack message' });
		await parent.getByText('Succeeded in').waitFor({ timeout: 15_000 });
		await parent.getByRole('button', { name: /^\d+ repl(y|ies)$/ }).click();
		await page.locator('#pane .markdown').first().waitFor({ timeout: 10_000 });
		// The model was given the message and the question, as typed (not Slack's escapes).
		const sent = JSON.parse(
			stack.emulator.requests
				.filter((request) => /\/v1\/chat\/completions$/.test(request.path))
				.at(-1)?.body ?? '{}',
		) as { messages?: { content: string }[] };
		expect(stack.serviceCalls('POST', /\/v1\/chat\/completions$/)).toBe(chatsBefore + 1);
		expect(sent.messages?.[0].content).toContain(
			'Our GPU bill doubled last week & nobody knows why',
		);
		expect(sent.messages?.[0].content).toContain('What could cause this?');
		expect(problems).toEqual([]);
		await page.close();
	});

	it('agent messaging: each message to the app is a session in its own thread; a reply there continues it', async () => {
		const { page, problems } = await openPage();
		await page.getByRole('button', { name: 'GPU Cloud · Messages' }).click();
		await type(page, 'What is an interruptible GPU?');
		const question = page
			.locator('#feed > .message')
			.filter({ hasText: 'What is an interruptible GPU?' });
		// The session, named after the question, goes back to active once the answer is in.
		await question.locator('.session[data-session-status="active"]').waitFor({ timeout: 15_000 });
		expect(stack.parents(DIRECT_MESSAGE.id)).toHaveLength(0);
		await question.getByRole('button', { name: /^\d+ repl(y|ies)$/ }).click();
		const pane = page.locator('#pane');
		await pane.locator('.markdown').first().waitFor({ timeout: 10_000 });
		await pane
			.getByRole('textbox', { name: 'Reply in thread' })
			.fill('And how do I keep my work safe on one?');
		await pane.getByRole('textbox', { name: 'Reply in thread' }).press('Enter');
		await page.waitForFunction(
			`document.querySelectorAll('#pane .markdown').length >= 2 && !document.querySelector('#pane .streaming')`,
			undefined,
			{ timeout: 15_000 },
		);
		await page.screenshot({ path: join(screenshotsFolder(), 'slack-direct-message.png') });
		expect(problems).toEqual([]);
		await page.close();
	});

	it('agent messaging: suggested prompts atop the Messages tab, a session titled after the question, an answer with feedback buttons', async () => {
		const { page, problems } = await openPage();
		await page.getByRole('button', { name: 'GPU Cloud · Messages' }).click();
		// A new app has no assistant container, so no button of its own for a new chat.
		expect(await page.getByRole('button', { name: '✨ New assistant chat' }).isVisible()).toBe(
			false,
		);
		const prompt = page
			.locator('#messages-tab-prompts')
			.getByRole('button', { name: 'Explain GPU jobs' });
		await prompt.waitFor({ timeout: 10_000 });
		await prompt.click();
		const question = page
			.locator('#feed > .message')
			.filter({ hasText: 'How do GPU jobs, queues and interruptible nodes work here?' });
		await question
			.locator('.session[data-session-status="active"]')
			.getByText('How do GPU jobs, queues and interruptible nodes work here?')
			.waitFor({ timeout: 15_000 });
		await question.getByRole('button', { name: /^\d+ repl(y|ies)$/ }).click();
		const pane = page.locator('#pane');
		const good = pane.getByRole('button', { name: 'Good answer' });
		await good.waitFor({ timeout: 15_000 });
		expect(stack.standin.api.callsOf('chat.startStream').at(-1)?.params.channel).toBe(
			DIRECT_MESSAGE.id,
		);
		await page.screenshot({ path: join(screenshotsFolder(), 'slack-assistant.png') });
		await good.click();
		await pane.getByText('Thanks, glad it helped.').waitFor({ timeout: 10_000 });
		expect(
			stack.logger.lines.some((line) => /Chat feedback: good on D0GPUCLOUD\/\d+\.\d+/.test(line)),
		).toBe(true);
		expect(problems).toEqual([]);
		await page.close();
	});

	it("Slack's stop button on a running job's thread cancels the job", async () => {
		const { page, problems } = await openPage();
		const cancelsBefore = stack.serviceCalls('DELETE', /\/jobs\/[^/]+$/);
		await type(page, `/gpu job ${stack.emulator.slowEndpoint} {"stop": "me"}`);
		const parent = page
			.locator('#feed > .message')
			.filter({ hasText: 'GPU job on batch-echo' })
			.last();
		const stop = parent.getByRole('button', { name: 'Stop' });
		await stop.waitFor({ timeout: 15_000 });
		await page.screenshot({ path: join(screenshotsFolder(), 'slack-stop-button.png') });
		await stop.click();
		await parent.getByText('Cancelled').first().waitFor({ timeout: 15_000 });
		await parent.locator('.session[data-session-status="closed"]').waitFor({ timeout: 10_000 });
		expect(stack.serviceCalls('DELETE', /\/jobs\/[^/]+$/)).toBe(cancelsBefore + 1);
		expect(problems).toEqual([]);
		await page.close();
	});
});
