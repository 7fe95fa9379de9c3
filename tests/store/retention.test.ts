// Closed outbox messages and webhook events older than RETENTION_DAYS are pruned
// by the scheduler's daily housekeeping (which also prunes unconfirmed signups; each Monday run
// prunes the same way), and the report's figures do not change: a list with old and new rows, the
// report's figures, the housekeeping, the figures again: equal, and the old rows are gone. Time is moved by ageing the rows' timestamps, as 100
// days would. On PGlite, PostgreSQL and the Supabase store (REST, over the same SQL function).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clockReading } from '../support/clocks.ts';
import { capturingLogger } from '../support/digest-scheduler-harness.ts';
import { recaps } from '../../content/index.ts';
import { startDigestScheduler } from '../../jobs/digest/scheduler.ts';
import { gatherReport } from '../../jobs/report/gather.ts';
import { OutboxMailer } from '../../server/mail/outbox.ts';
import type { SqlClient } from '../../server/store/sql-client.ts';
import type { Store } from '../../server/store/types.ts';
import { sqlBackends } from '../support/sql-backends.ts';
import { storeBackends } from '../support/store-backends.ts';
import { addSignup, recordDeliveries } from '../support/store-ops.ts';

interface Opened {
  store: Store;
  sql: SqlClient;
  cleanup(): Promise<void>;
}

const supabase = storeBackends.find((b) => b.name === 'supabase')!;
const backends: { name: string; available: boolean; open(): Promise<Opened> }[] = [
  ...sqlBackends,
  {
    name: 'Supabase',
    available: supabase.available,
    async open() {
      const opened = await supabase.open();
      return { ...opened, sql: opened.sql! };
    },
  },
];

const NOW = new Date();
const OLD = ['b1', 'b1-again', 'c2-old', 'c12', 'x1', 'd3', 'n1'];

/** What the operator reads, less the instant the snapshot was taken. */
async function figures(store: Store) {
  const data = await gatherReport({ store, recaps, now: NOW, siteUrl: 'https://launched.test', production: false, digest: { cron: 'off', timezone: 'UTC', freshnessDays: 7 } });
  const { generatedAt: _taken, ...snapshot } = data.snapshot;
  return { ...data, snapshot };
}

