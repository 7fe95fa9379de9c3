// What a delete leaves, at the store: a batch settled after it writes no ledger row for the
// deleted id (sent or skipped), and no column of any table names the id or the address. And the
// report: a delete or a prune takes the subscriber out of the counts from the week it happens, and
// leaves the weeks before as they were, and the sent figures of recaps already sent. On PGlite and
// PostgreSQL.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SqlClient } from '../../server/store/sql-client.ts';
import type { Store } from '../../server/store/types.ts';
import { rowsNaming } from '../support/rows-naming.ts';
import { sqlBackends } from '../support/sql-backends.ts';
import { reportWeekStates, weekStartSql } from '../support/report-weeks.ts';
import { addSignup, recordDeliveries } from '../support/store-ops.ts';


const RECAP = '2025-07-14';
const content = {
  contentHash: 'content-1',
  recapDate: RECAP,
  sender: 'Launched Weekly <digest@example.org>',
  siteUrl: 'https://example.org',
  secretFingerprint: 'f',
  subject: 's',
  html: '<p>h</p>',
  bodyText: 't',
};

for (const kind of sqlBackends) {
  describe.skipIf(!kind.available)(`a delete on ${kind.name}`, () => {
    let store: Store;
    let sql: SqlClient;
    let close: () => Promise<void>;
    beforeEach(async () => {
      ({ store, sql, cleanup: close } = await kind.open());
    });
    afterEach(() => close());

    const idOf = async (email: string) => (await store.findSubscriberByEmail(email))!.id;

    it("forgets the mailbox's confirmation throttle of an address it deletes, and keeps a complainer's", async () => {
      const throttles = async () => (await sql.query<{ mailbox_hash: string }>('select mailbox_hash from public.mailbox_confirmations order by 1')).rows.map((row) => row.mailbox_hash);
      for (const [email, hash] of [['waiting@example.org', 'mailbox-waiting'], ['grumpy@example.org', 'mailbox-grumpy']] as const) {
        await store.signUp({ email, source: '/', mode: 'double', networkHash: null, addressHashes: [hash] });
      }
      expect(await throttles()).toEqual(['mailbox-grumpy', 'mailbox-waiting']);
      await store.removeSubscriber(await idOf('grumpy@example.org'), 'complained');

      expect(await store.deleteSubscriber(await idOf('waiting@example.org'), 'mailbox-waiting')).toBe('pending');
      expect(await store.deleteSubscriber(await idOf('grumpy@example.org'), 'mailbox-grumpy')).toBe('complained');
      expect(await throttles()).toEqual(['mailbox-grumpy']);
    });

    it('a batch settled after the delete writes no ledger row for the deleted id, and nothing names it', async () => {
      for (const email of ['gone@example.org', 'kept@example.org']) await addSignup(store, email, '/');
      const [gone, kept] = [await idOf('gone@example.org'), await idOf('kept@example.org')];
      await store.saveDigestContent(content);
      const at = new Date();
      const sent = (await store.writeDigestBatch({ recapDate: RECAP, runId: null, idempotencyKey: 'b-1', contentHash: 'content-1', subscriberIds: [gone, kept], createdAt: at }))!;
      const skipped = (await store.writeDigestBatch({ recapDate: '2025-07-06', runId: null, idempotencyKey: 'b-2', contentHash: 'content-1', subscriberIds: [gone, kept], createdAt: at }))!;
      await store.markDigestBatchUnknown(sent.id, `provider timed out for ${gone}`);
      await store.recordEmailEvent({ svixId: 'msg-1', type: 'email.bounced', providerMessageId: 'p-0', subscriberId: gone, occurredAt: at });
      expect((await rowsNaming(sql, [gone, 'gone@example.org'])).length).toBeGreaterThan(0);

      expect(await store.deleteSubscriber(gone, 'hash-unused')).toBe('active');
      // The job still holds the batch as it wrote it, with the deleted id among the accepted.
      expect(
        await store.settleDigestBatch(sent.id, {
          state: 'sent',
          accepted: [
            { subscriberId: gone, providerMessageId: 'p-1' },
            { subscriberId: kept, providerMessageId: 'p-2' },
          ],
          failure: { reason: 'one refused', recipients: [{ id: gone, reason: 'refused gone@example.org' }] },
          at,
        }),
      ).toBe(true);
      expect(await store.settleDigestBatch(skipped.id, { state: 'skipped', at })).toBe(true);

      const ledger = await sql.query<{ recap_date: string; subscriber_id: string }>(
        "select to_char(recap_date, 'YYYY-MM-DD') as recap_date, subscriber_id from public.digest_deliveries order by 1",
      );
      expect(ledger.rows).toEqual([
        { recap_date: '2025-07-06', subscriber_id: kept },
        { recap_date: RECAP, subscriber_id: kept },
      ]);
      expect((await store.findDigestBatch(sent.id))!.subscriberIds).toEqual(['deleted', kept]);
      // The failure the job reported named the deleted id; settled after the delete, the batch does not.
      expect((await store.findDigestBatch(sent.id))!.failure).toEqual({ reason: 'one refused', recipients: [{ id: 'deleted', reason: 'deleted' }] });
      expect((await store.findDigestBatch(skipped.id))!.subscriberIds).toEqual(['deleted', kept]);
      expect(await rowsNaming(sql, [gone, 'gone@example.org'])).toEqual([]);
    });

    it('the report counts a deleted or pruned subscriber until the week it went, and keeps its signup week', async () => {
      for (const email of ['stay@example.org', 'gone@example.org']) await addSignup(store, email, '/');
      await store.signUp({ email: 'pend@example.org', source: '/', mode: 'double', networkHash: null, addressHashes: [] });
      await sql.query(`update public.subscriber_state_history set changed_at = ${weekStartSql(3)}`);
      await sql.query(`update public.email_signups set created_at = ${weekStartSql(3)}`);

      await store.deleteSubscriber(await idOf('gone@example.org'), 'hash-unused');
      await sql.query(`update public.subscriber_state_history set changed_at = ${weekStartSql(1)} where state = 'deleted'`);
      await sql.query("update public.email_signups set pending_since = now() - interval '40 days', confirmation_sent_at = now() - interval '40 days' where email = 'pend@example.org'");
      expect(await store.prunePending(30)).toBe(1);

      expect(await reportWeekStates(store)).toEqual([
        { states: { active: 2, pending: 1 }, signups: 3 },
        { states: { active: 2, pending: 1 }, signups: 0 },
        { states: { active: 1, pending: 1 }, signups: 0 },
        { states: { active: 1, pending: 0 }, signups: 0 },
      ]);
      expect((await store.reportSnapshot(52)).totals).toEqual({ active: 1 });
    });

    it('the report keeps a sent recap’s figures when a recipient deletes their data, and a truncated ledger counts nothing', async () => {
      for (const email of ['stay@example.org', 'gone@example.org']) await addSignup(store, email, '/');
      const [stay, gone] = [await idOf('stay@example.org'), await idOf('gone@example.org')];
      await recordDeliveries(store, RECAP, [
        { subscriberId: stay, providerMessageId: 'msg-stay' },
        { subscriberId: gone, providerMessageId: 'msg-gone' },
      ]);
      const sendsBefore = (await store.reportSnapshot(52)).sends;
      expect(sendsBefore).toEqual([expect.objectContaining({ recapDate: RECAP, sent: 2 })]);

      await store.deleteSubscriber(gone, 'hash-unused');
      expect((await sql.query('select subscriber_id from public.digest_deliveries')).rows).toEqual([{ subscriber_id: stay }]);
      expect((await store.reportSnapshot(52)).sends).toEqual(sendsBefore);

      await sql.query('truncate public.digest_deliveries');
      expect((await store.reportSnapshot(52)).sends).toEqual([]);
    });
  });
}
