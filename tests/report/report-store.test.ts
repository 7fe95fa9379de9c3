// The report's part of the store contract, on all three backends: webhook events stored once,
// clicks and engagement events counted (server/store/engagement.ts), and one snapshot whose
// figures match what happened to the list and the ledger.
import { describe, expect, it } from 'vitest';
import type { SqlClient } from '../../server/store/sql-client.ts';
import type { Store } from '../../server/store/types.ts';
import { postgresUrl } from '../support/postgres.ts';
import { openAroundTests, storeBackends } from '../support/store-backends.ts';
import { reportWeekStates, weekStartSql } from '../support/report-weeks.ts';
import { addSignup, recordDeliveries } from '../support/store-ops.ts';

for (const backend of storeBackends) {
  describe.skipIf(!backend.available)(`report figures on ${backend.name}`, () => {
    let store: Store;
    openAroundTests(backend, (opened) => (store = opened.store));

    it('counts states, signups, sources and each recap’s bounces and complaints', async () => {
      const addresses = ['a@r.test', 'b@r.test', 'c@r.test', 'd@r.test', 'e@r.test'];
      for (const [i, email] of addresses.entries()) await addSignup(store, email, i < 3 ? '/' : '/weekly-recap-july-14');
      await addSignup(store, 'f@r.test', null);
      const ids = await Promise.all([...addresses, 'f@r.test'].map(async (email) => (await store.findSubscriberByEmail(email))!.id));
      await recordDeliveries(store, '2025-07-14', ids.map((subscriberId, i) => ({ subscriberId, providerMessageId: `msg-${i}` })));
      await store.removeSubscriber(ids[0]!, 'unsubscribed');
      await store.removeSubscriber(ids[1]!, 'bounced');
      await store.removeSubscriber(ids[2]!, 'complained');

      const bounce = { svixId: 'msg_bounce_1', type: 'email.bounced', providerMessageId: 'msg-1', subscriberId: ids[1]!, occurredAt: new Date() };
      await store.recordEmailEvent(bounce);
      await store.recordEmailEvent(bounce); // a replayed delivery
      await store.recordEmailEvent({ svixId: 'msg_complaint_1', type: 'email.complained', providerMessageId: 'msg-2', subscriberId: ids[2]!, occurredAt: new Date() });
      await store.recordEmailEvent({ svixId: 'msg_delivered_1', type: 'email.delivered', providerMessageId: 'msg-3', subscriberId: ids[3]!, occurredAt: new Date() });
      await store.recordEmailEvent({ svixId: 'msg_unknown_1', type: 'email.bounced', providerMessageId: 'not-ours', subscriberId: null, occurredAt: new Date() });

      const snapshot = await store.reportSnapshot(52);
      expect(snapshot.totals).toEqual({ active: 3, unsubscribed: 1, bounced: 1, complained: 1 });
      expect(snapshot.sources).toEqual([
        { source: '/', signups: 3 },
        { source: '/weekly-recap-july-14', signups: 2 },
        { source: '(unknown)', signups: 1 },
      ]);
      expect(snapshot.sends).toEqual([expect.objectContaining({ recapDate: '2025-07-14', sent: 6, failed: 0, unknown: 0, skipped: 0, bounced: 1, complained: 1 })]);
      const thisWeek = snapshot.weeks.at(-1)!;
      expect(thisWeek.states).toEqual({ active: 3, unsubscribed: 1, bounced: 1, complained: 1 });
      expect(thisWeek.signups).toBe(6);
      expect(snapshot.weeks).toHaveLength(1);
    });

    it('counts clicks per recap and entry, a key again within its window once, and engagement events once per svix-id', async () => {
      const at = new Date('2025-07-14T12:00:00Z');
      const click = (entry: string, clickKey: string, when: Date) => store.recordLinkClick({ recapDate: '2025-07-14', entry, clickKey, at: when, windowSeconds: 600 });
      expect(await click('3', 'key-a', at)).toBe(true);
      expect(await click('3', 'key-b', at)).toBe(true);
      expect(await click('3', 'key-a', new Date(at.getTime() + 599_000))).toBe(false);
      expect(await click('3', 'key-a', new Date(at.getTime() + 601_000))).toBe(true);
      expect(await click('page', 'key-c', at)).toBe(true);
      const event = { svixId: 'msg_open_1', type: 'email.opened' as const, recapDate: '2025-07-14', receivedAt: at };
      expect(await store.countEmailEngagement(event)).toBe(true);
      expect(await store.countEmailEngagement(event)).toBe(false);
      expect(await store.countEmailEngagement({ ...event, svixId: 'msg_delivered_2', type: 'email.delivered' })).toBe(true);
      expect(await store.engagementCounts()).toEqual({
        clicks: [
          { recapDate: '2025-07-14', entry: '3', clicks: 3 },
          { recapDate: '2025-07-14', entry: 'page', clicks: 1 },
        ],
        events: [
          { recapDate: '2025-07-14', type: 'email.delivered', events: 1 },
          { recapDate: '2025-07-14', type: 'email.opened', events: 1 },
        ],
      });
    });

    it('shows a returning reader as active again', async () => {
      const before = (await store.reportSnapshot(52)).totals;
      await addSignup(store, 'a@r.test', '/about');
      const after = (await store.reportSnapshot(52)).totals;
      expect(after.active).toBe(before.active! + 1);
      expect(after.unsubscribed ?? 0).toBe(before.unsubscribed! - 1);
    });

    it('shows at most ten sources a week, the rest summed as (other), nothing lost', async () => {
      const signUp = (i: number, utmSource: string) =>
        store.signUp({ email: `origin${i}@growth.test`, source: '/archive', mode: 'single', networkHash: null, addressHashes: [], origin: { utm_source: utmSource, page: '/about' } });
      for (let i = 0; i < 14; i++) await signUp(i, `campaign-${String(i).padStart(2, '0')}`);
      // Two more readers from the first campaign: it leads the campaigns.
      for (const i of [100, 101]) await signUp(i, 'campaign-00');
      const growth = await store.growthReport(1);
      expect(growth.weeks.length).toBeLessThanOrEqual(11);
      expect(growth.weeks.find((row) => row.source === '(other)')?.readers).toBeGreaterThan(0);
      expect(growth.weeks).toContainEqual({ week: growth.weeks[0]!.week, source: 'campaign-00', page: '/about', readers: 3 });
      expect(growth.weeks.reduce((sum, row) => sum + row.readers, 0)).toBe(growth.readers);
    });
  });
}

