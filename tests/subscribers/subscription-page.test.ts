// 'Your subscription', as a subscriber reaches it: the link in the footer of a digest .eml, opened
// in Chromium. The footer link travels with every forwarded digest, so it unsubscribes at once but
// only mails a fresh link for anything else: the fresh link is read from the outbox .eml, opened
// in Chromium, and works once. After a delete, every old link answers 410 and no column of any
// table names the address or the id (the keyed hash of a complained address aside). In double
// mode too "Subscribe again" only mails a link, and the next digest skips the address. On PGlite and
// PostgreSQL, each with a direct SQL connection to look at every row.
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshLinkEmailText } from '../../server/mail/templates/FreshLinkEmail.tsx';
import { recaps } from '../../content/index.ts';
import { confirmUrlFor, createConfirmToken } from '../../server/subscribers/signed-links.ts';
import type { SqlClient } from '../../server/store/sql-client.ts';
import { chromiumAroundTests, chromiumAvailable } from '../support/browser.ts';
import { linksIn, newMailIn, readOutbox, type Eml } from '../support/outbox.ts';
import { rowsNaming } from '../support/rows-naming.ts';
import { sqlBackends } from '../support/sql-backends.ts';
import { addSignup } from '../support/store-ops.ts';
import { startTestServer, TEST_UNSUBSCRIBE_SECRET, type TestServer } from '../support/server.ts';
import { runDigestInto } from '../support/digest-run.ts';

let browser: Browser;
chromiumAroundTests((connected) => (browser = connected));

const press = async (page: Page, name: string) => {
  await page.getByRole('button', { name, exact: true }).click();
  await page.waitForLoadState();
};
const statusText = (page: Page) => page.getByRole('status').textContent();
const mainText = async (page: Page) => (await page.locator('main').textContent()) ?? '';

interface Setup {
  server: TestServer;
  sql: SqlClient;
  drop: () => Promise<void>;
  digestOutbox: string;
  /** Footer links of the first digest, by address. */
  links: Map<string, string>;
  /** The share link in each address's first digest (its footer, as sent). */
  shareLinks: Map<string, string>;
  unsubscribeLinks: Map<string, string>;
}

const digest = (setup: Pick<Setup, 'server' | 'digestOutbox'>, recapWeek?: string) => runDigestInto(setup.server, setup.digestOutbox, recapWeek);

async function setUp(kind: (typeof sqlBackends)[number], mode: 'single' | 'double', emails: string[]): Promise<Setup> {
  const { store, sql, cleanup: drop } = await kind.open();
  const server = await startTestServer({ store, config: { signupConfirmation: mode } });
  const digestOutbox = await mkdtemp(join(tmpdir(), 'lw-subscription-digest-'));
  for (const email of emails) await addSignup(store, email, '/about');
  await digest({ server, digestOutbox });
  const links = new Map<string, string>();
  const unsubscribeLinks = new Map<string, string>();
  const shareLinks = new Map<string, string>();
  for (const eml of await readOutbox(digestOutbox)) {
    links.set(eml.to, linksIn(eml, `${server.url}/subscription?token=`)[0]!);
    shareLinks.set(eml.to, linksIn(eml, `${server.url}/r/`)[0]!);
    expect(eml.text, 'the share link in the plain-text part').toContain(shareLinks.get(eml.to));
    // The List-Unsubscribe header still names the unsubscribe link, exactly as before.
    expect(eml.headers['list-unsubscribe']).toMatch(new RegExp(`^<${server.url}/unsubscribe\\?token=[^>]+>$`));
    unsubscribeLinks.set(eml.to, eml.headers['list-unsubscribe']!.slice(1, -1));
  }
  return { server, sql, drop, digestOutbox, links, unsubscribeLinks, shareLinks };
}

/** Closes what setUp opened; a set-up that failed part-way leaves some of it unset. */
async function tearDown(setup: Partial<Setup>) {
  await setup.server?.close();
  await setup.drop?.();
  if (setup.digestOutbox) await rm(setup.digestOutbox, { recursive: true, force: true });
}

/** The e-mails to this address in the app's outbox since `before`, once `count` have come and half a second passed without more. */
const newMail = (server: TestServer, before: Set<string>, to: string, count = 1): Promise<Eml[]> => newMailIn(server, before, to, { count });
const outboxNames = async (server: TestServer) => new Set((await readOutbox(server.outboxDir)).map((eml) => eml.name));

