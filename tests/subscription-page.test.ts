// 'Your subscription', as a subscriber reaches it: the link in the footer of a digest .eml, opened
// in Chromium; each button pressed; the downloaded JSON parsed and checked against the database;
// deletion that leaves nothing but, for a complained address, a keyed hash that keeps it
// suppressed. On the embedded defaults (PGlite + outbox) and on PostgreSQL.
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recaps } from '../content/index.ts';
import { runWeeklyDigest } from '../jobs/digest/run.ts';
import { OutboxMailer } from '../server/mail/outbox.ts';
import type { SqlClient } from '../server/store/sql-client.ts';
import { chromiumAvailable, launchChromium } from './support/browser.ts';
import { linksIn, readOutbox, settledOutbox } from './support/outbox.ts';
import { appStoreKinds } from './support/store-backends.ts';
import { startTestServer, TEST_UNSUBSCRIBE_SECRET, type TestServer } from './support/server.ts';
import { addSignup, deliveredTo } from './support/store-ops.ts';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

const kinds = appStoreKinds;

const press = async (page: Page, name: string) => {
  await page.getByRole('button', { name, exact: true }).click();
  await page.waitForLoadState();
};

for (const kind of kinds) {
  describe.skipIf(!chromiumAvailable || !kind.available)(`'Your subscription' on ${kind.name}`, () => {
    let server: TestServer;
    let sql: SqlClient | null;
    let drop: () => Promise<void>;
    let digestOutbox: string;
    const links = new Map<string, string>();

    beforeAll(async () => {
      const opened = await kind.open();
      sql = opened.sql;
      drop = opened.drop;
      server = await startTestServer({ store: opened.store });
      digestOutbox = await mkdtemp(join(tmpdir(), 'lw-subscription-digest-'));
      for (const email of ['ada@example.com', 'grumpy@example.com']) await addSignup(server.store, email, '/about');
      await runWeeklyDigest({
        store: server.store,
        mailer: new OutboxMailer({ dir: digestOutbox, from: 'Launched Weekly <digest@launchedweekly.test>' }),
        recaps,
        now: new Date('2025-07-15T09:00:00Z'),
        siteUrl: server.url,
        unsubscribeSecret: TEST_UNSUBSCRIBE_SECRET,
        mode: 'scheduled',
        freshnessDays: 7,
      });
      for (const eml of await readOutbox(digestOutbox)) {
        const [link] = linksIn(eml, `${server.url}/subscription?token=`);
        links.set(eml.to, link!);
        // The List-Unsubscribe header still names the unsubscribe link, exactly as before.
        expect(eml.headers['list-unsubscribe']).toMatch(new RegExp(`^<${server.url}/unsubscribe\\?token=[^>]+>$`));
      }
    });
    afterAll(async () => {
      await server?.close();
      await drop?.();
      await rm(digestOutbox, { recursive: true, force: true });
    });

    it('is linked from the digest’s footer and shows the state; a GET changes nothing', async () => {
      expect([...links.keys()].sort()).toEqual(['ada@example.com', 'grumpy@example.com']);
      const page = await browser.newPage();
      try {
        await page.goto(links.get('ada@example.com')!);
        await page.getByRole('heading', { name: 'Your subscription' }).waitFor();
        expect(await page.locator('main').textContent()).toContain('ada@example.com is subscribed and gets the Launched Weekly e-mail every Monday.');
        const buttons = await page.getByRole('button').allTextContents();
        expect(buttons).toEqual(['Unsubscribe', 'Download my data', 'Delete my data']);
      } finally {
        await page.close();
      }
      expect((await server.store.findSubscriberByEmail('ada@example.com'))?.status).toBe('active');
    });

    it('downloads the data as JSON that matches the database', async () => {
      const page = await browser.newPage();
      try {
        await page.goto(links.get('ada@example.com')!);
        const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download my data' }).click()]);
        expect(download.suggestedFilename()).toBe('launched-weekly-my-data.json');
        const data = JSON.parse(await readFile((await download.path())!, 'utf8')) as Record<string, unknown>;
        const details = (await server.store.subscriberDetails((await server.store.findSubscriberByEmail('ada@example.com'))!.id))!;
        expect(data).toMatchObject({
          address: 'ada@example.com',
          state: 'active',
          reason: null,
          firstSignupAt: details.createdAt.toISOString(),
          signup: { at: details.signedUpAt.toISOString(), page: '/about' },
          confirmation: { at: null },
          consentRecord: { signedUpAt: details.signedUpAt.toISOString(), signupPage: '/about', confirmedAt: null },
        });
        expect(data.recapsSent).toEqual([{ recap: '2025-07-14', title: recaps.find((r) => r.date === '2025-07-14')!.headline, sentAt: details.deliveries[0]!.sentAt.toISOString() }]);
        if (sql) {
          const ledger = await sql.query<{ sent_at: Date }>('select sent_at from public.digest_deliveries where subscriber_id = $1', [details.id]);
          expect(ledger.rows.map((row) => row.sent_at.toISOString())).toEqual([(data.recapsSent as { sentAt: string }[])[0]!.sentAt]);
        }
      } finally {
        await page.close();
      }
    });

    it('unsubscribes and subscribes again with its buttons', async () => {
      const page = await browser.newPage();
      try {
        await page.goto(links.get('ada@example.com')!);
        await press(page, 'Unsubscribe');
        expect(await page.getByRole('status').textContent()).toBe('Done: you are unsubscribed.');
        expect((await server.store.findSubscriberByEmail('ada@example.com'))?.status).toBe('unsubscribed');
        await press(page, 'Subscribe again');
        expect(await page.getByRole('status').textContent()).toBe('Done: you are subscribed again.');
        expect((await server.store.findSubscriberByEmail('ada@example.com'))?.status).toBe('active');
      } finally {
        await page.close();
      }
    });

    it('a complained address: “Subscribe again” only mails a confirmation; “Delete my data” leaves a keyed hash that keeps it suppressed', async () => {
      const { id } = (await server.store.findSubscriberByEmail('grumpy@example.com'))!;
      await server.store.removeSubscriber(id, 'complained');
      const page = await browser.newPage();
      try {
        await page.goto(links.get('grumpy@example.com')!);
        expect(await page.locator('main').textContent()).toContain('grumpy@example.com reported our e-mail as spam on');
        await press(page, 'Subscribe again');
        expect(await page.getByRole('status').textContent()).toBe('We sent you a link to confirm your address. The Monday e-mail starts once you click it.');
        expect((await server.store.findSubscriber(id))?.status).toBe('complained');
        expect((await settledOutbox(server.outboxDir)).filter((eml) => eml.to === 'grumpy@example.com')).toHaveLength(1);

        await press(page, 'Delete my data');
        await page.getByRole('heading', { name: 'Your data is deleted' }).waitFor();
        expect(await page.locator('main').textContent()).toContain('we keep a one-way keyed fingerprint of it');
      } finally {
        await page.close();
      }
      expect(await server.store.findSubscriber(id)).toBeNull();
      expect(await deliveredTo(server.store, '2025-07-14', [id])).toEqual(new Set());
      if (sql) {
        const kept = await sql.query<{ address_hash: string; reason: string }>('select address_hash, reason from public.subscriber_suppressions');
        expect(kept.rows).toEqual([{ address_hash: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), reason: 'complained' }]);
        expect(JSON.stringify(kept.rows)).not.toContain('grumpy');
      }
      // A bot re-adding it gets the same answer as anyone, and the address stays suppressed.
      const again = await fetch(`${server.url}/api/subscribe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'Grumpy@example.com' }) });
      expect(again.status).toBe(202);
      expect((await server.store.findSubscriberByEmail('grumpy@example.com'))?.status).toBe('complained');
    });

    it('“Delete my data” of an active subscriber removes the row and its ledger rows and keeps nothing', async () => {
      const { id } = (await server.store.findSubscriberByEmail('ada@example.com'))!;
      const page = await browser.newPage();
      try {
        await page.goto(links.get('ada@example.com')!);
        await press(page, 'Delete my data');
        await page.getByRole('heading', { name: 'Your data is deleted' }).waitFor();
        expect(await page.locator('main').textContent()).toContain('Nothing about ada@example.com is left on our list.');
        // The same link afterwards: nothing stored.
        await page.goto(links.get('ada@example.com')!);
        await page.getByRole('heading', { name: 'Nothing stored' }).waitFor();
      } finally {
        await page.close();
      }
      expect(await server.store.findSubscriber(id)).toBeNull();
      expect(await deliveredTo(server.store, '2025-07-14', [id])).toEqual(new Set());
      if (sql) expect((await sql.query('select 1 from public.subscriber_suppressions')).rows).toHaveLength(1);
    });
  });
}
