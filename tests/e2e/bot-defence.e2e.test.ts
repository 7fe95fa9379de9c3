// The bot defences as a person meets them in Chromium: the honeypot field is out of their way
// (not seen, not read out, not reached by Tab), a disposable address gets its toast with and
// without JavaScript, and the forms on our own token pages work when Chromium sends `Origin: null`
// while a form on another site posting to us is refused with a page a person
// can read.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HONEYPOT_FIELD } from '../../shared/honeypot.ts';
import { createUnsubscribeToken } from '../../server/subscribers/signed-links.ts';
import { chromiumAvailable, launchChromium, signupFormHydrated } from '../support/browser.ts';
import { startTestServer, TEST_UNSUBSCRIBE_SECRET, type TestServer } from '../support/server.ts';
import { addSignup } from '../support/store-ops.ts';

let server: TestServer;
let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  if (!chromiumAvailable) return;
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const toast = (page: Page, title: string) => page.locator('[data-sonner-toast]', { hasText: title });

describe.skipIf(!chromiumAvailable)('bot defences in Chromium', () => {
  it('the honeypot is off-screen, out of the accessibility tree and the Tab order, and a person’s signup goes through', async () => {
    const page = await context.newPage();
    await page.goto(`${server.url}/`);
    await signupFormHydrated(page);
    const trap = page.locator(`#email-signup input[name="${HONEYPOT_FIELD}"]`);
    expect(await trap.count()).toBe(1);
    const box = await trap.boundingBox();
    expect(box === null || box.x + box.width <= 0).toBe(true);
    expect(await trap.evaluate((el) => getComputedStyle(el).display)).not.toBe('none');
    expect(await trap.getAttribute('tabindex')).toBe('-1');
    expect(await trap.getAttribute('autocomplete')).toBe('off');
    // Not in what a screen reader is given.
    expect(await page.locator('#email-signup').ariaSnapshot()).not.toContain('Leave this field empty');
    await expect(page.getByRole('textbox', { name: 'Leave this field empty' }).count()).resolves.toBe(0);

    // From the address field, Tab goes to the Subscribe button, never into the trap.
    const input = page.getByPlaceholder('Enter your email');
    await input.focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Subscribe');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    expect(await page.evaluate((name) => (document.activeElement as HTMLInputElement | null)?.name !== name, HONEYPOT_FIELD)).toBe(true);

    await input.fill('honeypot.neighbour@example.com');
    await page.getByRole('button', { name: 'Subscribe', exact: true }).click();
    await toast(page, "You're In!").waitFor();
    expect(await server.store.findSubscriberByEmail('honeypot.neighbour@example.com')).toMatchObject({ active: true });
    await page.close();
  });

  it('a bot that fills every field gets "You\'re In!" and is not stored', async () => {
    const page = await context.newPage();
    await page.goto(`${server.url}/about`);
    await signupFormHydrated(page);
    await page.getByPlaceholder('Enter your email').fill('form.filler@example.com');
    // What a form-filling script does: every input, visible or not.
    await page.locator(`#email-signup input[name="${HONEYPOT_FIELD}"]`).fill('https://cheap-pills.example', { force: true });
    await page.getByRole('button', { name: 'Subscribe', exact: true }).click();
    await toast(page, "You're In!").waitFor();
    expect(await server.store.findSubscriberByEmail('form.filler@example.com')).toBeNull();
    await page.close();
  });

  it('a disposable address shows "Invalid email" with the reason, with JavaScript and without', async () => {
    const page = await context.newPage();
    await page.goto(`${server.url}/`);
    await signupFormHydrated(page);
    await page.getByPlaceholder('Enter your email').fill('reader@mailinator.com');
    await page.getByRole('button', { name: 'Subscribe', exact: true }).click();
    await toast(page, 'Invalid email').waitFor();
    await expect(toast(page, 'Invalid email').textContent()).resolves.toContain('Please use a permanent e-mail address, not a disposable one.');
    await page.close();

    const noScript = await browser.newContext({ javaScriptEnabled: false });
    try {
      const plain = await noScript.newPage();
      await plain.goto(`${server.url}/archive`);
      await plain.getByPlaceholder('Enter your email').fill('reader@guerrillamail.com');
      await plain.getByRole('button', { name: 'Subscribe' }).click();
      await plain.waitForURL(/signup=disposable-email/);
      const status = plain.locator('#email-signup [role="status"]');
      expect(await status.textContent()).toBe('Invalid email Please use a permanent e-mail address, not a disposable one.');
    } finally {
      await noScript.close();
    }
    expect(await server.store.findSubscriberByEmail('reader@mailinator.com')).toBeNull();
    expect(await server.store.findSubscriberByEmail('reader@guerrillamail.com')).toBeNull();
  });
});

