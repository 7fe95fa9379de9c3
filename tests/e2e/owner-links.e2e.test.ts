// Links as a reader meets them in Chromium, on PGlite and PostgreSQL: a stranger holding a
// forwarded digest's footer link who presses "Subscribe again" again and again changes nothing and
// causes one e-mail, a link to the owner, which brings them back; a confirmation link mailed
// before a complaint cannot undo it;
// /unsubscribe, reached from a digest, masks the address and its "Subscribe again" only mails a
// fresh link. Every e-mail is read from the outbox (.eml) and its link followed in the browser.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshLinkEmailText } from '../../server/mail/templates/FreshLinkEmail.tsx';
import { chromiumAroundTests, chromiumAvailable, signUpWithForm } from '../support/browser.ts';
import { visibleText } from '../support/html.ts';
import { linksIn, newMailIn, readOutbox, type Eml } from '../support/outbox.ts';
import { postSignedWebhook } from '../support/resend-webhook.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { appStoreKinds } from '../support/store-backends.ts';
import { runDigestInto } from '../support/digest-run.ts';

const WEBHOOK_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const CONFIRM_SUBJECT = 'Confirm your subscription to Launched Weekly';

let browser: Browser;
chromiumAroundTests((connected) => (browser = connected));

interface Setup {
  server: TestServer;
  digestOutbox: string;
  drop: () => Promise<void>;
}

/** The app on a fresh store of `kind` in `mode`, and a directory for digests, from before the calling describe's tests to after them; fields filled in by then. */
function setUpAroundTests(kind: (typeof appStoreKinds)[number], mode: 'single' | 'double'): Setup {
  const setup = {} as Setup;
  beforeAll(async () => {
    const opened = await kind.open();
    setup.drop = opened.drop;
    setup.server = await startTestServer({ store: opened.store, config: { signupConfirmation: mode, resendWebhookSecret: WEBHOOK_SECRET } });
    setup.digestOutbox = await mkdtemp(join(tmpdir(), 'lw-owner-links-'));
  });
  afterAll(async () => {
    await setup.server?.close();
    await setup.drop?.();
    if (setup.digestOutbox) await rm(setup.digestOutbox, { recursive: true, force: true });
  });
  return setup;
}

const outboxNames = async (server: TestServer) => new Set((await readOutbox(server.outboxDir)).map((eml) => eml.name));

/** The e-mails to this address in the app's outbox since `before`, once `count` have come and nothing is left to send. */
const newMail = (server: TestServer, before: Set<string>, to: string, count = 1): Promise<Eml[]> => newMailIn(server, before, to, { count });

/** This week's digest, sent to every active subscriber; the copy for `to`. */
async function digestFor(setup: Setup, recapWeek: string, to: string): Promise<Eml> {
  const before = new Set((await readOutbox(setup.digestOutbox)).map((eml) => eml.name));
  const report = await runDigestInto(setup.server, setup.digestOutbox, recapWeek);
  expect(report.outcome).toBe('sent');
  const copies = (await readOutbox(setup.digestOutbox)).filter((eml) => !before.has(eml.name) && eml.to === to);
  expect(copies).toHaveLength(1);
  return copies[0]!;
}

/** Signs up in Chromium with the site's form and returns the confirmation link mailed for it. */
async function signUpInChromium(server: TestServer, email: string): Promise<string> {
  const before = await outboxNames(server);
  await signUpWithForm(browser, server.url, email, 'Check your inbox');
  const mail = await newMail(server, before, email);
  expect(mail.map((eml) => eml.subject)).toEqual([CONFIRM_SUBJECT]);
  return linksIn(mail[0]!, `${server.url}/confirm?token=`)[0]!;
}

async function press(page: Page, name: string) {
  await page.getByRole('button', { name, exact: true }).click();
  await page.waitForLoadState();
}

async function confirmInChromium(link: string) {
  const page = await browser.newPage();
  try {
    await page.goto(link);
    await press(page, 'Confirm my subscription');
    await page.getByRole('heading', { name: 'You are subscribed' }).waitFor();
  } finally {
    await page.close();
  }
}

/** What a mail client does for RFC 8058 one-click: a POST to the List-Unsubscribe address. */
async function oneClick(digest: Eml) {
  const target = digest.headers['list-unsubscribe']!.slice(1, -1);
  const response = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
  expect(response.status).toBe(200);
}

