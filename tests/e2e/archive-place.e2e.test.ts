// The archive gives the reader back their place (the seed: saved when a card is pressed or the
// page is left, restored on load), on Back and on reload, whichever way they scrolled and clicked:
// the wheel, a card in the middle of the screen, a click while the page is still gliding, a scroll
// made before the app had started.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAroundTests, chromiumAvailable, scrollAtRest } from '../support/browser.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const PLACE_KEY = 'launched-weekly:archive-scroll';
const READ_RECAP = /^Read Recap: /;

let server: TestServer;
let browser: Browser;

chromiumAroundTests((connected) => (browser = connected));
beforeAll(async () => {
  if (chromiumAvailable) server = await startTestServer();
});
afterAll(() => server?.close());

/** A tab on the archive, its app started, the pointer over the cards (where a reader's wheel is). */
async function archiveTab(setUp?: (context: BrowserContext) => Promise<unknown>): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  await setUp?.(context);
  const page = await context.newPage();
  await page.goto(`${server.url}/archive`);
  await page.waitForSelector('#email-signup form[novalidate]');
  await page.mouse.move(640, 400);
  return page;
}

/** A week's page data answers `delayMs` late, as over a slow connection. */
const weeksAnsweredLate = (delayMs: number) => (context: BrowserContext) =>
  context.route('**/data/recaps/**', async (route) => {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    await route.continue();
  });


const savedPlace = (page: Page) => page.evaluate((key) => sessionStorage.getItem(key), PLACE_KEY);

/** Back from the week to the archive, then a reload of it: both land within 2 px of `place`. */
async function expectPlaceKept(page: Page, recapPath: string, place: number) {
  await page.waitForURL(`${server.url}${recapPath}`);
  await page.waitForFunction(() => window.scrollY === 0);
  expect(Math.abs(Number(await savedPlace(page)) - place), 'saved while the week shows').toBeLessThanOrEqual(2);
  const landed = async () => {
    // The place comes back once the archive has drawn its cards: waited for, then measured at rest.
    await page.waitForFunction((y) => Math.abs(window.scrollY - y) <= 2, place).catch(() => {});
    return scrollAtRest(page);
  };
  await page.goBack();
  await page.waitForURL(`${server.url}/archive`);
  expect(Math.abs((await landed()) - place), 'on Back').toBeLessThanOrEqual(2);
  await page.reload();
  await page.waitForSelector('#email-signup form[novalidate]');
  expect(Math.abs((await landed()) - place), 'on reload').toBeLessThanOrEqual(2);
  await page.context().close();
}

/** The week of the "Read Recap" link nearest the middle of the screen. */
const pathNearMiddle = () => {
  const links = [...document.querySelectorAll<HTMLAnchorElement>('main article a')];
  const distance = (link: HTMLAnchorElement) => Math.abs(link.getBoundingClientRect().top - window.innerHeight / 2);
  return links.sort((a, b) => distance(a) - distance(b))[0]!.getAttribute('href')!;
};

describe.skipIf(!chromiumAvailable)('the reader’s place in the archive', () => {
  it('scrolled 1,400 px with the wheel, the 13th card opened: Back and reload return to 1,400', async () => {
    const page = await archiveTab();
    await page.mouse.wheel(0, 1_400);
    await page.waitForFunction(() => window.scrollY >= 1_400);
    expect(await scrollAtRest(page)).toBe(1_400);
    const card = page.getByRole('link', { name: READ_RECAP }).nth(12);
    const recapPath = (await card.getAttribute('href'))!;
    await card.click();
    await expectPlaceKept(page, recapPath, 1_400);
  });

  it('a card in the middle of the screen, its week answered late: Back and reload return to where it was pressed', async () => {
    const page = await archiveTab(weeksAnsweredLate(400));
    await page.mouse.wheel(0, 900);
    await page.waitForFunction(() => window.scrollY >= 900);
    const place = await scrollAtRest(page);
    const recapPath = await page.evaluate(pathNearMiddle);
    await page.locator(`main article a[href="${recapPath}"]`).click();
    expect(await page.evaluate(() => window.scrollY)).toBe(place);
    await expectPlaceKept(page, recapPath, place);
  });

  it('a card pressed while the page still glides: Back and reload return to where it was pressed, not where the glide stopped', async () => {
    // The week's data answers late, so the archive stays on screen (and keeps gliding) after the press.
    const page = await archiveTab(weeksAnsweredLate(600));
    const pressed = await page.evaluate(
      () =>
        new Promise<{ place: number; recapPath: string }>((resolve) => {
          window.scrollTo({ top: 2_400, behavior: 'smooth' });
          const pressWhileGliding = () => {
            if (window.scrollY < 600) return requestAnimationFrame(pressWhileGliding);
            // The link on the card under the middle of the screen at this frame.
            const link = document.elementFromPoint(200, window.innerHeight / 2)?.closest('li')?.querySelector('a');
            if (!link) return requestAnimationFrame(pressWhileGliding);
            const place = Math.round(window.scrollY);
            link.click();
            resolve({ place, recapPath: link.getAttribute('href')! });
          };
          requestAnimationFrame(pressWhileGliding);
        }),
    );
    // The glide went on after the press: what is kept must be the place where the reader pressed.
    expect(await scrollAtRest(page)).toBeGreaterThan(pressed.place + 100);
    await expectPlaceKept(page, pressed.recapPath, pressed.place);
  });

  it('scrolled before the app started: the app leaves the reader there, and Back and reload return to it', async () => {
    // The app's script arrives late, as on a slow phone: the reader reads and scrolls the server's page first.
    let releaseScript = () => {};
    const scriptHeld = new Promise<void>((resolve) => (releaseScript = resolve));
    const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    await context.route('**/assets/*.js', async (route) => {
      await scriptHeld;
      await route.continue();
    });
    const page = await context.newPage();
    await page.goto(`${server.url}/archive`, { waitUntil: 'domcontentloaded' });
    await page.mouse.move(640, 400);
    await page.mouse.wheel(0, 1_400);
    await page.waitForFunction(() => window.scrollY >= 1_400);
    expect(await page.locator('#email-signup form[novalidate]').count()).toBe(0);
    releaseScript();
    await page.waitForSelector('#email-signup form[novalidate]');
    expect(await scrollAtRest(page)).toBe(1_400);
    const card = page.getByRole('link', { name: READ_RECAP }).nth(12);
    const recapPath = (await card.getAttribute('href'))!;
    await card.click();
    await expectPlaceKept(page, recapPath, 1_400);
  });
});