describe.skipIf(!chromiumAvailable)('forms on token pages (Origin: null) and forms on other sites', () => {
  it('pressing Unsubscribe, then "Subscribe again" on the unsubscribe page, asks for a fresh link; the signup form on a token page subscribes', async () => {
    await addSignup(server.store, 'changed.mind.in.chromium@example.com', '/');
    const { id } = (await server.store.findSubscriberByEmail('changed.mind.in.chromium@example.com'))!;
    const page = await context.newPage();
    const origins: (string | undefined)[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST') origins.push(request.headers().origin);
    });
    await page.goto(`${server.url}/unsubscribe?token=${createUnsubscribeToken(id, TEST_UNSUBSCRIBE_SECRET)}`);
    await page.getByRole('button', { name: 'Unsubscribe' }).click();
    await page.getByRole('heading', { name: 'You are unsubscribed' }).waitFor();
    expect((await server.store.findSubscriberByEmail('changed.mind.in.chromium@example.com'))?.active).toBe(false);

    // The unsubscribe link travels with forwarded mail: its "Subscribe again" only mails the owner a link.
    await page.getByRole('button', { name: 'Subscribe again' }).click();
    await page.getByRole('heading', { name: 'Your subscription' }).waitFor();
    expect(await page.getByRole('status').textContent()).toBe('We sent a link to c•••@example.com. Open it within 60 minutes to go on; until then nothing has changed.');
    expect((await server.store.findSubscriberByEmail('changed.mind.in.chromium@example.com'))?.active).toBe(false);

    // The signup form on a token page (an expired confirmation link's) posts with `Origin: null` and is let in.
    await page.goto(`${server.url}/confirm?token=not-a-token`);
    await page.locator('input[type=email]').fill('from.a.token.page@example.com');
    await page.getByRole('button', { name: 'Subscribe', exact: true }).click();
    await page.waitForURL(/\/\?signup=subscribed#email-signup$/);
    expect(await page.locator('#email-signup [role="status"]').textContent()).toContain("You're In!");
    expect((await server.store.findSubscriberByEmail('from.a.token.page@example.com'))?.active).toBe(true);
    // The pages' no-referrer policy is why Chromium sends no real origin for these posts.
    expect(origins).toEqual(['null', 'null', 'null']);
    await page.close();
  });

  it('a form on another site that posts to our signup is refused with a page that says why', async () => {
    // Another site: a different host (127.0.0.2 is another site to the browser than 127.0.0.1).
    const target = `${server.url}/api/subscribe`;
    const evil: Server = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(`<!doctype html><title>Win a prize</title><form method="post" action="${target}"><input name="email" value="victim.of.another.site@example.com"><button>Claim</button></form>`);
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.2', resolve));
    try {
      const page = await context.newPage();
      await page.goto(`http://127.0.0.2:${(evil.address() as AddressInfo).port}/`);
      const [response] = await Promise.all([page.waitForResponse(target), page.getByRole('button', { name: 'Claim' }).click()]);
      expect(response.status()).toBe(403);
      await page.getByRole('heading', { name: 'This form was sent from another site' }).waitFor();
      expect(await page.locator('main').textContent()).toContain('Signups are accepted only from the Launched Weekly site itself.');
      expect(await page.getByRole('link', { name: 'Go to the signup form' }).getAttribute('href')).toBe(`${server.url}/#email-signup`);
      expect(await server.store.findSubscriberByEmail('victim.of.another.site@example.com')).toBeNull();
      await page.close();
    } finally {
      await new Promise<void>((resolve) => evil.close(() => resolve()));
    }
  });
});