const statusOf = async (server: TestServer, email: string) => (await server.store.findSubscriberByEmail(email))?.status;

/** A complaint for this address, as Resend signs and posts it. */
async function complaint(server: TestServer, to: string) {
  const body = JSON.stringify({
    type: 'email.complained',
    created_at: new Date().toISOString(),
    data: { created_at: new Date().toISOString(), email_id: randomUUID(), from: 'Launched Weekly <digest@launchedweekly.com>', to: [to], subject: CONFIRM_SUBJECT },
  });
  const response = await postSignedWebhook(server, WEBHOOK_SECRET, body);
  expect(response.status).toBe(200);
}

/** What every press after the first says, in the browser and to a script alike. */
const RECENTLY_SENT = ['We recently sent links to o•••@example.com; please use the newest one. Nothing has changed.'];

for (const kind of appStoreKinds) {
  describe.skipIf(!chromiumAvailable || !kind.available)(`Links that reach the owner on ${kind.name}, double mode`, () => {
    const setup = setUpAroundTests(kind, 'double');

    it('a stranger holding a forwarded digest presses “Subscribe again” ten times and a script posts it forty more: the row stays unsubscribed, its owner gets one link, and that link makes them active', async () => {
      const email = 'owner.back@example.com';
      await confirmInChromium(await signUpInChromium(setup.server, email));
      const digest = await digestFor(setup, '2025-07-14', email);
      await oneClick(digest);
      const { id } = (await setup.server.store.findSubscriberByEmail(email))!;
      const consentBefore = (await setup.server.store.subscriberDetails(id))!.signupNetworkHash;
      const footerLink = linksIn(digest, `${setup.server.url}/subscription?token=`)[0]!;

      const before = await outboxNames(setup.server);
      const notices: string[] = [];
      const posts: number[] = [];
      // Ten presses in Chromium: the first three from fresh browser profiles (no cookie or storage
      // carries over), the other seven from one page that stays on the answer and presses again.
      const pressOnce = async (page: Page) => {
        if (!(await page.getByRole('button', { name: 'Subscribe again', exact: true }).isVisible())) await page.goto(footerLink);
        expect(await page.content()).not.toContain('owner.back');
        // Each press reaches the server (a page that stays would otherwise show the last answer again).
        const [answer] = await Promise.all([page.waitForResponse((response) => response.request().method() === 'POST'), press(page, 'Subscribe again')]);
        posts.push(answer.status());
        notices.push((await page.getByRole('status').textContent()) ?? '');
      };
      for (let profile = 0; profile < 3; profile++) {
        const context = await browser.newContext();
        try {
          await pressOnce(await context.newPage());
        } finally {
          await context.close();
        }
      }
      const context = await browser.newContext();
      let form: { action: string; fields: [string, string][] };
      try {
        const page = await context.newPage();
        for (let again = 0; again < 7; again++) await pressOnce(page);
        form = await page.evaluate(() => {
          const shown = [...document.forms].find((f) => f.querySelector('button')?.textContent?.trim() === 'Subscribe again')!;
          // getAttribute: the form has a field named "action", which `shown.action` would return.
          return { action: new URL(shown.getAttribute('action') ?? '', location.href).href, fields: [...new FormData(shown)].map(([name, value]): [string, string] => [name, String(value)]) };
        });
      } finally {
        await context.close();
      }
      // Forty more posts of the very form the page shows, by a script that keeps going.
      for (let again = 0; again < 40; again++) {
        const answer = await fetch(form.action, { method: 'POST', body: new URLSearchParams(form.fields) });
        posts.push(answer.status);
        const text = visibleText(await answer.text());
        notices.push(RECENTLY_SENT.find((notice) => text.includes(notice)) ?? text);
      }
      expect(notices).toHaveLength(50);
      expect(posts).toHaveLength(50);
      expect(posts.every((status) => status < 400)).toBe(true);
      expect(notices[0]).toBe('We sent a link to o•••@example.com. Open it within 60 minutes to go on; until then nothing has changed.');
      expect(new Set(notices.slice(1))).toEqual(new Set(RECENTLY_SENT));
      expect(await statusOf(setup.server, email)).toBe('unsubscribed');
      expect((await setup.server.store.subscriberDetails(id))!.signupNetworkHash).toBe(consentBefore);
      const mail = await newMail(setup.server, before, email);
      expect(mail.map((eml) => eml.subject)).toEqual([freshLinkEmailText.subject.resubscribe]);

      // The owner, in their inbox, follows the one link: that act is what brings them back.
      const page = await browser.newPage();
      try {
        await page.goto(linksIn(mail[0]!, `${setup.server.url}/subscription/link?token=`)[0]!);
        await press(page, 'Subscribe me again');
        await page.getByRole('heading', { name: 'You are subscribed again' }).waitFor();
      } finally {
        await page.close();
      }
      expect(await statusOf(setup.server, email)).toBe('active');
    }, 240_000);

    for (const when of ['before', 'after'] as const) {
      it(`a complaint holds: the reader’s old confirmation link, opened ${when} the complaint, leaves the row complained`, async () => {
        const email = `complainer.${when}@example.com`;
        const link = await signUpInChromium(setup.server, email);
        const page = await browser.newPage();
        try {
          if (when === 'before') {
            // The page with its button is open; the complaint about the confirmation e-mail arrives.
            await page.goto(link);
            await complaint(setup.server, email);
            expect(await statusOf(setup.server, email)).toBe('complained');
            await press(page, 'Confirm my subscription');
          } else {
            await confirmInChromium(link);
            await complaint(setup.server, email);
            expect(await statusOf(setup.server, email)).toBe('complained');
            await page.goto(link);
            expect(await page.getByRole('button', { name: 'Confirm my subscription' }).count()).toBe(0);
          }
          await page.getByRole('heading', { name: 'This confirmation link is no longer valid' }).waitFor();
        } finally {
          await page.close();
        }
        // Pressed directly, as a script holding the link would: refused all the same.
        const post = await fetch(link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
        expect(await post.text()).toContain('This confirmation link is no longer valid');
        expect(await statusOf(setup.server, email)).toBe('complained');
      });
    }
  });

  describe.skipIf(!chromiumAvailable || !kind.available)(`Links that reach the owner on ${kind.name}, single mode`, () => {
    const setup = setUpAroundTests(kind, 'single');

    it('/unsubscribe from a digest masks the address; its “Subscribe again” mails a fresh link and changes nothing itself; that link subscribes', async () => {
      const email = 'rita.reader@example.com';
      const signup = await fetch(`${setup.server.url}/api/subscribe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) });
      expect(signup.status).toBe(201);
      const digest = await digestFor(setup, '2025-07-14', email);
      const page = await browser.newPage();
      const referers: (string | undefined)[] = [];
      page.on('request', (request) => referers.push(request.headers().referer));
      try {
        await page.goto(linksIn(digest, `${setup.server.url}/unsubscribe?token=`)[0]!);
        expect(await page.locator('main').textContent()).toContain('Press the button to stop the Monday e-mail to r•••@example.com.');
        await press(page, 'Unsubscribe');
        await page.getByRole('heading', { name: 'You are unsubscribed' }).waitFor();
        expect(await page.locator('main').textContent()).toContain('r•••@example.com will get no more e-mail from Launched Weekly.');
        expect(await page.content()).not.toContain('rita.reader');
        expect(await statusOf(setup.server, email)).toBe('unsubscribed');

        const before = await outboxNames(setup.server);
        await press(page, 'Subscribe again');
        expect(await page.getByRole('status').textContent()).toBe('We sent a link to r•••@example.com. Open it within 60 minutes to go on; until then nothing has changed.');
        expect(await statusOf(setup.server, email)).toBe('unsubscribed');
        const mail = await newMail(setup.server, before, email);
        expect(mail.map((eml) => eml.subject)).toEqual([freshLinkEmailText.subject.resubscribe]);

        await page.goto(linksIn(mail[0]!, `${setup.server.url}/subscription/link?token=`)[0]!);
        await press(page, 'Subscribe me again');
        await page.getByRole('heading', { name: 'You are subscribed again' }).waitFor();
        expect(await statusOf(setup.server, email)).toBe('active');
        // No page reached with a token told any request where it came from.
        await page.getByRole('link', { name: '← Back to Launched Weekly' }).click();
        await page.waitForLoadState('networkidle');
      } finally {
        await page.close();
      }
      expect(referers.length).toBeGreaterThan(4);
      expect(referers.filter((referer) => referer !== undefined && referer.includes('token='))).toEqual([]);
    });
  });
}
