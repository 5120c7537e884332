import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { Stack } from './harness';

/**
 * A person using the stand-in's page in headless Chromium: types `/gpu image a red fox` and sees
 * the image appear in the thread. Needs Debian's chromium (`apt-get install chromium`); without it
 * the suite is skipped on a developer's machine and fails in CI (`CI=true`), which installs it.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

function playwrightInstalled(): boolean {
  try {
    require.resolve('playwright-core');
    return true;
  } catch {
    return false;
  }
}

const missing = !existsSync(CHROMIUM) ? `${CHROMIUM} is absent (apt-get install chromium)` : !playwrightInstalled() ? 'playwright-core is not installed (npm install)' : undefined;
const inCi = process.env.CI === 'true' || process.env.CI === '1';
if (missing && inCi) {
  test('CI has Chromium for the stand-in page click-through', () => {
    throw new Error(`CI must run the browser test, but ${missing}.`);
  });
} else if (missing) {
  console.warn(`Skipping the stand-in page click-through: ${missing}.`);
}
const describeWithChromium = missing === undefined ? describe : describe.skip;

describeWithChromium('the stand-in page in a browser', () => {
  let stack: Stack;
  let browser: Browser;

  beforeAll(async () => {
    const { chromium } = await import('playwright-core');
    stack = await Stack.start();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('shows a generated image in the thread after typing /gpu image a red fox', async () => {
    const page = await browser.newPage();
    await page.goto(stack.standin.pageUrl);
    await page.fill('#composer', '/gpu image a red fox');
    await page.press('#composer', 'Enter');

    const parent = page.locator('#feed > .message').filter({ hasText: 'asked for an image' });
    await parent.waitFor({ timeout: 15_000 });
    const image = parent.locator('.thread img.file-image');
    await image.first().waitFor({ timeout: 15_000 });
    // Evaluated in the page (strings keep DOM types out of this Node-typed test).
    await page.waitForFunction(`(() => { const img = document.querySelector('.thread img.file-image'); return !!img && img.complete && img.naturalWidth > 0; })()`);
    await parent.getByText('Succeeded in').waitFor({ timeout: 15_000 });
    // The page's Regenerate button really works: a second image arrives in the same thread.
    await parent.getByRole('button', { name: 'Regenerate' }).click();
    await page.waitForFunction(`document.querySelectorAll('.thread img.file-image').length >= 2`, undefined, { timeout: 15_000 });
    await page.close();
  });

  it('shows mistakes only to the person, like Slack', async () => {
    const page = await browser.newPage();
    await page.goto(stack.standin.pageUrl);
    await page.fill('#composer', '/gpu queue Bad_Name');
    await page.press('#composer', 'Enter');
    await page.locator('.ephemeral').filter({ hasText: 'must be 2-63 lower-case letters' }).waitFor({ timeout: 10_000 });
    await page.close();
  });
});
