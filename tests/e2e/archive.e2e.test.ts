// The archive as a reader uses it in Chromium: every week grouped by year under a jump
// list, and a search box that answers as the reader types (JavaScript) or on submit (none), with
// the same results drawn by the same markup either way.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatWeekDate } from '../../content/dates.ts';
import { recaps } from '../../content/index.ts';
import { createPageData, SEARCH_MAX_LENGTH } from '../../content/page-data.ts';
import { chromiumAroundTests, chromiumAvailable, scrollAtRest, signupFormHydrated } from '../support/browser.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let browser: Browser;
const problems: string[] = [];
const { search } = createPageData(recaps);

chromiumAroundTests((connected) => (browser = connected));
beforeAll(async () => {
  if (chromiumAvailable) server = await startTestServer();
});
afterAll(() => server?.close());

async function open(context: BrowserContext, path: string): Promise<Page> {
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') problems.push(`${path}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`${path}: ${error.message}`));
  await page.goto(server.url + path, { waitUntil: 'networkidle' });
  return page;
}

/** What the results show, as a reader reads it: the summary line, week cards and entry rows. */
async function resultsOf(page: Page) {
  const status = (await page.locator('main [role="status"]').first().textContent())?.trim();
  const weeks = await page.locator('section[aria-labelledby="matching-weeks"] article h3').allTextContents();
  const entries = (await page.locator('section[aria-labelledby="matching-entries"] li').allTextContents()).map((text) => text.replace(/\s+/g, ' ').trim());
  return { status, weeks, entries };
}

// A product name from the content, typed in lower case: matched as text, whatever its case.
const product = recaps[5]!.entries[3]!;
const QUERY = product.name.toLowerCase();


/** The year list, and searching with and without JavaScript. */
function listingAndSearch() {
  it('lists every week under its year, newest first, with a jump list of years', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await open(context, '/archive');
    const years = [...new Set(recaps.map((recap) => recap.date.slice(0, 4)))];
    expect(await page.getByRole('navigation', { name: 'Years' }).getByRole('link').allTextContents()).toEqual(years);
    expect(await page.locator('main h2[id^="year-"]').allTextContents()).toEqual(years);
    const cards = await page.locator('main section[aria-labelledby^="year-"] article p:first-child').allTextContents();
    expect(cards).toEqual(recaps.map((recap) => `Week of ${formatWeekDate(recap.date)}`));
    await context.close();
  });

  it('searches without JavaScript: the form loads /archive?q=… with the results rendered by the server', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await open(context, '/archive');
    await page.getByRole('searchbox', { name: 'Search the archive' }).fill(QUERY);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(`${server.url}/archive?q=${encodeURIComponent(QUERY).replace(/%20/g, '+')}`);
    const expected = search(QUERY);
    if (expected.status !== 'ok') throw new Error('the query should be a valid search');
    const shown = await resultsOf(page);
    expect(shown.entries.length).toBe(expected.entries.length);
    expect(shown.entries).toContain(`#${product.rank} ${product.name} — ${product.tagline}Week of ${formatWeekDate(recaps[5]!.date)}`);
    expect(shown.status).toMatch(/^\d+ weeks? and \d+ entr(?:y|ies) match “/);
    // The reader follows a result to its week.
    await page.getByRole('link', { name: `Week of ${formatWeekDate(recaps[5]!.date)}` }).first().click();
    await page.waitForURL(`${server.url}${recaps[5]!.path}`);
    await context.close();
  });

  it('searches as the reader types with JavaScript, over a small JSON request, showing what the server renders', async () => {
    const noScript = await browser.newContext({ javaScriptEnabled: false });
    const serverRendered = await open(noScript, `/archive?q=${encodeURIComponent(QUERY)}`);
    const expected = await resultsOf(serverRendered);
    await noScript.close();

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await open(context, '/');
    await signupFormHydrated(page);
    // Client-side navigation to the archive fetches its cards as route data.
    const archiveData = page.waitForResponse((response) => response.url() === `${server.url}/data/archive.json`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Archives' }).click();
    expect((await archiveData).status()).toBe(200);
    await page.getByRole('heading', { level: 2, name: recaps[0]!.date.slice(0, 4) }).waitFor();

    const dataRequests: string[] = [];
    page.on('request', (request) => {
      if (request.resourceType() === 'document') dataRequests.push(`document ${request.url()}`);
      if (request.url().includes('/data/archive.json?q=')) dataRequests.push(request.url());
    });
    await page.getByRole('searchbox', { name: 'Search the archive' }).pressSequentially(QUERY, { delay: 20 });
    await page.waitForURL(`${server.url}/archive?q=${encodeURIComponent(QUERY).replace(/%20/g, '+')}`);
    await page.locator('section[aria-labelledby="matching-entries"]').waitFor();
    expect(await resultsOf(page)).toEqual(expected);
    // No page load: only data requests, fewer than one per key typed.
    expect(dataRequests.every((url) => !url.startsWith('document'))).toBe(true);
    expect(dataRequests.length).toBeGreaterThan(0);
    expect(dataRequests.length).toBeLessThan(QUERY.length);

    // Emptying the box brings every week back.
    await page.getByRole('searchbox', { name: 'Search the archive' }).fill('');
    await page.waitForURL(`${server.url}/archive`);
    await page.getByRole('navigation', { name: 'Years' }).waitFor();
    expect(problems, problems.join('\n')).toEqual([]);
    await context.close();
  });

  it('treats the query as text, and explains an empty or over-long one', async () => {
    const context = await browser.newContext();
    for (const [query, status, message] of [
      ['.*', 200, 'Nothing in the archive matches “.*”.'],
      ['(a|b)+$', 200, 'Nothing in the archive matches “(a|b)+$”.'],
      ['', 200, 'Type a product name, or a word from a tagline or headline, to search the archive.'],
      ['x'.repeat(SEARCH_MAX_LENGTH + 1), 400, `That search is too long: use at most ${SEARCH_MAX_LENGTH} characters.`],
    ] as const) {
      const page = await context.newPage();
      const response = await page.goto(`${server.url}/archive?q=${encodeURIComponent(query)}`, { waitUntil: 'networkidle' });
      expect(response?.status(), query).toBe(status);
      await signupFormHydrated(page);
      expect((await page.locator('main [role="status"]').first().textContent())?.trim(), query).toBe(message);
      await page.close();
    }
    await context.close();
  });
}

