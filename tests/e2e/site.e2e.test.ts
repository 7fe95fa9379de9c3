// The site as a reader uses it: Debian's Chromium against the production build and a real
// embedded database. Skipped (with a message) only where no Chromium is installed.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { chromiumAvailable, launchChromium, signupFormHydrated } from '../support/browser.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

if (!chromiumAvailable) console.warn('[e2e] No Chromium at /usr/bin/chromium: browser tests skipped.');

let server: TestServer;
let browser: Browser;
let context: BrowserContext;
const consoleProblems: string[] = [];

beforeAll(async () => {
  if (!chromiumAvailable) return;
  server = await startTestServer();
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Opens a page; by default once the network is quiet, or at its load event for a test that then waits for hydration itself. */
async function open(path: string, target: BrowserContext = context, waitUntil: 'networkidle' | 'load' = 'networkidle'): Promise<Page> {
  const page = await target.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') consoleProblems.push(`${path}: ${message.text()}`);
  });
  page.on('pageerror', (error) => consoleProblems.push(`${path}: ${error.message}`));
  await page.goto(server.url + path, { waitUntil });
  return page;
}

const toast = (page: Page, title: string) => page.locator('[data-sonner-toast]', { hasText: title });

/** Every page hydrating cleanly, and the links that move the reader around the site. */
function pagesAndNavigation() {
  it('every page hydrates with no console error or warning', async () => {
    const paths = ['/', '/archive', '/about', ...recaps.map((r) => r.path), '/no-such-page'];
    // A few pages at a time; each is done once hydrated, with no wait for the network to go quiet.
    for (let i = 0; i < paths.length; i += 4) {
      await Promise.all(
        paths.slice(i, i + 4).map(async (path) => {
          const page = await open(path, context, 'load');
          await signupFormHydrated(page);
          await page.close();
        }),
      );
    }
    // The 404 page's own status shows up as a failed resource load; nothing else may.
    expect(consoleProblems.filter((p) => !/^\/no-such-page: Failed to load resource: .* 404/.test(p))).toEqual([]);
  }, 180_000);

  it('the top bar goes home, to the archive and about, and scrolls to the signup form', async () => {
    const page = await open('/weekly-recap-may-11');
    await signupFormHydrated(page);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Archives' }).click();
    await page.waitForURL(`${server.url}/archive`);
    await page.getByRole('heading', { level: 1, name: 'Weekly Recap Archive' }).waitFor();
    await nav.getByRole('link', { name: 'About' }).click();
    await page.waitForURL(`${server.url}/about`);
    await page.waitForFunction(() => document.title === 'About | Launched Weekly');
    await nav.getByRole('link', { name: 'Home', exact: true }).click();
    await page.waitForURL(`${server.url}/`);
    await nav.getByRole('link', { name: 'Launched Weekly home' }).click();
    expect(page.url()).toBe(`${server.url}/`);

    await nav.getByRole('link', { name: 'Subscribe' }).click();
    await page.waitForFunction(() => {
      const box = document.getElementById('email-signup')!.getBoundingClientRect();
      return Math.abs(box.top + box.height / 2 - window.innerHeight / 2) < 40;
    });
    expect(page.url()).toBe(`${server.url}/`);
    await expect(page.evaluate(() => document.activeElement?.getAttribute('type'))).resolves.toBe('email');
    await page.close();
  });

  it('Subscribe now → on the call-to-action page scrolls to the form', async () => {
    const page = await open('/weekly-recap-july-14');
    await signupFormHydrated(page);
    expect(await page.title()).toBe('Weekly Recap: July 14, 2025');
    await page.getByRole('link', { name: 'Subscribe now →' }).click();
    await page.waitForFunction(() => {
      const box = document.getElementById('email-signup')!.getBoundingClientRect();
      return box.top >= 0 && box.bottom <= window.innerHeight;
    });
    await page.close();
  });
}

