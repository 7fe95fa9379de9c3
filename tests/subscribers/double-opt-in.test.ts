// SIGNUP_CONFIRMATION=double, as a reader meets it: the form in Chromium, the confirmation .eml in
// the outbox, its link opened in Chromium and the button pressed; a scanner's GET confirms
// nothing; the next digest goes to the confirmed address and not to a pending one. On PGlite and
// on PostgreSQL.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../server/store/postgres.ts';
import type { Store } from '../../server/store/types.ts';
import { createConfirmToken } from '../../server/subscribers/signed-links.ts';
import { chromiumAroundTests, chromiumAvailable, signUpWithForm } from '../support/browser.ts';
import { runDigest } from '../support/digest-run.ts';
import { linksIn, settledOutbox } from '../support/outbox.ts';
import { createTestDatabase, postgresUrl, type TestDatabase } from '../support/postgres.ts';
import { startTestServer, TEST_UNSUBSCRIBE_SECRET, type TestServer } from '../support/server.ts';

const CHECK_INBOX = 'Check your inbox';
const CHECK_INBOX_TEXT = 'We sent you a link to confirm your address. The Monday e-mail starts once you click it.';

let browser: Browser;
chromiumAroundTests((connected) => (browser = connected));

const subscribeJson = (server: TestServer, email: string) =>
  fetch(`${server.url}/api/subscribe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, source: '/' }) });

/** Signs up through the home page's form in Chromium and returns the text of the toast that answers. */
const signUpInChromium = (server: TestServer, email: string): Promise<string | null> => signUpWithForm(browser, server.url, email, CHECK_INBOX);

/** Opens a confirmation link in Chromium and presses its button, as the reader does. */
async function confirmInChromium(link: string): Promise<void> {
  const page = await browser.newPage();
  try {
    await page.goto(link);
    await page.getByRole('button', { name: 'Confirm my subscription' }).click();
    await page.getByRole('heading', { name: 'You are subscribed' }).waitFor();
  } finally {
    await page.close();
  }
}

const kinds = [
  { name: 'PGlite', available: true, open: async () => ({ store: undefined as Store | undefined, drop: async () => {} }) },
  {
    name: 'PostgreSQL',
    available: postgresUrl !== null,
    open: async () => {
      const db: TestDatabase = await createTestDatabase();
      const store = await openPostgresStore(db.url, { max: 4 });
      return {
        store: store as Store | undefined,
        drop: async () => {
          await store.close();
          await db.drop();
        },
      };
    },
  },
];

for (const kind of kinds) {
  describe.skipIf(!chromiumAvailable || !kind.available)(`Double opt-in on ${kind.name}`, () => {
    let server: TestServer;
    let drop: () => Promise<void>;

    beforeAll(async () => {
      const opened = await kind.open();
      drop = opened.drop;
      server = await startTestServer({ store: opened.store, config: { signupConfirmation: 'double' } });
    });
    afterAll(async () => {
      await server?.close();
      await drop?.();
    });

    const mailTo = async (email: string) => (await settledOutbox(server)).filter((eml) => eml.to === email);

    it('a signup in Chromium shows “Check your inbox” and leaves one confirmation .eml; pressing its button makes the address active', async () => {
      expect(await signUpInChromium(server, '  Reader.One@Example.com ')).toContain(CHECK_INBOX_TEXT);
      const subscriber = await server.store.findSubscriberByEmail('reader.one@example.com');
      expect(subscriber).toMatchObject({ status: 'pending', active: false });

      const mails = await mailTo('reader.one@example.com');
      expect(mails).toHaveLength(1);
      expect(mails[0]!.subject).toBe('Confirm your subscription to Launched Weekly');
      expect(mails[0]!.text).toContain('/confirm?token=');
      const [link] = linksIn(mails[0]!, `${server.url}/confirm?token=`);
      expect(link).toBeDefined();

      // A mail scanner opening the link: a page with a button, and nothing confirmed.
      const scanned = await fetch(link!);
      expect(scanned.status).toBe(200);
      expect(await scanned.text()).toContain('Confirm my subscription');
      expect((await server.store.findSubscriber(subscriber!.id))?.status).toBe('pending');

      await confirmInChromium(link!);
      const details = await server.store.subscriberDetails(subscriber!.id);
      expect(details).toMatchObject({ status: 'active', source: '/' });
      expect(details!.confirmedAt).toBeInstanceOf(Date);
      // The consent record holds keyed hashes of the network address, never the address itself.
      expect(details!.signupNetworkHash).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(details!.confirmNetworkHash).toBe(details!.signupNetworkHash);
      expect(JSON.stringify(details)).not.toContain('127.0.0.1');
    });

    it('answers 202 confirmation_sent for a new, a pending and an active address alike, and sends at most one e-mail a day', async () => {
      const answers = [];
      for (const email of ['two@example.com', 'two@example.com', 'reader.one@example.com']) {
        const response = await subscribeJson(server, email);
        answers.push({ status: response.status, body: await response.json() });
      }
      expect(answers).toEqual(Array.from({ length: 3 }, () => ({ status: 202, body: { status: 'confirmation_sent' } })));
      expect(await mailTo('two@example.com')).toHaveLength(1);
      // The active subscriber from the first test gets nothing new.
      expect(await mailTo('reader.one@example.com')).toHaveLength(1);
    });

    it('without JavaScript the form says the same, next to itself', async () => {
      const context = await browser.newContext({ javaScriptEnabled: false });
      try {
        const page = await context.newPage();
        await page.goto(`${server.url}/about`);
        await page.locator('#email-signup input[type=email]').fill('nojs@example.com');
        await page.locator('#email-signup button[type=submit]').click();
        await page.waitForURL(/signup=confirmation-sent/);
        const note = page.locator('#email-signup [role=status]');
        expect(await note.textContent()).toBe(`${CHECK_INBOX} ${CHECK_INBOX_TEXT}`);
      } finally {
        await context.close();
      }
      expect((await server.store.findSubscriberByEmail('nojs@example.com'))?.status).toBe('pending');
      expect(await mailTo('nojs@example.com')).toHaveLength(1);
    });

    it('an expired or altered link gets a page that says so, with the signup form, and confirms nothing', async () => {
      const { id } = (await server.store.findSubscriberByEmail('two@example.com'))!;
      const old = createConfirmToken(id, new Date(Date.now() - 8 * 24 * 60 * 60 * 1000), TEST_UNSUBSCRIBE_SECRET);
      const fresh = createConfirmToken(id, new Date(), TEST_UNSUBSCRIBE_SECRET);
      const altered = `${fresh.slice(0, -2)}${fresh.endsWith('AA') ? 'BB' : 'AA'}`;
      const page = await browser.newPage();
      try {
        for (const [token, heading] of [
          [old, 'This confirmation link has expired'],
          [altered, 'This confirmation link is not valid'],
        ] as const) {
          const response = await page.goto(`${server.url}/confirm?token=${encodeURIComponent(token)}`);
          expect(response?.status()).toBe(token === old ? 410 : 400);
          await page.getByRole('heading', { name: heading }).waitFor();
          expect(await page.locator('form[action="/api/subscribe"] input[type=email]').count()).toBe(1);
          const post = await fetch(`${server.url}/confirm?token=${encodeURIComponent(token)}`, { method: 'POST' });
          expect(post.status).toBe(token === old ? 410 : 400);
        }
      } finally {
        await page.close();
      }
      expect((await server.store.findSubscriber(id))?.status).toBe('pending');
    });

    it('the next digest goes to the confirmed address and not to a pending one', async () => {
      const { report, recipients } = await runDigest(server);
      expect(report.outcome).toBe('sent');
      expect(recipients).toEqual(['reader.one@example.com']);
    });
  });
}

describe('Double opt-in when the confirmation e-mail cannot be sent at first', () => {
  it('answers as usual; the outbox sends it once on a later try, and the throttle keeps a repeat signup from sending more', async () => {
    const outbox = { pollSeconds: 0.5, leaseSeconds: 10, retryMaxSeconds: 1 };
    const healthy = await startTestServer({ config: { signupConfirmation: 'double', outbox } });
    // The same store behind an instance whose outbox is a file, not a directory: every send fails.
    const broken = await startTestServer({
      store: healthy.store,
      config: { signupConfirmation: 'double', outbox, mailer: { kind: 'outbox', dir: join(healthy.outboxDir, 'not-a-dir', 'x'), from: 'Launched Weekly <digest@localhost>' } },
    });
    try {
      await mkdir(healthy.outboxDir, { recursive: true });
      await writeFile(join(healthy.outboxDir, 'not-a-dir'), 'a file in the way');
      expect((await subscribeJson(broken, 'unlucky@example.com')).status).toBe(202);
      const unlucky = async () => (await settledOutbox(healthy)).filter((eml) => eml.to === 'unlucky@example.com');
      // The broken instance's try fails and the message waits in the database for a later one,
      // which the healthy instance's worker makes: one confirmation, not a lost one.
      const deadline = Date.now() + 60_000;
      while ((await unlucky()).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250));
      expect(await unlucky()).toHaveLength(1);
      // The throttle it holds still stands: a second signup answers the same and sends nothing more.
      expect((await subscribeJson(healthy, 'unlucky@example.com')).status).toBe(202);
      expect(await unlucky()).toHaveLength(1);
    } finally {
      await broken.close();
      await healthy.close();
    }
  });
});