for (const backend of backends) {
  describe.skipIf(!backend.available)(`Retention on ${backend.name}`, () => {
    let opened: Opened;
    let mailDir: string;
    beforeAll(async () => {
      opened = await backend.open();
      mailDir = await mkdtemp(join(tmpdir(), 'lw-retention-'));
    }, 60_000);
    afterAll(async () => {
      await opened?.cleanup();
      await rm(mailDir, { recursive: true, force: true });
    });

    it('the daily housekeeping prunes outbox messages and webhook events past RETENTION_DAYS, and the report shows the same figures after', async () => {
      const { store, sql } = opened;
      const emails = ['a', 'b', 'c', 'd', 'e', 'f'].map((name) => `${name}@retention.test`);
      for (const email of emails) await addSignup(store, email, '/');
      const ids = await Promise.all(emails.map(async (email) => (await store.findSubscriberByEmail(email))!.id));
      await recordDeliveries(store, '2025-07-14', ids.map((subscriberId, i) => ({ subscriberId, providerMessageId: `msg-${i}` })));
      await recordDeliveries(store, '2025-07-21', ids.map((subscriberId, i) => ({ subscriberId, providerMessageId: `msg-${10 + i}` })));

      const event = (svixId: string, type: string, providerMessageId: string | null) => store.recordEmailEvent({ svixId, type, providerMessageId, subscriberId: null, occurredAt: new Date() });
      // One message bounced twice (two deliveries of the webhook with their own ids), all old: counted once.
      await event('b1', 'email.bounced', 'msg-1');
      await event('b1-again', 'email.bounced', 'msg-1');
      // A complaint with an old and a new event: kept whole, until the newest is old too.
      await event('c2-old', 'email.complained', 'msg-2');
      await event('c2-new', 'email.complained', 'msg-2');
      await event('c12', 'email.complained', 'msg-12');
      await event('b13', 'email.bounced', 'msg-13');
      // Read by nothing: a message not in the ledger, another type, a message id a deletion forgot.
      await event('x1', 'email.bounced', 'not-ours');
      await event('d3', 'email.delivery_delayed', 'msg-3');
      await event('n1', 'email.bounced', null);
      await sql.query(`update public.email_events set received_at = now() - interval '100 days', occurred_at = now() - interval '100 days' where svix_id = any($1)`, [OLD]);

      // The outbox: one message in each closed state and two still open, all 100 days old; then a fresh one sent.
      const notice = (n: number) => store.enqueueMail('operator', null, { to: 'operator@retention.test', subject: `Notice ${n}`, text: 'text' });
      const [sent, failed, unknown, cancelled, retrying] = [await notice(1), await notice(2), await notice(3), await notice(4), await notice(5)];
      const claimed = await store.claimMail(10, 60);
      expect(claimed.map((m) => m.id)).toEqual([sent, failed, unknown, cancelled, retrying]);
      const claim = (id: string) => claimed.find((m) => m.id === id)!;
      await store.settleMail(claim(sent), { state: 'sent', providerId: 'p1' });
      await store.settleMail(claim(failed), { state: 'failed', error: 'refused' });
      await store.settleMail(claim(unknown), { state: 'unknown', error: 'very likely sent' });
      await store.settleMail(claim(cancelled), { state: 'cancelled', error: 'called off' });
      await store.settleMail(claim(retrying), { state: 'retrying', error: 'provider down', retrySeconds: 3600 });
      const queued = await notice(6);
      await sql.query(`update public.mail_outbox set created_at = now() - interval '100 days'`);
      const fresh = await notice(7);
      const freshClaim = (await store.claimMail(10, 60)).find((m) => m.id === fresh);
      await store.settleMail(freshClaim!, { state: 'sent', providerId: 'p7' });

      const before = await figures(store);
      expect(before.sends.map(({ recapDate, bounced, complained }) => ({ recapDate, bounced, complained }))).toEqual([
        { recapDate: '2025-07-21', bounced: 1, complained: 1 },
        { recapDate: '2025-07-14', bounced: 1, complained: 1 },
      ]);
      expect(before.outbox).toMatchObject({ sent: 1, queued: 0, retrying: 0 });

      const lines: string[] = [];
      const logger = capturingLogger(lines);
      const scheduler = startDigestScheduler({
        cron: '0 9 * * 1',
        timezone: 'UTC',
        freshnessDays: 7,
        retentionDays: 90,
        store,
        mailer: new OutboxMailer({ dir: mailDir, from: 'Launched Weekly <digest@launchedweekly.test>' }),
        recaps,
        siteUrl: 'http://localhost:3000',
        unsubscribeSecret: 'retention-test-secret-0123456789abcdef0123456789',
        logger,
        resumeInterrupted: false,
        // A Monday before any recap is public: the run sends nothing, so only the prune changes the database.
        clock: clockReading(() => new Date('2020-01-06T09:00:00Z')),
      });
      try {
        const nextHousekeeping = scheduler.nextHousekeeping();
        expect(nextHousekeeping!.getTime() - Date.now()).toBeLessThanOrEqual(24 * 3600_000);
        await scheduler.housekeepNow();
      } finally {
        await scheduler.stop();
      }
      expect(lines).toContain('Removed 4 outbox messages and 6 webhook events older than 90 days (RETENTION_DAYS)');

      expect(await figures(store)).toEqual(before);
      const events = await sql.query<{ svix_id: string }>('select svix_id from public.email_events order by svix_id');
      expect(events.rows.map((r) => r.svix_id)).toEqual(['b13', 'c2-new', 'c2-old']);
      const outbox = await sql.query<{ id: string; state: string }>('select id::text as id, state from public.mail_outbox order by id');
      expect(outbox.rows).toEqual([
        { id: retrying, state: 'retrying' },
        { id: queued, state: 'queued' },
        { id: fresh, state: 'sent' },
      ]);

      // A second run finds nothing more, and the counts kept are not added twice.
      expect(await store.pruneRetained(90)).toEqual({ outbox: 0, events: 0 });
      expect(await figures(store)).toEqual(before);
      // Once the complaint's newer event is old too, the message goes and is still counted once.
      await sql.query(`update public.email_events set received_at = now() - interval '100 days' where svix_id = 'c2-new'`);
      expect(await store.pruneRetained(90)).toEqual({ outbox: 0, events: 2 });
      expect(await figures(store)).toEqual(before);
    }, 60_000);
  });
}
