// Debian's Chromium driven by playwright-core (path and flags in chromium.ts). The browser
// project's global set-up (tests/setup/browser.ts) starts one Chromium for the run and a test file
// connects to it; `browser.close()` then only disconnects, closing the contexts that file opened.
// Outside that project (no endpoint provided) a file launches its own.
import { chromium, type Browser, type Page } from 'playwright-core';
import { inject } from 'vitest';
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