const postgresBackend = storeBackends.find((b) => b.name === 'postgres')!;

describe.skipIf(postgresUrl === null)('weekly history', () => {
  /** A store on a fresh PostgreSQL database, and one direct connection to move its history in time. */
  async function withPostgresStore(test: (opened: { store: Store; sql: SqlClient }) => Promise<void>) {
    const opened = await postgresBackend.open();
    try {
      // The PostgreSQL backend always opens its direct connection.
      await test({ store: opened.store, sql: opened.sql! });
    } finally {
      await opened.cleanup();
    }
  }

  it('counts each week by the state each subscriber was in at its end, and signups in the week they happened', async () => {
    await withPostgresStore(async ({ store, sql }) => {
      await addSignup(store, 'early@r.test', '/');
      await addSignup(store, 'later@r.test', '/archive');
      const early = (await store.findSubscriberByEmail('early@r.test'))!.id;
      await store.removeSubscriber(early, 'unsubscribed');
      // Moved into the past as if it had happened then: early joined three weeks ago and left
      // last week; later joined two weeks ago.
      await sql.query(`update public.email_signups set created_at = ${weekStartSql(3)} where email = 'early@r.test'`);
      await sql.query(`update public.email_signups set created_at = ${weekStartSql(2)} where email = 'later@r.test'`);
      await sql.query(
        `update public.subscriber_state_history h set changed_at = case
           when h.state = 'active' and s.email = 'early@r.test' then ${weekStartSql(3)}
           when h.state = 'active' then ${weekStartSql(2)}
           else ${weekStartSql(1)} end
         from public.email_signups s where s.id::text = h.subscriber_id`,
      );

      expect(await reportWeekStates(store)).toEqual([
        { states: { active: 1, unsubscribed: 0 }, signups: 1 },
        { states: { active: 2, unsubscribed: 0 }, signups: 1 },
        { states: { active: 1, unsubscribed: 1 }, signups: 0 },
        { states: { active: 1, unsubscribed: 1 }, signups: 0 },
      ]);
      expect((await store.reportSnapshot(2)).weeks.map((w) => w.states)).toEqual([
        { active: 1, unsubscribed: 1 },
        { active: 1, unsubscribed: 1 },
      ]);
    });
  });

  it('starts each week at midnight in the session time zone, also one a quarter hour off the hour (Kathmandu, UTC+05:45)', async () => {
    await withPostgresStore(async ({ store, sql }) => {
      await addSignup(store, 'sunday@r.test', '/');
      await addSignup(store, 'monday@r.test', '/');
      // One connection, so the report below runs in this session's time zone. This week began at
      // 18:15 UTC on Sunday: one signup a minute before that, one a minute after.
      await sql.query(`set timezone = 'Asia/Kathmandu'`);
      await sql.query(
        `update public.subscriber_state_history h set changed_at = date_trunc('week', now())
           + case when s.email = 'sunday@r.test' then interval '-1 minute' else interval '1 minute' end
         from public.email_signups s where s.id::text = h.subscriber_id`,
      );
      const { rows } = await sql.query<{ report: { weeks: { week: string; states: Record<string, number>; signups: number }[] } }>(
        `select public.report_snapshot(52) as report`,
      );
      const { rows: monday } = await sql.query<{ week: string }>(`select to_char(date_trunc('week', now()), 'YYYY-MM-DD') as week`);
      const weeks = rows[0]!.report.weeks;
      expect(weeks.map((w) => w.week).at(-1)).toBe(monday[0]!.week);
      expect(weeks.map((w) => ({ states: w.states, signups: w.signups }))).toEqual([
        { states: { active: 1 }, signups: 1 },
        { states: { active: 2 }, signups: 1 },
      ]);
    });
  });
});
