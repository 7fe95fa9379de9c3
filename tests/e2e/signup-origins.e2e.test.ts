// Where readers come from, as a person brings them, in Chromium on PGlite and PostgreSQL:
// - A visitor lands on a recap page from another newsletter (`?utm_source=newsletter-x`), goes to the
//   archive through the top bar and signs up there, with JavaScript and without: the report's week
//   shows one new reader from newsletter-x who landed on that recap page, and the reader's own data
//   download (the fresh link mailed to them, followed) holds the origin.
// - A reader's share link, read from their subscription page, is used by four visitors in double
//   opt-in mode: a new reader who confirms through the .eml, one who signs up in two spellings of one
//   mailbox, the referrer's own other spelling, and one the honeypot stops. The referrer's page shows
//   1, REFERRAL_MILESTONES=1 sends exactly one thanks, and the report agrees; the report stays valid
//   HTML for the Nu checker.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HONEYPOT_FIELD } from '../../shared/honeypot.ts';
import { recaps } from '../../content/index.ts';
import { referralText } from '../../content/referrals.ts';
import { gatherReport, type ReportData } from '../../jobs/report/gather.ts';
import { renderReportHtml } from '../../jobs/report/render.tsx';
import { maskEmail } from '../../server/subscribers/link-tokens.ts';
import { createUnsubscribeToken, subscriptionUrlFor } from '../../server/subscribers/signed-links.ts';
import type { Store } from '../../server/store/types.ts';
import { chromiumAroundTests, chromiumAvailable } from '../support/browser.ts';
import { linksIn, readOutbox, settledOutbox, type Eml } from '../support/outbox.ts';
import { sqlBackends } from '../support/sql-backends.ts';
import { addSignup } from '../support/store-ops.ts';
import { startTestServer, TEST_UNSUBSCRIBE_SECRET, type TestServer } from '../support/server.ts';
import { htmlErrors, htmlValidatorAvailable } from '../support/validate-html.ts';

const RECAP_PAGE = '/weekly-recap-july-14';

let browser: Browser;
chromiumAroundTests((connected) => (browser = connected));

async function reportOf(server: TestServer): Promise<ReportData> {
  return gatherReport({
    store: server.store,
    recaps,
    now: new Date(),
    siteUrl: server.url,
    production: false,
    digest: { cron: 'off', timezone: 'UTC', freshnessDays: 7 },
  });
}

/** Signs up on the page the browser is on, with the form as the reader sees it (enhanced or plain). */
async function signUpHere(page: Page, email: string, javaScript: boolean, trap?: string) {
  if (javaScript) await page.waitForSelector('#email-signup form[novalidate]');
  if (trap !== undefined) await page.locator(`#email-signup input[name="${HONEYPOT_FIELD}"]`).fill(trap, { force: true });
  await page.getByPlaceholder('Enter your email').fill(email);
  await page.getByRole('button', { name: 'Subscribe', exact: true }).click();
  if (javaScript) await page.locator('[data-sonner-toast]').first().waitFor();
  else await page.getByRole('status').waitFor();
}