/** Where the archive puts the reader back, and how links out of the site open. */
function archiveScrollAndExternalLinks() {
  it('the archive restores its scroll position (back button and nav link); other pages start at the top', async () => {
    const page = await open('/archive');
    await signupFormHydrated(page);
    await page.evaluate(() => window.scrollTo(0, 1200));
    await page.waitForFunction(() => sessionStorage.getItem('launched-weekly:archive-scroll') === '1200');
    // Clicking a card saves where the reader was at that moment (the click may scroll a little).
    await page.getByRole('link', { name: 'Read Recap: Week of April 13, 2025' }).click();
    await page.waitForURL(`${server.url}/weekly-recap-april-13`);
    await page.getByRole('heading', { level: 1, name: 'Week of April 13, 2025' }).waitFor();
    await page.waitForFunction(() => window.scrollY === 0);
    const savedAt = Number(await page.evaluate(() => sessionStorage.getItem('launched-weekly:archive-scroll')));
    expect(savedAt).toBeGreaterThan(300);

    await page.goBack();
    await page.waitForURL(`${server.url}/archive`);
    await page.waitForFunction((y) => Math.abs(window.scrollY - y) < 2, savedAt);

    await page.getByRole('link', { name: 'About' }).first().click();
    await page.waitForURL(`${server.url}/about`);
    await page.waitForFunction(() => window.scrollY === 0);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Archives' }).click();
    await page.waitForURL(`${server.url}/archive`);
    await page.waitForFunction((y) => Math.abs(window.scrollY - y) < 2, savedAt);

    // A fresh load in the same tab restores it too.
    await page.reload({ waitUntil: 'networkidle' });
    await page.waitForFunction((y) => Math.abs(window.scrollY - y) < 2, savedAt);
    await page.close();
  });

  it('external links open in a new tab without opener or referrer, with campaign parameters', async () => {
    const page = await open('/weekly-recap-june-9');
    const links = await page.locator('ol a').evaluateAll((anchors) =>
      anchors.map((a) => ({ href: (a as HTMLAnchorElement).href, target: a.getAttribute('target'), rel: a.getAttribute('rel') })),
    );
    expect(links).toHaveLength(10);
    for (const link of links) {
      expect(link.target).toBe('_blank');
      expect(link.rel).toBe('noopener noreferrer');
      expect(new URL(link.href).searchParams.get('utm_campaign')).toBe('weekly-recap-2025-06-09');
    }
    await page.close();
  });
}

/** The form with JavaScript: checking the address, the submitting state, and success. */
function signupValidationAndSuccess() {
  it('an empty or @-less address shows "Invalid email" and sends nothing', async () => {
    const page = await open('/');
    await signupFormHydrated(page);
    let requests = 0;
    page.on('request', (request) => {
      if (request.url().endsWith('/api/subscribe')) requests++;
    });
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await toast(page, 'Invalid email').waitFor();
    await expect(toast(page, 'Invalid email').textContent()).resolves.toContain('Please enter a valid email address.');
    await page.getByPlaceholder('Enter your email').fill('reader.example.com');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await expect(toast(page, 'Invalid email').count()).resolves.toBeGreaterThanOrEqual(1);
    expect(requests).toBe(0);
    await page.close();
  });

  it('shows the submitting state, then "You\'re In!", clears the input and saves one row', async () => {
    const page = await open('/archive');
    await signupFormHydrated(page);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/api/subscribe', async (route) => {
      await held;
      await route.continue();
    });
    const input = page.getByPlaceholder('Enter your email');
    await input.fill('  Browser.Reader@Example.com ');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    const button = page.getByRole('button', { name: 'Subscribing...' });
    await button.waitFor();
    expect(await button.isDisabled()).toBe(true);
    expect(await input.isDisabled()).toBe(true);
    release();
    await toast(page, "You're In!").waitFor();
    await expect(toast(page, "You're In!").textContent()).resolves.toContain("Now you'll know what's hot before it hits your group chat.");
    expect(await input.inputValue()).toBe('');
    expect(await input.isDisabled()).toBe(false);
    const record = await server.store.findSubscriberByEmail('browser.reader@example.com');
    expect(record?.active).toBe(true);

    await input.fill('BROWSER.reader@example.com');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await toast(page, 'Already subscribed!').waitFor();
    await expect(toast(page, 'Already subscribed!').textContent()).resolves.toContain('This email is already on our list.');
    expect(await input.inputValue()).toBe('BROWSER.reader@example.com');
    await page.close();
  });
}

/** The form with JavaScript when the signup fails, and how many toasts it stacks. */
function signupErrorToasts() {
  it('a network failure shows "Something went wrong" / "Please try again later."', async () => {
    const page = await open('/about');
    await signupFormHydrated(page);
    await page.route('**/api/subscribe', (route) => route.abort('connectionrefused'));
    await page.getByPlaceholder('Enter your email').fill('offline@example.com');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await toast(page, 'Something went wrong').waitFor();
    await expect(toast(page, 'Something went wrong').textContent()).resolves.toContain('Please try again later.');
    expect(await toast(page, 'Something went wrong').getAttribute('data-type')).toBe('error');
    await page.close();
  });

  it('a stopped store shows "Something went wrong" with the server’s message', async () => {
    const broken = await startTestServer();
    const page = await context.newPage();
    await page.goto(`${broken.url}/weekly-recap-march-2`, { waitUntil: 'networkidle' });
    await signupFormHydrated(page);
    await broken.store.close();
    await page.getByPlaceholder('Enter your email').fill('late@example.com');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await toast(page, 'Something went wrong').waitFor();
    await expect(toast(page, 'Something went wrong').textContent()).resolves.toContain('Please try again later.');
    await page.close();
    await broken.close().catch(() => {});
  });

  it('a server-side rejection shows its message', async () => {
    const page = await open('/');
    await signupFormHydrated(page);
    await page.getByPlaceholder('Enter your email').fill('reader@localhost');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await toast(page, 'Invalid email').waitFor();
    await expect(toast(page, 'Invalid email').textContent()).resolves.toContain('The part after the @ is not a valid domain');
    await page.close();
  });

  it('at most 3 toasts are visible at once', async () => {
    const page = await open('/');
    await signupFormHydrated(page);
    for (let i = 0; i < 5; i++) await page.getByRole('button', { name: 'Subscribe' }).click();
    await toast(page, 'Invalid email').first().waitFor();
    await page.waitForTimeout(500);
    const visible = await page.locator('[data-sonner-toast][data-visible="true"]').count();
    expect(visible).toBe(3);
    await page.close();
  });
}