/** Presses a footer-page button that mails a fresh link, checks that nothing changed, and returns the link. */
async function askForLink(setup: Setup, page: Page, email: string, button: string, purpose: keyof typeof freshLinkEmailText.subject): Promise<string> {
  const before = await outboxNames(setup.server);
  const state = (await setup.server.store.findSubscriberByEmail(email))?.status;
  await page.goto(setup.links.get(email)!);
  await press(page, button);
  expect(await statusText(page)).toBe(`We sent a link to ${email[0]}•••${email.slice(email.indexOf('@'))}. Open it within 60 minutes to go on; until then nothing has changed.`);
  expect((await setup.server.store.findSubscriberByEmail(email))?.status).toBe(state);
  const mail = await newMail(setup.server, before, email);
  expect(mail.map((eml) => eml.subject)).toEqual([freshLinkEmailText.subject[purpose]]);
  const [link] = linksIn(mail[0]!, `${setup.server.url}/subscription/link?token=`);
  expect(link).toBeTruthy();
  return link!;
}

/** Opens `email`'s subscription page from its link and presses “Unsubscribe”, which acts at once and says so. */
async function unsubscribeOnPage(setup: Setup, page: Page, email: string) {
  await page.goto(setup.links.get(email)!);
  await press(page, 'Unsubscribe');
  expect(await statusText(page)).toBe('Done: you are unsubscribed.');
}

async function expectRefused(page: Page, link: string, heading: string) {
  const response = await page.goto(link);
  expect(response?.status()).toBe(410);
  await page.getByRole('heading', { name: heading }).waitFor();
}

/** The footer page itself, and the share link it shows. */
function footerPageAndShareLink(setup: Setup) {
  it('is linked from the digest’s footer and shows the address masked and its state; a GET changes nothing', async () => {
    expect([...setup.links.keys()].sort()).toEqual(['ada@example.com', 'grumpy@example.com']);
    const page = await browser.newPage();
    try {
      await page.goto(setup.links.get('ada@example.com')!);
      await page.getByRole('heading', { name: 'Your subscription' }).waitFor();
      expect(await mainText(page)).toContain('a•••@example.com is subscribed and gets the Launched Weekly e-mail every Monday.');
      expect(await page.content()).not.toContain('ada@');
      expect(await page.getByRole('button').allTextContents()).toEqual(['Unsubscribe', 'Download my data', 'Delete my data', 'Replace my share link']);
      expect(await mainText(page)).toContain('Nobody has joined through your link yet.');
      // The link the page offers is the one the digest's footer carried.
      expect(await page.locator('a[data-share-link]').textContent()).toBe(setup.shareLinks.get('ada@example.com'));
      expect(setup.shareLinks.get('ada@example.com')).toMatch(new RegExp(`^${setup.server.url}/r/[0-9a-f]{16}$`));
      // Followed as a friend would from the forwarded e-mail: the home page, its form carrying the code.
      await page.goto(setup.shareLinks.get('ada@example.com')!);
      await page.locator('#email-signup').waitFor();
      expect(await page.locator('#email-signup input[name="share"]').inputValue()).toBe(setup.shareLinks.get('ada@example.com')!.slice(-16));
    } finally {
      await page.close();
    }
    expect((await setup.server.store.findSubscriberByEmail('ada@example.com'))?.status).toBe('active');
  });

  it('“Replace my share link” gives a new link at once; the old one still leads home, without the code', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(setup.links.get('grumpy@example.com')!);
      const before = (await page.locator('a[data-share-link]').textContent())!;
      await press(page, 'Replace my share link');
      expect(await statusText(page)).toBe('Done: your share link is new. The old one no longer counts.');
      const after = (await page.locator('a[data-share-link]').textContent())!;
      expect(after).toMatch(/\/r\/[0-9a-f]{16}$/);
      expect(after).not.toBe(before);
      await page.goto(before);
      expect(new URL(page.url()).search).toBe('');
      await page.goto(after);
      expect(new URL(page.url()).searchParams.get('share')).toBe(after.slice(-16));
    } finally {
      await page.close();
    }
    expect((await setup.server.store.findSubscriberByEmail('grumpy@example.com'))?.status).toBe('active');
  });
}

