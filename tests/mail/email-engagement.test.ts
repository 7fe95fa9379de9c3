// Resend's email.delivered, email.opened and email.clicked for a sent week, on PGlite and
// PostgreSQL: the Monday job sends through the real Resend SDK to the local stand-in, which keeps
// each message's id and tags; the stand-in's webhook deliveries are then signed as Resend signs
// them (svix) in Resend's documented shape, and posted to the real app. Each delivery counts once
// for the message's recap (a redelivery with the same svix-id does not), a test copy counts
// nowhere, and nothing kept names a reader, their message or their click, deleted or not.
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { runWeeklyDigest } from '../../server/mail/digest/run.ts';
import { ResendMailer } from '../../server/mail/resend.ts';
import type { SqlClient } from '../../server/store/sql-client.ts';
import type { Store } from '../../server/store/types.ts';
import { startFakeResend, type FakeMessage, type FakeResend } from '../support/fake-resend.ts';
import { postSignedWebhook } from '../support/resend-webhook.ts';
import { rowsNaming } from '../support/rows-naming.ts';
import { startTestServer, TEST_UNSUBSCRIBE_SECRET, type TestServer } from '../support/server.ts';
import { sqlBackends } from '../support/sql-backends.ts';
import { addSignup } from '../support/store-ops.ts';

const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const WEEK = '2025-07-14';
const READERS = ['ada@readers.test', 'grace@readers.test', 'linus@readers.test'];
const [ADA, GRACE, LINUS] = READERS as [string, string, string];
const CLICKER_ADDRESS = '198.51.100.23';

/** Resend's event for a message it sent: the message's id, recipients and tags as it was sent with them. */
function eventFor(type: string, message: FakeMessage, extra: Record<string, unknown> = {}) {
  return JSON.stringify({
    type,
    created_at: new Date().toISOString(),
    data: {
      created_at: new Date().toISOString(),
      email_id: message.id,
      from: message.from,
      to: message.to,
      subject: message.subject,
      tags: Object.fromEntries(message.tags.map((tag) => [tag.name, tag.value])),
      ...extra,
    },
  });
}

for (const backend of sqlBackends) {
  describe.skipIf(!backend.available)(`Resend's engagement events on ${backend.name}`, () => {
    let store: Store;
    let sql: SqlClient;
    let cleanup: () => Promise<void>;
    let server: TestServer;
    let fake: FakeResend;

    beforeEach(async () => {
      ({ store, sql, cleanup } = await backend.open());
      fake = await startFakeResend();
      server = await startTestServer({ store, config: { resendWebhookSecret: SECRET } });
    });
    afterEach(async () => {
      await server.close();
      await fake.close();
      await cleanup();
    });

    const send = (testRecipient?: string) =>
      runWeeklyDigest({
        store,
        mailer: new ResendMailer({ apiKey: 're_test_engagement', baseUrl: fake.url, from: 'Launched Weekly <digest@launchedweekly.test>' }),
        recaps,
        now: new Date('2025-07-14T12:00:00Z'),
        siteUrl: server.url,
        unsubscribeSecret: TEST_UNSUBSCRIBE_SECRET,
        mode: 'manual',
        recapWeek: WEEK,
        freshnessDays: 30,
        timezone: 'UTC',
        testRecipient,
      });
    const post = async (body: string, svixId?: string) => {
      const response = await postSignedWebhook(server, SECRET, body, { id: svixId });
      expect(response.status).toBe(200);
      return response.json();
    };
    const countsOf = async (week: string) =>
      Object.fromEntries((await store.engagementCounts()).events.filter((row) => row.recapDate === week).map((row) => [row.type, row.events]));

    it('counts each delivery once per svix-id for the recap its tag names; a test copy counts nowhere', async () => {
      for (const email of READERS) await addSignup(store, email, '/');
      expect(await send()).toMatchObject({ outcome: 'sent', sent: 3 });
      expect(await send('curator@readers.test')).toMatchObject({ outcome: 'test-sent' });
      const to = (email: string) => fake.messages.find((message) => message.to.includes(email))!;
      expect(to(ADA).tags).toEqual(expect.arrayContaining([{ name: 'recap', value: WEEK }]));
      // The ledger and the batch name Ada and her message, as the digest wrote them; the events must add no such row.
      const adaId = (await store.findSubscriberByEmail(ADA))!.id;
      const namingBefore = await rowsNaming(sql, [adaId, ADA, to(ADA).id]);
      expect(namingBefore).toContain(`public.digest_deliveries.provider_message_id names ${to(ADA).id} (1 rows)`);

      // Ada's delivery is sent twice by Resend (same svix-id), as it does when an answer is lost.
      const adaDelivered = eventFor('email.delivered', to(ADA));
      expect(await post(adaDelivered, 'msg_ada_delivered')).toEqual({ status: 'ignored', type: 'email.delivered' });
      expect(await post(adaDelivered, 'msg_ada_delivered')).toEqual({ status: 'ignored', type: 'email.delivered' });
      await post(eventFor('email.delivered', to(GRACE)));
      await post(eventFor('email.opened', to(ADA)));
      await post(eventFor('email.opened', to(GRACE)));
      const link = `${server.url}/go/weekly-recap-july-14/1`;
      await post(eventFor('email.clicked', to(ADA), { click: { ipAddress: CLICKER_ADDRESS, link, timestamp: new Date().toISOString(), userAgent: 'Mozilla/5.0' } }));
      // The test copy's events: delivered and opened, for the same week, and not counted.
      const testCopy = to('curator@readers.test');
      expect(testCopy.tags).toEqual(expect.arrayContaining([{ name: 'kind', value: 'test' }]));
      await post(eventFor('email.delivered', testCopy));
      await post(eventFor('email.opened', testCopy));

      expect(await countsOf(WEEK)).toEqual({ 'email.delivered': 2, 'email.opened': 2, 'email.clicked': 1 });
      expect(await rowsNaming(sql, [adaId, ADA, to(ADA).id])).toEqual(namingBefore);
      expect(await rowsNaming(sql, [CLICKER_ADDRESS])).toEqual([]);
    });

    it("a deleted reader's events, before and after the delete, leave no trace of them", async () => {
      for (const email of READERS) await addSignup(store, email, '/');
      expect(await send()).toMatchObject({ outcome: 'sent', sent: 3 });
      const message = fake.messages.find((candidate) => candidate.to.includes(LINUS))!;
      const linusId = (await store.findSubscriberByEmail(LINUS))!.id;
      await post(eventFor('email.delivered', message));
      await post(eventFor('email.opened', message));
      expect(await store.deleteSubscriber(linusId, 'mailbox-hash-unused')).toBe('active');
      await post(eventFor('email.clicked', message, { click: { ipAddress: CLICKER_ADDRESS, link: `${server.url}/go/weekly-recap-july-14/2`, timestamp: new Date().toISOString(), userAgent: 'Mozilla/5.0' } }));

      expect(await countsOf(WEEK)).toEqual({ 'email.delivered': 1, 'email.opened': 1, 'email.clicked': 1 });
      expect(await rowsNaming(sql, [linusId, LINUS, message.id, CLICKER_ADDRESS])).toEqual([]);
    });
  });
}
