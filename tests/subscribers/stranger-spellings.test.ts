// A stranger's spelling cannot lock the owner out, and a complaint holds after the row is gone,
// through the real app and Resend's signed webhooks, on PGlite and PostgreSQL in both modes:
// - `victim+x@corp.example` (where `+` is no sub-address) is signed up and its confirmation or
//   welcome hard-bounces; the owner's own `victim@corp.example` signup then gets a confirmation at
//   that address, and following it makes the reader active there;
// - a complaint for an address with no row (deleted before it arrived) suppresses its mailbox: a
//   later signup of any spelling mails nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linksIn, settledOutbox } from '../support/outbox.ts';
import { newWebhookSecret, postBounce, postComplaint } from '../support/resend-webhook.ts';
import { appStoreKinds } from '../support/store-backends.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const WEBHOOK_SECRET = newWebhookSecret();

async function signUp(server: TestServer, email: string) {
  const response = await fetch(`${server.url}/api/subscribe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) });
  return { status: response.status, body: (await response.json()) as unknown };
}

const mailTo = async (server: TestServer, email: string) => (await settledOutbox(server)).filter((eml) => eml.to === email);

/** The mail to `email`, once the outbox worker has written at least one (it sends just after the answer). */
async function firstMailTo(server: TestServer, email: string) {
  const deadline = Date.now() + 20_000;
  while ((await mailTo(server, email)).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
  return mailTo(server, email);
}

for (const kind of appStoreKinds) {
  for (const mode of ['single', 'double'] as const) {
    describe.skipIf(!kind.available)(`A stranger's spelling on ${kind.name}, SIGNUP_CONFIRMATION=${mode}`, () => {
      let server: TestServer;
      let drop: () => Promise<void>;

      beforeAll(async () => {
        const opened = await kind.open();
        drop = opened.drop;
        server = await startTestServer({ store: opened.store, config: { signupConfirmation: mode, welcomeEmail: true, resendWebhookSecret: WEBHOOK_SECRET } });
      });
      afterAll(async () => {
        await server?.close();
        await drop?.();
      });

      it('a bounce of `victim+x@` nobody confirmed does not lock out `victim@`: its confirmation reaches victim@ and makes the reader active', async () => {
        expect((await signUp(server, 'victim+x@corp.example')).status).toBe(mode === 'single' ? 201 : 202);
        expect((await firstMailTo(server, 'victim+x@corp.example')).length).toBeGreaterThan(0);
        expect(await postBounce(server, WEBHOOK_SECRET, 'victim+x@corp.example')).toMatchObject({ status: 200, body: { removed: 1 } });
        expect((await server.store.findSubscriberByEmail('victim@corp.example'))?.status).toBe('bounced');

        expect(await signUp(server, 'victim@corp.example')).toEqual({ status: 202, body: { status: 'confirmation_sent' } });
        const confirmations = await firstMailTo(server, 'victim@corp.example');
        expect(confirmations.map((eml) => eml.subject)).toEqual(['Confirm your subscription to Launched Weekly']);
        const link = linksIn(confirmations[0]!, `${server.url}/confirm?token=`)[0]!;
        const confirmed = await fetch(link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
        expect(confirmed.status).toBe(200);
        expect(await server.store.findSubscriberByEmail('victim+x@corp.example')).toMatchObject({ email: 'victim@corp.example', status: 'active', active: true });

        // A late bounce report for the stranger's spelling no longer touches the owner's row.
        expect(await postBounce(server, WEBHOOK_SECRET, 'victim+x@corp.example')).toMatchObject({ status: 200, body: { removed: 0 } });
        expect((await server.store.findSubscriberByEmail('victim@corp.example'))?.status).toBe('active');
      });

      it('a complaint for an address with no row suppresses its mailbox: a later signup of any spelling mails nothing', async () => {
        expect(await server.store.findSubscriberByEmail('gone.reader@gmail.com')).toBeNull();
        expect(await postComplaint(server, WEBHOOK_SECRET, 'gone.reader@gmail.com')).toMatchObject({ status: 200, body: { removed: 0 } });
        for (const spelling of ['gonereader@gmail.com', 'Gone.Reader+again@googlemail.com']) {
          expect(await signUp(server, spelling), spelling).toEqual({ status: 202, body: { status: 'confirmation_sent' } });
        }
        expect(await server.store.findSubscriberByEmail('gone.reader@gmail.com')).toMatchObject({ status: 'complained', active: false });
        const mailed = (await settledOutbox(server)).filter((eml) => /reader/.test(eml.to));
        expect(mailed).toEqual([]);
      });
    });
  }
}