/** The top bar on a narrow screen, and an accessibility audit of the main pages. */
function layoutAndAccessibility() {
  it('the top bar fits a 320 px screen with all four entries visible, even in a font much wider than any installed one', async () => {
    // A reader's device may substitute any font (Debian's DejaVu Sans overflowed the bar by 7 px).
    // Rather than depend on the fonts this machine has, widen whatever font is there: if the bar
    // holds with every letter spaced out by a quarter of an em, it holds for real fonts too.
    const narrow = await browser.newContext({ viewport: { width: 320, height: 640 } });
    const page = await narrow.newPage();
    await page.goto(server.url + '/weekly-recap-july-14', { waitUntil: 'networkidle' });
    await page.addStyleTag({ content: 'nav[aria-label="Main"] * { letter-spacing: 0.25em !important; }' });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBe(0);
    const nav = page.getByRole('navigation', { name: 'Main' });
    for (const name of ['Home', 'Archives', 'Subscribe', 'About']) {
      const box = await nav.getByRole('link', { name, exact: true }).boundingBox();
      expect(box, name).not.toBeNull();
      expect(box!.x, `${name} starts on screen`).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width, `${name} ends on screen`).toBeLessThanOrEqual(320);
    }
    await page.screenshot({ path: '.tmp/top-bar-320.png' });
    await narrow.close();
  });

  it('axe-core finds no serious or critical violation on home, archive, about and a recap, at phone and desktop widths', async () => {
    const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    // Injecting axe is an inline script, which the site's CSP rightly forbids; only this context bypasses it.
    const audit = await browser.newContext({ bypassCSP: true });
    const found: string[] = [];
    for (const width of [320, 1280]) {
      for (const path of ['/', '/archive', '/about', '/weekly-recap-july-14', '/weekly-recap-february-2']) {
        const page = await audit.newPage();
        await page.setViewportSize({ width, height: 800 });
        await page.goto(server.url + path, { waitUntil: 'load' });
        // Audited as the reader meets it once interactive.
        await signupFormHydrated(page);
        await page.addScriptTag({ content: axeSource });
        const violations = await page.evaluate(async () => {
          const result = await (window as unknown as { axe: { run: () => Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }> } }).axe.run();
          return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.nodes.length})`);
        });
        found.push(...violations.map((v) => `${width}px ${path}: ${v}`));
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        if (overflow > 0) found.push(`${width}px ${path}: page is ${overflow}px wider than the screen`);
        await page.close();
      }
    }
    await audit.close();
    expect(found).toEqual([]);
  }, 120_000);
}

describe.skipIf(!chromiumAvailable)('in Chromium', () => {
  pagesAndNavigation();
  archiveScrollAndExternalLinks();

  describe('signup', () => {
    signupValidationAndSuccess();
    signupErrorToasts();

    it('works without JavaScript: the form posts and the reader lands back at it with the outcome', async () => {
      const noScript = await browser.newContext({ javaScriptEnabled: false });
      const page = await open('/weekly-recap-april-20', noScript);
      await page.getByPlaceholder('Enter your email').fill('NoScript.Reader@example.com');
      await page.getByRole('button', { name: 'Subscribe' }).click();
      await page.waitForURL(`${server.url}/weekly-recap-april-20?signup=subscribed#email-signup`);
      await expect(page.getByRole('status').textContent()).resolves.toBe("You're In! Now you'll know what's hot before it hits your group chat.");
      expect((await server.store.findSubscriberByEmail('noscript.reader@example.com'))?.active).toBe(true);

      await page.getByPlaceholder('Enter your email').fill('noscript.reader@example.com');
      await page.getByRole('button', { name: 'Subscribe' }).click();
      await page.waitForURL(/signup=already-subscribed/);
      await expect(page.getByRole('status').textContent()).resolves.toBe('Already subscribed! This email is already on our list.');
      await noScript.close();
    });
  });

  layoutAndAccessibility();
});
