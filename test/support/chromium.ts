import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