/** The reader's place in the archive, kept across Back and reload. */
function placeOnReturn() {
  // The reader's place, whatever source the archive's page data comes from on the
  // way back (the browser's cache, or a fresh request that arrives late), and after a reload.
  for (const dataDelayMs of [0, 800]) {
    it(`restores the place of a card far down on Back and on reload (page data ${dataDelayMs ? `answered ${dataDelayMs} ms late` : 'as fast as it comes'})`, async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
      if (dataDelayMs) {
        await context.route('**/data/**', async (route) => {
          await new Promise((resolve) => setTimeout(resolve, dataDelayMs));
          await route.continue();
        });
      }
      const page = await open(context, '/archive');
      await signupFormHydrated(page);
      const oldest = [...recaps].sort((a, b) => a.date.localeCompare(b.date))[0]!;
      const card = page.getByRole('link', { name: `Read Recap: Week of ${formatWeekDate(oldest.date)}` });
      await card.scrollIntoViewIfNeeded();
      await page.mouse.wheel(0, 200);
      await page.waitForFunction(() => window.scrollY > 1_400);
      // The wheel's scroll may still be animating: the place is where it comes to rest, which is what
      // the card saves when it is pressed.
      const place = await scrollAtRest(page);
      await card.click();
      await page.waitForURL(`${server.url}${oldest.path}`);
      await page.waitForFunction(() => window.scrollY === 0);

      await page.goBack();
      await page.waitForURL(`${server.url}/archive`);
      // The reader's place is back once the archive has drawn (within Playwright's wait, not a fixed time).
      const nearPlace = () => page.waitForFunction((y) => Math.abs(window.scrollY - y) <= 60, place).catch(() => {});
      await nearPlace();
      expect(Math.abs((await page.evaluate(() => window.scrollY)) - place)).toBeLessThanOrEqual(60);

      await page.reload({ waitUntil: 'networkidle' });
      await nearPlace();
      expect(Math.abs((await page.evaluate(() => window.scrollY)) - place)).toBeLessThanOrEqual(60);
      await context.close();
    });
  }
}

describe.skipIf(!chromiumAvailable)('the archive in Chromium', () => {
  listingAndSearch();
  placeOnReturn();
});
