// One mailbox is one subscriber, as a person meets it in Chromium, on PGlite and PostgreSQL, in
// single and double mode: one spelling of a Gmail mailbox is signed up with the site's form (and,
// in double mode, confirmed from the e-mail); a signed complaint webhook arrives for it; then three
// other spellings (dots, +tag, googlemail, capitals) are typed into the same form. The reader is
// shown what any suppressed address is shown, none of them becomes active or pending, and nothing
// more reaches that inbox: no confirmation or welcome in the outbox, and no copy of the digest.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CONFIRMATION_SENT } from '../../shared/signup-outcome.ts';
import { site } from '../../content/site.ts';
import { confirmEmailText } from '../../server/mail/templates/ConfirmEmail.tsx';
import { welcomeEmailText } from '../../server/mail/templates/WelcomeEmail.tsx';
import { chromiumAroundTests, chromiumAvailable, signupFormHydrated } from '../support/browser.ts';
import { digestRecipients } from '../support/digest-run.ts';
import { linksIn, readOutbox, settledOutbox, type Eml } from '../support/outbox.ts';
import { newWebhookSecret, postComplaint } from '../support/resend-webhook.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { appStoreKinds } from '../support/store-backends.ts';

const WEBHOOK_SECRET = newWebhookSecret();
const GMAIL = /@g(oogle)?mail\.com$/i;
const OTHER_SPELLINGS = ['patprobe@gmail.com', 'Pat.Probe+x@gmail.com', 'P.A.T.Probe@GoogleMail.com'];

let browser: Browser;
chromiumAroundTests((connected) => (browser = connected));

async function withPage<T>(steps: (page: Page) => Promise<T>): Promise<T> {
  const page = await browser.newPage();
  try {
    return await steps(page);
  } finally {
    await page.close();
  }
}

/**
 * Types the address into the home page's signup form and presses Subscribe, as a reader does:
 * the toast the reader is then shown, and what is left in the field.
 */
function signUpInChromium(server: TestServer, email: string) {
  return withPage(async (page) => {
    await page.goto(server.url);
    await signupFormHydrated(page);
    const input = page.getByPlaceholder(site.signup.placeholder);
    await input.pressSequentially(email);
    await page.getByRole('button', { name: site.signup.button, exact: true }).click();
    const toast = page.locator('[data-sonner-toast]');
    await toast.waitFor();
    return {
      title: await toast.locator('[data-title]').textContent(),
      description: await toast.locator('[data-description]').textContent(),
      field: await input.inputValue(),
    };
  });
}

/** The e-mail with this subject to `to`, once the app's outbox worker has written it. */
function mailArrived(server: TestServer, to: string, subject: string): Promise<Eml> {
  return vi.waitFor(
    async () => {
      const mail = (await readOutbox(server.outboxDir)).filter((eml) => eml.to === to && eml.subject === subject);
      expect(mail).toHaveLength(1);
      return mail[0]!;
    },
    { timeout: 20_000, interval: 100 },
  );
}

/** Double mode: the reader opens the confirmation e-mail's link and presses the page's button. */
async function confirmInChromium(server: TestServer, email: string) {
  const confirmation = await mailArrived(server, email, confirmEmailText.subject);
  const [link] = linksIn(confirmation, `${server.url}/confirm?token=`);
  expect(link).toBeDefined();
  await withPage(async (page) => {
    await page.goto(link!);
    await page.getByRole('button', { name: 'Confirm my subscription', exact: true }).click();
    await page.getByRole('heading', { name: 'You are subscribed' }).waitFor();
  });
}

/** Every message the store has queued for the outbox worker, whatever became of it since. */
async function outboxRows(server: TestServer) {
  const summary = await server.store.outboxSummary(1);
  return summary.queued + summary.retrying + summary.sent + summary.failed;
}

for (const kind of appStoreKinds) {
  for (const mode of ['single', 'double'] as const) {
    describe.skipIf(!chromiumAvailable || !kind.available)(`One mailbox in Chromium on ${kind.name}, SIGNUP_CONFIRMATION=${mode}`, () => {
      let server: TestServer;
      let drop: () => Promise<void>;

      beforeAll(async () => {
        const opened = await kind.open();
        drop = opened.drop;
        server = await startTestServer({
          store: opened.store,
          // The limit per mailbox raised, so that the complaint, not the limit, is what holds the spellings off.
          config: { signupConfirmation: mode, welcomeEmail: true, resendWebhookSecret: WEBHOOK_SECRET, signupsPerAddressPerDay: 20 },
        });
      });
      afterAll(async () => {
        await server?.close();
        await drop?.();
      });

      it('a complaint for one spelling of a Gmail mailbox, then three other spellings typed into the form: none active or pending, nothing more mailed to that inbox, no digest', async () => {
        const { toasts } = site;
        const newAddress = mode === 'single' ? { ...toasts.subscribed, field: '' } : { ...CONFIRMATION_SENT, field: '' };
        // Another reader on the list, so the digest run at the end is seen to send.
        expect(await signUpInChromium(server, 'member@example.com')).toEqual(newAddress);
        expect(await signUpInChromium(server, 'pat.probe@gmail.com')).toEqual(newAddress);
        if (mode === 'double') {
          await confirmInChromium(server, 'member@example.com');
          await confirmInChromium(server, 'pat.probe@gmail.com');
        }
        await mailArrived(server, 'pat.probe@gmail.com', welcomeEmailText.subject);
        const mailedBefore = (await settledOutbox(server)).filter((eml) => GMAIL.test(eml.to));
        const welcomeAndConfirmation = mode === 'single' ? [welcomeEmailText.subject] : [confirmEmailText.subject, welcomeEmailText.subject].sort();
        expect(mailedBefore.map((eml) => eml.subject).sort()).toEqual(welcomeAndConfirmation);
        expect(new Set(mailedBefore.map((eml) => eml.to))).toEqual(new Set(['pat.probe@gmail.com']));
        const reader = (await server.store.findSubscriberByEmail('pat.probe@gmail.com'))!;
        expect(reader).toMatchObject({ status: 'active', active: true });
        const { id } = reader;

        expect(await postComplaint(server, WEBHOOK_SECRET, 'pat.probe@gmail.com')).toMatchObject({ status: 200, body: { status: 'processed', removed: 1 } });
        const queuedBefore = await outboxRows(server);

        for (const spelling of OTHER_SPELLINGS) {
          // Answered as any suppressed address is, whatever the mode: nothing tells a stranger the mailbox complained.
          expect(await signUpInChromium(server, spelling), spelling).toEqual({ ...CONFIRMATION_SENT, field: '' });
          expect(await server.store.findSubscriberByEmail(spelling), spelling).toMatchObject({ id, email: 'pat.probe@gmail.com', status: 'complained', active: false });
        }
        const counts = await server.store.countSubscribers();
        expect(counts.active).toBe(1);
        expect(counts.byStatus).toMatchObject({ pending: 0, complained: 1 });
        const all = await server.store.listAllSubscribers(null, 100);
        expect(all.filter((record) => GMAIL.test(record.email)).map((record) => [record.id, record.status])).toEqual([[id, 'complained']]);

        // Nothing was queued for that inbox, and nothing reached it.
        expect(await outboxRows(server)).toBe(queuedBefore);
        const mailedAfter = (await settledOutbox(server)).filter((eml) => GMAIL.test(eml.to));
        expect(mailedAfter.map((eml) => eml.name)).toEqual(mailedBefore.map((eml) => eml.name));
        expect(await digestRecipients(server)).toEqual(['member@example.com']);
      });
    });
  }
}