/** The mail to `email` once the outbox has settled (and, with `subject`, once one with it has come). */
async function mailTo(server: TestServer, email: string, subject?: string): Promise<Eml[]> {
  const deadline = Date.now() + 30_000;
  const arrived = async () => (await readOutbox(server.outboxDir)).some((eml) => eml.to === email && (subject === undefined || eml.subject === subject));
  while (!(await arrived()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
  return (await settledOutbox(server)).filter((eml) => eml.to === email);
}

/** The subscriber's own page, as the footer of every e-mail links to it. */
const subscriptionPageOf = (server: TestServer, id: string) => subscriptionUrlFor(server.url, createUnsubscribeToken(id, TEST_UNSUBSCRIBE_SECRET));

/** "Download my data" pressed on their page, and the link mailed for it followed: the JSON it downloads. */
async function downloadedData(server: TestServer, page: Page, id: string, email: string): Promise<Record<string, unknown>> {
  await page.goto(subscriptionPageOf(server, id));
  await page.getByRole('button', { name: 'Download my data', exact: true }).click();
  await page.getByRole('status').waitFor();
  const [mail] = await mailTo(server, email);
  const [link] = linksIn(mail!, `${server.url}/subscription/link?token=`);
  await page.goto(link!);
  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Download my data', exact: true }).click();
  const chunks: Buffer[] = [];
  for await (const chunk of await (await download).createReadStream()) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
}

for (const backend of sqlBackends) {
  for (const javaScript of [true, false]) {
    describe.skipIf(!chromiumAvailable || !backend.available)(`A visit from another newsletter on ${backend.name}, JavaScript ${javaScript ? 'on' : 'off'}`, () => {
      let server: TestServer;
      let cleanup: () => Promise<void>;
      let context: BrowserContext;
      beforeAll(async () => {
        const opened = await backend.open();
        cleanup = opened.cleanup;
        server = await startTestServer({ store: opened.store });
        context = await browser.newContext({ javaScriptEnabled: javaScript });
      });
      afterAll(async () => {
        await context?.close();
        await server?.close();
        await cleanup?.();
      });

      it('lands on a recap page, signs up on the archive: the report and the data download name newsletter-x and that page', async () => {
        const email = `reader-${javaScript ? 'js' : 'plain'}@example.org`;
        const page = await context.newPage();
        await page.goto(`${server.url}${RECAP_PAGE}?utm_source=newsletter-x`);
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Archives' }).click();
        await page.waitForURL((url) => url.pathname === '/archive');
        expect(new URL(page.url()).searchParams.get('utm_source')).toBe('newsletter-x');
        await signUpHere(page, email, javaScript);

        const subscriber = await server.store.findSubscriberByEmail(email);
        expect(subscriber?.status).toBe('active');
        const report = await reportOf(server);
        expect(report.growth.weeks).toEqual([{ week: expect.stringMatching(/^\d{4}-\d\d-\d\d$/), source: 'newsletter-x', page: RECAP_PAGE, readers: 1 }]);
        expect(report.growth.pages).toEqual([{ page: RECAP_PAGE, readers: 1 }]);

        const data = await downloadedData(server, page, subscriber!.id, email);
        expect(data.signup).toMatchObject({ page: '/archive' });
        expect(data.origin).toEqual({ landingPage: RECAP_PAGE, ref: null, utmSource: 'newsletter-x', utmMedium: null, utmCampaign: null, throughAReadersShareLink: false });
        await page.close();
      }, 90_000);
    });
  }
}

/** The referrer's share link, as their subscription page shows it. */
async function shareLinkOf(server: TestServer, page: Page, id: string): Promise<{ link: string; count: string }> {
  await page.goto(subscriptionPageOf(server, id));
  const link = (await page.locator('a[data-share-link]').textContent())!;
  const count = (await page.getByText(/joined through your link|Nobody has joined/).textContent())!;
  return { link, count };
}

/** Four visitors through the share link, each in a fresh browser profile. */
async function fourVisitors(server: TestServer, link: string) {
  const visit = async (email: string, trap?: string) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(link);
    expect(new URL(page.url()).searchParams.get('share')).toBe(link.slice(-16));
    await signUpHere(page, email, true, trap);
    await context.close();
  };
  await visit('newreader@example.org');
  await visit('two.spellings@gmail.com');
  await visit('twospellings+launches@gmail.com');
  await visit('the.referrer+news@gmail.com');
  await visit('bot@example.org', 'https://spam.example');

  // The new reader confirms through the e-mail; the reader of two spellings never does.
  const [confirmation] = await mailTo(server, 'newreader@example.org');
  const [confirm] = linksIn(confirmation!, `${server.url}/confirm?token=`);
  const page = await browser.newPage();
  await page.goto(confirm!);
  await page.getByRole('button', { name: 'Confirm my subscription' }).click();
  await page.waitForLoadState();
  await page.close();
}

async function expectRows(store: Store) {
  expect((await store.findSubscriberByEmail('newreader@example.org'))?.status).toBe('active');
  expect((await store.findSubscriberByEmail('twospellings@gmail.com'))?.status).toBe('pending');
  expect(await store.findSubscriberByEmail('bot@example.org')).toBeNull();
  expect((await store.findSubscriberByEmail('thereferrer@gmail.com'))?.status).toBe('active');
}

for (const backend of sqlBackends) {
  describe.skipIf(!chromiumAvailable || !backend.available)(`A reader's share link on ${backend.name}, double opt-in, REFERRAL_MILESTONES=1`, () => {
    let server: TestServer;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      const opened = await backend.open();
      cleanup = opened.cleanup;
      server = await startTestServer({ store: opened.store, config: { signupConfirmation: 'double', referralMilestones: [1] } });
    });
    afterAll(async () => {
      await server?.close();
      await cleanup?.();
    });

    it('credits one reader for four visitors, thanks the referrer once, and the report agrees', async () => {
      await addSignup(server.store, 'thereferrer@gmail.com', '/');
      const referrer = (await server.store.findSubscriberByEmail('thereferrer@gmail.com'))!;
      const page = await browser.newPage();
      const { link, count } = await shareLinkOf(server, page, referrer.id);
      expect(count).toBe(referralText.pageCount(0));

      await fourVisitors(server, link);
      await expectRows(server.store);
      expect((await shareLinkOf(server, page, referrer.id)).count).toBe(referralText.pageCount(1));
      await page.close();

      const subject = referralText.thanks.subject(1);
      const thanks = (await mailTo(server, 'thereferrer@gmail.com', subject)).filter((eml) => eml.subject === subject);
      expect(thanks).toHaveLength(1);
      // The thanks' button leads to the referrer's own page, which shows the count.
      const [button] = linksIn(thanks[0]!, `${server.url}/subscription?token=`);
      const thanked = await browser.newPage();
      await thanked.goto(button!);
      await thanked.getByText(referralText.pageCount(1)).waitFor();
      await thanked.close();

      const report = await reportOf(server);
      expect(report.growth.topReferrers).toEqual([{ masked: maskEmail('thereferrer@gmail.com'), referrals: 1 }]);
      expect(report.growth.referred).toBe(1);
      expect(report.growth.weeks).toEqual(expect.arrayContaining([expect.objectContaining({ source: 'share link', page: '/', readers: 1 })]));
      const html = await renderReportHtml(report);
      expect(html).toContain(maskEmail('thereferrer@gmail.com'));
      expect(html).not.toContain('thereferrer@gmail.com');
      if (htmlValidatorAvailable) expect(await htmlErrors(html)).toEqual([]);
    }, 120_000);
  });
}
