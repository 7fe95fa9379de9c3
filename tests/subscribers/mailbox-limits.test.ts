// Limits per mailbox, through the real app on PGlite and PostgreSQL: one mailbox spelled many ways,
// each spelling posted from its own network address behind a trusted proxy, in double mode, gets
// at most one confirmation e-mail, and every post gets the usual 202. A full-width domain is
// stored in ASCII; a domain that cannot be written in ASCII is refused with a 400 and a message.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NON_ASCII_DOMAIN_MESSAGE } from '../../server/subscribers/mailbox-key.ts';
import { settledOutbox } from '../support/outbox.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { appStoreKinds } from '../support/store-backends.ts';

const GMAIL_SPELLINGS = [
  'victim@gmail.com',
  'v.i.c.t.i.m@gmail.com',
  'victim+1@gmail.com',
  'Victim+2@Gmail.com',
  'vic.tim+3@gmail.com',
  'victim@googlemail.com',
  'v.ictim+4@googlemail.com',
  'VICTIM+5@GMAIL.COM',
  'vi.ct.im+6@gmail.com',
  'victim+7@googlemail.com',
];
const PLUS_TAGS = ['reader+1@example.org', 'reader+2@example.org', 'reader+news@example.org', 'Reader+x@Example.org', 'reader+8@example.org'];

for (const kind of appStoreKinds) {
  describe.skipIf(!kind.available)(`Limits per mailbox on ${kind.name} (SIGNUP_CONFIRMATION=double, TRUST_PROXY=1)`, () => {
    let server: TestServer;
    let drop: () => Promise<void>;
    let client = 0;

    beforeAll(async () => {
      const opened = await kind.open();
      drop = opened.drop;
      server = await startTestServer({ store: opened.store, config: { signupConfirmation: 'double', trustProxy: 1 } });
    });
    afterAll(async () => {
      await server?.close();
      await drop?.();
    });

    /** A signup from a network address no other post used. */
    async function signUp(email: string) {
      client += 1;
      const response = await fetch(`${server.url}/api/subscribe`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': `198.51.100.${client}` },
        body: JSON.stringify({ email }),
      });
      return { status: response.status, body: (await response.json()) as unknown };
    }

    it('10 spellings of one Gmail mailbox and 5 plus-tags of one example.org mailbox, all at once: every answer 202, one confirmation per mailbox', async () => {
      const answers = await Promise.all([...GMAIL_SPELLINGS, ...PLUS_TAGS].map(signUp));
      expect(answers).toEqual(Array.from({ length: 15 }, () => ({ status: 202, body: { status: 'confirmation_sent' } })));

      const mails = await settledOutbox(server);
      const gmail = mails.filter((eml) => /@g(oogle)?mail\.com$/.test(eml.to));
      const exampleOrg = mails.filter((eml) => eml.to.endsWith('@example.org'));
      expect(gmail).toHaveLength(1);
      expect(exampleOrg).toHaveLength(1);
      expect(mails).toHaveLength(2);
      expect(mails.every((eml) => eml.subject === 'Confirm your subscription to Launched Weekly')).toBe(true);

      // Again, from yet other network addresses: still nothing more.
      const again = await Promise.all(['v.i.c.t.i.m+9@gmail.com', 'reader+9@example.org'].map(signUp));
      expect(again.map((a) => a.status)).toEqual([202, 202]);
      expect(await settledOutbox(server)).toHaveLength(2);
    });

    it('stores a full-width domain in ASCII and refuses one that cannot be written in ASCII with a 400 and a message', async () => {
      expect(await signUp('wide@ｅｘａｍｐｌｅ.ｏｒｇ')).toEqual({ status: 202, body: { status: 'confirmation_sent' } });
      expect((await server.store.findSubscriberByEmail('wide@example.org'))?.status).toBe('pending');
      const mails = await settledOutbox(server);
      expect(mails.filter((eml) => eml.to === 'wide@example.org')).toHaveLength(1);

      const refused = await signUp('reader@exa\u0378mple.org');
      expect(refused).toEqual({ status: 400, body: { error: 'invalid_email', message: NON_ASCII_DOMAIN_MESSAGE } });
    });
  });
}