/** The buttons that mail a fresh link, and what that link does once. */
function freshLinks(setup: Setup) {
  it('“Download my data” mails a fresh link; that link downloads the data once', async () => {
    const page = await browser.newPage();
    try {
      const link = await askForLink(setup, page, 'ada@example.com', 'Download my data', 'download');
      await page.goto(link);
      await page.getByRole('heading', { name: 'Download your data' }).waitFor();
      expect(await mainText(page)).toContain('a•••@example.com');
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download my data' }).click()]);
      expect(download.suggestedFilename()).toBe('launched-weekly-my-data.json');
      // The shared browser runs in another process: the file is saved to a path of this one.
      const saved = join(await mkdtemp(join(tmpdir(), 'lw-download-')), 'data.json');
      await download.saveAs(saved);
      const data = JSON.parse(await readFile(saved, 'utf8')) as Record<string, unknown>;
      await rm(join(saved, '..'), { recursive: true, force: true });
      const details = (await setup.server.store.subscriberDetails((await setup.server.store.findSubscriberByEmail('ada@example.com'))!.id))!;
      expect(data).toMatchObject({
        address: 'ada@example.com',
        state: 'active',
        firstSignupAt: details.createdAt.toISOString(),
        signup: { at: details.signedUpAt.toISOString(), page: '/about' },
      });
      expect(data.recapsSent).toEqual([{ recap: '2025-07-14', title: recaps.find((r) => r.date === '2025-07-14')!.headline, sentAt: details.deliveries[0]!.sentAt.toISOString() }]);
      // Used twice, it fails: the page says so, and so does a direct POST.
      await expectRefused(page, link, 'This link was already used');
      const again = await fetch(link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
      expect(again.status).toBe(410);
    } finally {
      await page.close();
    }
  });

  it('“Unsubscribe” acts at once; “Subscribe again” mails a fresh link that subscribes once', async () => {
    const page = await browser.newPage();
    try {
      await unsubscribeOnPage(setup, page, 'ada@example.com');
      expect((await setup.server.store.findSubscriberByEmail('ada@example.com'))?.status).toBe('unsubscribed');
      const link = await askForLink(setup, page, 'ada@example.com', 'Subscribe again', 'resubscribe');
      await page.goto(link);
      await press(page, 'Subscribe me again');
      await page.getByRole('heading', { name: 'You are subscribed again' }).waitFor();
      expect((await setup.server.store.findSubscriberByEmail('ada@example.com'))?.status).toBe('active');
      await expectRefused(page, link, 'This link was already used');
    } finally {
      await page.close();
    }
  });
}

/** Deleting an address's data, complained or not, and what is left of it afterwards. */
function deletion(setup: Setup) {
  it('a complained address: “Subscribe again” only mails a confirmation; its delete link leaves a keyed hash that keeps it suppressed', async () => {
    const { id } = (await setup.server.store.findSubscriberByEmail('grumpy@example.com'))!;
    await setup.server.store.removeSubscriber(id, 'complained');
    const page = await browser.newPage();
    try {
      await page.goto(setup.links.get('grumpy@example.com')!);
      expect(await mainText(page)).toContain('g•••@example.com reported our e-mail as spam on');
      const before = await outboxNames(setup.server);
      await press(page, 'Subscribe again');
      expect(await statusText(page)).toBe('We sent you a link to confirm your address. The Monday e-mail starts once you click it.');
      expect((await setup.server.store.findSubscriber(id))?.status).toBe('complained');
      expect((await newMail(setup.server, before, 'grumpy@example.com')).map((eml) => eml.subject)).toEqual(['Confirm your subscription to Launched Weekly']);

      const link = await askForLink(setup, page, 'grumpy@example.com', 'Delete my data', 'delete');
      await page.goto(link);
      await press(page, 'Delete my data');
      await page.getByRole('heading', { name: 'Your data is deleted' }).waitFor();
      expect(await mainText(page)).toContain('we keep a one-way keyed fingerprint of it');
    } finally {
      await page.close();
    }
    expect(await setup.server.store.findSubscriber(id)).toBeNull();
    const kept = await setup.sql.query<{ address_hash: string; reason: string }>('select address_hash, reason from public.subscriber_suppressions');
    expect(kept.rows).toEqual([{ address_hash: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), reason: 'complained' }]);
    expect(await rowsNaming(setup.sql, [id, 'grumpy@example.com'])).toEqual([]);
    // A bot re-adding it gets the same answer as anyone, and the address stays suppressed.
    const again = await fetch(`${setup.server.url}/api/subscribe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'Grumpy@example.com' }) });
    expect(again.status).toBe(202);
    expect((await setup.server.store.findSubscriberByEmail('grumpy@example.com'))?.status).toBe('complained');
  });

  it('“Delete my data” mails a fresh link; it deletes once, every old link then answers 410, and no row names the address or the id', async () => {
    const { id } = (await setup.server.store.findSubscriberByEmail('ada@example.com'))!;
    // A complaint event for its digest, as the webhook stores it; and proof the scan sees rows.
    await setup.server.store.recordEmailEvent({ svixId: 'msg_ada', type: 'email.complained', providerMessageId: 'ada-message', subscriberId: id, occurredAt: new Date() });
    const before = await rowsNaming(setup.sql, [id, 'ada@example.com']);
    for (const table of ['email_signups', 'digest_deliveries', 'digest_batches', 'email_events', 'subscriber_state_history']) {
      expect(before.some((place) => place.startsWith(`public.${table}.`)), table).toBe(true);
    }
    // An hour later, as far as the link limits go: ada asked for a download link in an earlier test.
    await setup.sql.query('delete from public.signup_rate_limits');
    const page = await browser.newPage();
    try {
      const download = await askForLink(setup, page, 'ada@example.com', 'Download my data', 'download');
      const link = await askForLink(setup, page, 'ada@example.com', 'Delete my data', 'delete');
      expect(await setup.server.store.findSubscriber(id)).not.toBeNull();
      await page.goto(link);
      await page.getByRole('heading', { name: 'Delete your data' }).waitFor();
      await press(page, 'Delete my data');
      await page.getByRole('heading', { name: 'Your data is deleted' }).waitFor();
      expect(await mainText(page)).toContain('Nothing about a•••@example.com is left on our list.');

      await expectRefused(page, link, 'This link has expired');
      await expectRefused(page, download, 'This link has expired');
      await expectRefused(page, setup.links.get('ada@example.com')!, 'This link has expired');
      await expectRefused(page, setup.unsubscribeLinks.get('ada@example.com')!, 'This link has expired');
      const oneClick = await fetch(setup.unsubscribeLinks.get('ada@example.com')!, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
      expect(oneClick.status).toBe(410);
      // A confirmation link made for the id (as a double opt-in e-mail carries) has expired too.
      await expectRefused(page, confirmUrlFor(setup.server.url, createConfirmToken(id, new Date(), TEST_UNSUBSCRIBE_SECRET)), 'This confirmation link is no longer valid');
    } finally {
      await page.close();
    }
    expect(await setup.server.store.findSubscriber(id)).toBeNull();
    expect(await rowsNaming(setup.sql, [id, 'ada@example.com'])).toEqual([]);
    // The complained address's keyed hash is all that is left of either.
    expect((await setup.sql.query('select 1 from public.subscriber_suppressions')).rows).toHaveLength(1);
  });
}

/** Registers the suite's set-up and tear-down (setUp, once before its tests) and returns the object setUp fills, for the tests to read. */
function setUpBeforeAll(kind: (typeof sqlBackends)[number], mode: 'single' | 'double', emails: string[]): Setup {
  const setup = {} as Setup;
  beforeAll(async () => {
    Object.assign(setup, await setUp(kind, mode, emails));
  });
  afterAll(() => tearDown(setup));
  return setup;
}

for (const kind of sqlBackends) {
  describe.skipIf(!chromiumAvailable || !kind.available)(`'Your subscription' on ${kind.name}, single mode`, () => {
    const setup = setUpBeforeAll(kind, 'single', ['ada@example.com', 'grumpy@example.com']);
    footerPageAndShareLink(setup);
    freshLinks(setup);
    deletion(setup);
  });

  describe.skipIf(!chromiumAvailable || !kind.available)(`'Your subscription' on ${kind.name}, double mode`, () => {
    const setup = setUpBeforeAll(kind, 'double', ['bea@example.com', 'carl@example.com']);

    it('“Subscribe again” mails a fresh link and changes nothing; the next digest skips the address', async () => {
      const page = await browser.newPage();
      try {
        await unsubscribeOnPage(setup, page, 'bea@example.com');
        const before = await outboxNames(setup.server);
        await press(page, 'Subscribe again');
        expect(await statusText(page)).toBe('We sent a link to b•••@example.com. Open it within 60 minutes to go on; until then nothing has changed.');
        expect(await mainText(page)).toContain('b•••@example.com unsubscribed on');
        expect((await newMail(setup.server, before, 'bea@example.com')).map((eml) => eml.subject)).toEqual([freshLinkEmailText.subject.resubscribe]);
      } finally {
        await page.close();
      }
      expect((await setup.server.store.findSubscriberByEmail('bea@example.com'))?.status).toBe('unsubscribed');
      const before = new Set((await readOutbox(setup.digestOutbox)).map((eml) => eml.name));
      const report = await digest(setup, '2025-07-06');
      expect(report.sent).toBe(1);
      const sent = (await readOutbox(setup.digestOutbox)).filter((eml) => !before.has(eml.name)).map((eml) => eml.to);
      expect(sent).toEqual(['carl@example.com']);
    });

    it('mails one fresh link of a kind an hour per subscriber; the asks after it change nothing and send nothing', async () => {
      const before = await outboxNames(setup.server);
      const notices: string[] = [];
      for (let i = 0; i < 6; i++) {
        const answer = await fetch(setup.links.get('carl@example.com')!, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'action=download' });
        expect(answer.status).toBe(200);
        notices.push(/<strong>([^<]+)<\/strong>/.exec(await answer.text())![1]!);
      }
      expect(notices[0]!.startsWith('We sent a link to c•••@example.com.')).toBe(true);
      expect(new Set(notices.slice(1))).toEqual(new Set(['We recently sent links to c•••@example.com; please use the newest one. Nothing has changed.']));
      expect(await newMail(setup.server, before, 'carl@example.com')).toHaveLength(1);
      expect((await setup.server.store.findSubscriberByEmail('carl@example.com'))?.status).toBe('active');
    });
  });
}
