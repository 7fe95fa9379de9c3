// Debian's Chromium driven by playwright-core (path and flags in chromium.ts). The browser
// project's global set-up (tests/setup/browser.ts) starts one Chromium for the run and a test file
// connects to it; `browser.close()` then only disconnects, closing the contexts that file opened.
// Outside that project (no endpoint provided) a file launches its own.
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, inject } from 'vitest';
import { CHROMIUM_FLAGS, CHROMIUM_PATH, chromiumAvailable } from './chromium.ts';

export { CHROMIUM_FLAGS, CHROMIUM_PATH, chromiumAvailable };

export function launchChromium(): Promise<Browser> {
  const endpoint = inject('chromiumEndpoint');
  if (endpoint) return chromium.connect(endpoint);
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_FLAGS, headless: true });
}

/**
 * Resolves once the page's signup form has hydrated (it then validates itself and answers with a
 * toast): what a test waits for before it types, instead of waiting for the network to go quiet.
 */
export const signupFormHydrated = (page: Page) => page.waitForSelector('#email-signup form[novalidate]');

/** Where the page comes to rest: its scroll position once the same for three frames in a row. */
export function scrollAtRest(page: Page): Promise<number> {
  return page.evaluate(
    () =>
      new Promise<number>((resolve) => {
        let last = -1;
        let still = 0;
        const watch = () => {
          still = window.scrollY === last ? still + 1 : 0;
          last = window.scrollY;
          if (still >= 3) resolve(last);
          else requestAnimationFrame(watch);
        };
        watch();
      }),
  );
}

/**
 * Connects to Chromium before the calling file's (or describe's) tests and lets go of it after;
 * `use` receives the browser. Where no Chromium is installed, nothing is connected.
 */
export function chromiumAroundTests(use: (browser: Browser) => void): void {
  let browser: Browser | null = null;
  beforeAll(async () => {
    if (!chromiumAvailable) return;
    browser = await launchChromium();
    use(browser);
  });
  afterAll(async () => {
    await browser?.close();
    browser = null;
  });
}

/**
 * Signs up on the page at `url` in a new tab, as a reader does: waits for the form's app, types the
 * address and presses the button; the text of the toast that answers with `expected`.
 */
export async function signUpWithForm(browser: Browser, url: string, email: string, expected: string): Promise<string | null> {
  const page = await browser.newPage();
  try {
    await page.goto(url);
    await signupFormHydrated(page);
    await page.locator('#email-signup input[type=email]').fill(email);
    await page.locator('#email-signup button[type=submit]').click();
    const toast = page.locator('[data-sonner-toast]', { hasText: expected });
    await toast.waitFor();
    return await toast.textContent();
  } finally {
    await page.close();
  }
}
