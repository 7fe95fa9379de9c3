// One row per mailbox, through the real app on PGlite and PostgreSQL, in single and double
// mode: the mailbox is the subscriber. A signed complaint webhook for one spelling of a Gmail
// mailbox holds for every other spelling (dots, +tag, googlemail, capitals): their signups are
// answered as usual and change nothing, none becomes active or pending, and nothing more reaches
// that inbox (no confirmation, no welcome, no digest). A subscribed mailbox signed up under
// another spelling answers "Already subscribed!" (single) or the usual 202 (double), keeps one row
// and the address first subscribed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestRecipients } from '../support/digest-run.ts';
import { settledOutbox } from '../support/outbox.ts';
import { newWebhookSecret, postComplaint } from '../support/resend-webhook.ts';
import { appStoreKinds } from '../support/store-backends.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const WEBHOOK_SECRET = newWebhookSecret();
const GMAIL = /@g(oogle)?mail\.com$/i;

async function signUp(server: TestServer, email: string, from: string) {
  const response = await fetch(`${server.url}/api/subscribe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
    body: JSON.stringify({ email }),
  });
  return { status: response.status, body: (await response.json()) as unknown };
}

for (const kind of appStoreKinds) {
  for (const mode of ['single', 'double'] as const) {
    describe.skipIf(!kind.available)(`One mailbox, one subscriber on ${kind.name}, SIGNUP_CONFIRMATION=${mode}`, () => {
      let server: TestServer;
      let drop: () => Promise<void>;
      let client = 0;
      const from = () => `198.51.100.${++client}`;

      beforeAll(async () => {
        const opened = await kind.open();
        drop = opened.drop;
        server = await startTestServer({
          store: opened.store,
          // The limit per mailbox raised, so that the complaint, not the limit, is what holds the spellings off.
          config: { signupConfirmation: mode, welcomeEmail: true, trustProxy: 1, resendWebhookSecret: WEBHOOK_SECRET, signupsPerAddressPerDay: 20 },
        });
      });
      afterAll(async () => {
        await server?.close();
        await drop?.();
      });

      it('a complaint for one spelling of a Gmail mailbox holds for its other spellings: none active or pending, nothing more mailed to it', async () => {
        const newAddress = mode === 'single' ? { status: 201, body: { status: 'subscribed' } } : { status: 202, body: { status: 'confirmation_sent' } };
        expect(await signUp(server, 'pat.probe@gmail.com', from())).toEqual(newAddress);
        expect(await signUp(server, 'member@example.com', from())).toEqual(newAddress);
        const id = (await server.store.findSubscriberByEmail('pat.probe@gmail.com'))!.id;
        if (mode === 'double') await server.store.activateSubscriber(id, 'confirmation', null, true);
        const mailedBefore = (await settledOutbox(server)).filter((eml) => GMAIL.test(eml.to));
        // Its welcome (single) or its confirmation and welcome (double), all to the one spelling.
        expect(mailedBefore.length).toBeGreaterThan(0);
        expect(new Set(mailedBefore.map((eml) => eml.to))).toEqual(new Set(['pat.probe@gmail.com']));

        expect(await postComplaint(server, WEBHOOK_SECRET, 'pat.probe@gmail.com')).toMatchObject({ status: 200, body: { status: 'processed', removed: 1 } });

        for (const spelling of ['patprobe@gmail.com', 'Pat.Probe+x@gmail.com', 'P.A.T.Probe@GoogleMail.com']) {
          // Answered as a suppressed address always is: the double-mode answer, whatever the mode.
          expect(await signUp(server, spelling, from()), spelling).toEqual({ status: 202, body: { status: 'confirmation_sent' } });
          expect(await server.store.findSubscriberByEmail(spelling), spelling).toMatchObject({ id, email: 'pat.probe@gmail.com', status: 'complained', active: false });
        }
        const counts = await server.store.countSubscribers();
        expect(counts.byStatus).toMatchObject({ active: mode === 'single' ? 1 : 0, pending: mode === 'single' ? 0 : 1, complained: 1 });

        const mailedAfter = (await settledOutbox(server)).filter((eml) => GMAIL.test(eml.to));
        expect(mailedAfter.map((eml) => `${eml.to} ${eml.subject}`)).toEqual(mailedBefore.map((eml) => `${eml.to} ${eml.subject}`));
        expect((await digestRecipients(server)).filter((to) => GMAIL.test(to))).toEqual([]);
      });

      it('another spelling of a subscribed mailbox answers as that mailbox does and changes nothing: one row, the address first subscribed', async () => {
        expect(await signUp(server, 'sam.reader@gmail.com', from())).toMatchObject({ status: mode === 'single' ? 201 : 202 });
        const first = (await server.store.findSubscriberByEmail('sam.reader@gmail.com'))!;
        if (mode === 'double') await server.store.activateSubscriber(first.id, 'confirmation', null, false);
        const expected = mode === 'single' ? { status: 409, body: { status: 'already_subscribed' } } : { status: 202, body: { status: 'confirmation_sent' } };
        for (const spelling of ['samreader@gmail.com', 'Sam.Reader+news@googlemail.com']) {
          expect(await signUp(server, spelling, from()), spelling).toEqual(expected);
        }
        const all = await server.store.listAllSubscribers(null, 1000);
        expect(all.filter((record) => /^s\.?a\.?m/.test(record.email)).map((record) => [record.id, record.email, record.status])).toEqual([[first.id, 'sam.reader@gmail.com', 'active']]);
        const recipients = await digestRecipients(server);
        expect(recipients.filter((to) => to.includes('sam'))).toEqual(['sam.reader@gmail.com']);
      });
    });
  }
}
