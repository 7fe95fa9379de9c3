// Suppression, through the real app on PGlite and on PostgreSQL: a complained or
// bounced address signed up again (JSON API, and the form in Chromium without JavaScript) stays
// suppressed, gets no digest and at most one confirmation e-mail, in either signup mode; and a
// provider's complaint for an address stored with capitals suppresses it.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlClient } from '../../server/store/sql-client.ts';
import { chromiumAroundTests, chromiumAvailable } from '../support/browser.ts';
import { digestRecipients } from '../support/digest-run.ts';
import { settledOutbox } from '../support/outbox.ts';
import { newWebhookSecret, postComplaint } from '../support/resend-webhook.ts';
import { sqlBackends } from '../support/sql-backends.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { addSignup } from '../support/store-ops.ts';

const WEBHOOK_SECRET = newWebhookSecret();

let browser: Browser;
chromiumAroundTests((connected) => (browser = connected));


async function signUpJson(server: TestServer, email: string) {
  const response = await fetch(`${server.url}/api/subscribe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) });
  return { status: response.status, body: (await response.json()) as unknown };
}

async function signUpWithoutJavaScript(server: TestServer, email: string): Promise<string> {
  const context = await browser.newContext({ javaScriptEnabled: false });
  try {
    const page = await context.newPage();
    await page.goto(`${server.url}/archive`);
    await page.locator('#email-signup input[type=email]').fill(email);
    await page.locator('#email-signup button[type=submit]').click();
    await page.waitForURL(/signup=/);
    return (await page.locator('#email-signup [role=status]').textContent()) ?? '';
  } finally {
    await context.close();
  }
}

// The app on each SQL backend with a direct connection beside it (on PGlite, the store's own), so
// that a row can be written the way an older writer did on every backend.
for (const kind of sqlBackends) {
  for (const mode of ['single', 'double'] as const) {
    describe.skipIf(!chromiumAvailable || !kind.available)(`Suppressed addresses on ${kind.name}, SIGNUP_CONFIRMATION=${mode}`, () => {
      let server: TestServer;
      let sql: SqlClient | null;
      let drop: () => Promise<void>;

      beforeAll(async () => {
        const opened = await kind.open();
        sql = opened.sql;
        drop = opened.cleanup;
        server = await startTestServer({ store: opened.store, config: { signupConfirmation: mode, resendWebhookSecret: WEBHOOK_SECRET } });
      });
      afterAll(async () => {
        await server?.close();
        await drop?.();
      });

      it('a complained and a bounced address signed up again through the API and the form stay suppressed, with one confirmation e-mail at most', async () => {
        const addresses = { complained: `spam.${mode}@example.com`, bounced: `dead.${mode}@example.com` } as const;
        await addSignup(server.store, 'member@example.com', '/');
        for (const [reason, email] of Object.entries(addresses) as ['complained' | 'bounced', string][]) {
          await addSignup(server.store, email, '/');
          await server.store.removeSubscriber((await server.store.findSubscriberByEmail(email))!.id, reason);
        }

        for (const [reason, email] of Object.entries(addresses) as ['complained' | 'bounced', string][]) {
          const answers = [await signUpJson(server, email), await signUpJson(server, email.toUpperCase())];
          // Answered as in double opt-in mode, whatever SIGNUP_CONFIRMATION says.
          expect(answers).toEqual([
            { status: 202, body: { status: 'confirmation_sent' } },
            { status: 202, body: { status: 'confirmation_sent' } },
          ]);
          expect(await signUpWithoutJavaScript(server, ` ${email} `)).toBe('Check your inbox We sent you a link to confirm your address. The Monday e-mail starts once you click it.');
          expect((await server.store.findSubscriberByEmail(email))?.status).toBe(reason);
          const mails = (await settledOutbox(server)).filter((eml) => eml.to === email);
          expect(mails.length).toBeLessThanOrEqual(1);
          expect(mails.every((eml) => eml.subject === 'Confirm your subscription to Launched Weekly')).toBe(true);
        }

        expect(await digestRecipients(server)).toEqual(['member@example.com']);
      });

      it('a complaint for an address stored with capitals by an older writer suppresses it', async () => {
        // As the old site's table could hold it: written directly, not through our signup.
        await sql!.query(`insert into public.email_signups (email, source) values ('Old.Reader.${mode}@Example.COM', null)`);
        expect(await postComplaint(server, WEBHOOK_SECRET, `old.reader.${mode}@example.com`)).toMatchObject({ status: 200, body: { status: 'processed', removed: 1 } });
        const rows = await sql!.query<{ email: string; status: string }>(`select email, status from public.email_signups where lower(email) like 'old.reader.${mode}%'`);
        expect(rows.rows).toEqual([{ email: `old.reader.${mode}@example.com`, status: 'complained' }]);
      });
    });
  }
}
