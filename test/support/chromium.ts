import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';

/**
 * Debian's Chromium for tests that drive a real browser: the path, or why it cannot run. Without it a
 * developer's run skips those tests; CI (`CI=true`), which installs it, fails instead.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

function playwrightInstalled(): boolean {
	try {
		require.resolve('playwright-core');
		return true;
	} catch {
		return false;
	}
}

export const chromiumMissing: string | undefined = !existsSync(CHROMIUM)
	? `${CHROMIUM} is absent (apt-get install chromium)`
	: !playwrightInstalled()
		? 'playwright-core is not installed (npm install)'
		: undefined;

const inCi = process.env.CI === 'true' || process.env.CI === '1';

/** `test` when Chromium is there; otherwise a skip, or in CI a failing test saying what is missing. */
export function testWithChromium(name: string, run: () => Promise<void>, timeoutMs?: number): void {
	if (chromiumMissing === undefined) return test(name, run, timeoutMs);
	if (inCi)
		return test(name, () =>
			Promise.reject(new Error(`CI must run this browser test, but ${chromiumMissing}.`)),
		);
	test.skip(`${name} (${chromiumMissing})`, run);
}

/** `describe` when Chromium is there; otherwise a skip, or in CI a failing test saying what is missing. */
export function describeWithChromium(name: string, define: () => void): void {
	if (chromiumMissing === undefined) return describe(name, define);
	if (inCi)
		return test(name, () =>
			Promise.reject(new Error(`CI must run these browser tests, but ${chromiumMissing}.`)),
		);
	describe.skip(`${name} (${chromiumMissing})`, define);
}

/**
 * Where the browser tests put their screenshots of the local Slack page. `UPDATE_SCREENSHOTS=1`
 * writes them into docs/images (shown in docs/slack-app.md); otherwise into a temporary folder
 * (made on first use), so a test run leaves the checkout clean.
 */
let screenshots: string | undefined;
export function screenshotsFolder(): string {
	screenshots ??=
		process.env.UPDATE_SCREENSHOTS === '1'
			? join(__dirname, '..', '..', 'docs', 'images')
			: mkdtempSync(join(tmpdir(), 'gpu-slack-screens-'));
	return screenshots;
}

/** Debian's Chromium, headless, as every browser test drives it. */
export async function launchChromium(): Promise<Browser> {
	const { chromium } = await import('playwright-core');
	return chromium.launch({
		executablePath: CHROMIUM,
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
	});
}

/**
 * A new page at `url` that records what must fail a test in `problems`: console errors, answers of
 * 400 or more (a missing favicon included) and failed requests, but not those aborted by leaving or
 * reloading the page (its event stream).
 */
export async function watchedPage(
	browser: Browser,
	url: string,
	viewport?: { width: number; height: number },
): Promise<{ page: Page; problems: string[] }> {
	const page = await browser.newPage();
	const problems: string[] = [];
	page.on('console', (message) => {
		if (message.type() === 'error') problems.push(`console: ${message.text()}`);
	});
	page.on('response', (response) => {
		if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
	});
	page.on('requestfailed', (request) => {
		if (request.failure()?.errorText !== 'net::ERR_ABORTED')
			problems.push(`failed ${request.url()}`);
	});
	if (viewport) await page.setViewportSize(viewport);
	await page.goto(url);
	return { page, problems };
}
