// Lists written before the merge of spellings (supabase/migrations/20261128001020_one_row_per_mailbox.sql),
// upgraded as an installation would be: the rows written on a database migrated up to just before
// it, then the rest applied. A confirmed reader stays active whatever a bot signed up later and
// the pending prune never deletes them; rows the first version of the merge demoted come back; a
// link mailed to a merged spelling still acts for its mailbox; and "download my data" and "delete
// my data" cover every spelling. On PGlite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, migrate, type Migration } from '../../server/store/migrate.ts';
import type { SqlClient } from '../../server/store/sql-client.ts';
import { sqlStore } from '../../server/store/sql-store.ts';
import { dataExport } from '../../server/subscribers/subscription-pages.ts';
import { createUnsubscribeToken } from '../../server/subscribers/signed-links.ts';
import { migrationKinds, type MigrationKind } from '../support/migration-kinds.ts';
import { rowsNaming } from '../support/rows-naming.ts';
import { startTestServer, TEST_UNSUBSCRIBE_SECRET } from '../support/server.ts';

const MERGE = '20261128001020';
const REPAIR = '20261130003010';
const id = (n: number) => `00000000-0000-4000-8000-0000000002${String(n).padStart(2, '0')}`;

let migrations: Migration[];
beforeAll(async () => {
  migrations = await loadMigrations();
});

/** A database migrated up to (not including) `version`, with `rows` written, then migrated to the end. */
async function upgraded(kind: MigrationKind, version: string, rows: string, work: (client: SqlClient) => Promise<void>): Promise<void> {
  const { client, drop } = await kind.create();
  try {
    await migrate(client, migrations.filter((m) => m.version < version));
    await client.exec(rows);
    await migrate(client);
    await work(client);
  } finally {
    await drop();
  }
}

const storeOn = (kind: MigrationKind, client: SqlClient) => sqlStore(kind.name === 'PGlite' ? 'pglite' : 'postgres', client);

/** Every date of every row moved `days` back, as if that long had passed. */
async function age(client: SqlClient, days: number): Promise<void> {
  const back = `- interval '${days} days'`;
  await client.exec(`update public.email_signups set created_at = created_at ${back}, confirmed_at = confirmed_at ${back},
    pending_since = pending_since ${back}, confirmation_sent_at = confirmation_sent_at ${back}, status_changed_at = status_changed_at ${back}`);
}

const listed = async (client: SqlClient) =>
  (await client.query<{ id: string; email: string; status: string; confirmed: boolean }>(
    'select id::text, email, status, confirmed_at is not null as confirmed from public.email_signups order by email',
  )).rows;

for (const kind of migrationKinds) {
  describe.skipIf(!kind.available)(`Spellings merged into one row on ${kind.name}`, () => {
    it('a confirmed reader and a bot’s later, never confirmed spelling merge into one active, confirmed row, which the pending prune leaves', async () => {
      const rows = `insert into public.email_signups (id, email, created_at, confirmed_at, pending_since, signup_ip_hash) values
        ('${id(1)}', 'alice@gmail.com', '2026-09-30T10:00:00Z', '2026-10-01T10:00:00Z', null, 'net-alice'),
        ('${id(2)}', 'a.lice@gmail.com', '2026-11-20T10:00:00Z', null, '2026-11-20T10:00:00Z', 'net-bot');`;
      await upgraded(kind, MERGE, rows, async (client) => {
        expect(await listed(client)).toEqual([{ id: id(1), email: 'alice@gmail.com', status: 'active', confirmed: true }]);
        await age(client, 60);
        expect(await storeOn(kind, client).prunePending(30)).toBe(0);
        expect(await listed(client)).toEqual([{ id: id(1), email: 'alice@gmail.com', status: 'active', confirmed: true }]);
      });
    });

    it('a row the first merge demoted to pending goes back to its state before; the prune deletes no row ever confirmed, and still deletes a stranger’s', async () => {
      // As the first merge left them: alice confirmed and active, made pending by a.lice's
      // pending_since (the state history records the change); bob confirmed, left, and asked to come
      // back (pending, awaiting his new confirmation); a stranger's signup nobody confirmed.
      const rows = `insert into public.email_signups (id, email, created_at, confirmed_at, signup_ip_hash) values
          ('${id(1)}', 'alice@gmail.com', now() - interval '60 days', now() - interval '59 days', 'net-alice');
        insert into public.email_signups_merged (id, merged_into, original) values
          ('${id(2)}', '${id(1)}', jsonb_build_object('email', 'a.lice@gmail.com', 'pending_since', '2026-11-20T10:00:00+00:00', 'confirmed_at', null));
        update public.email_signups set pending_since = '2026-11-20T10:00:00+00:00' where id = '${id(1)}';
        insert into public.email_signups (id, email, created_at, confirmed_at, pending_since) values
          ('${id(3)}', 'bob@example.org', now() - interval '90 days', now() - interval '89 days', now() - interval '60 days'),
          ('${id(4)}', 'stranger@example.org', now() - interval '60 days', null, now() - interval '60 days');`;
      await upgraded(kind, REPAIR, rows, async (client) => {
        expect(await listed(client)).toEqual([
          { id: id(1), email: 'alice@gmail.com', status: 'active', confirmed: true },
          { id: id(3), email: 'bob@example.org', status: 'pending', confirmed: true },
          { id: id(4), email: 'stranger@example.org', status: 'pending', confirmed: false },
        ]);
        expect(await storeOn(kind, client).prunePending(30)).toBe(1);
        expect((await listed(client)).map((row) => row.email)).toEqual(['alice@gmail.com', 'bob@example.org']);
      });
    });

    describe('a mailbox whose two spellings were merged', () => {
      // pat@ confirmed first (kept); pat+news@ signed up later from another network and was sent
      // the 2025-06-30 recap too (a delivery the kept row already had, so it stays with the spelling).
      const rows = `insert into public.email_signups (id, email, created_at, confirmed_at, signup_ip_hash, confirm_ip_hash) values
          ('${id(1)}', 'pat@example.org', '2025-01-01T00:00:00Z', '2025-01-01T01:00:00Z', 'net-pat', 'net-pat-confirm'),
          ('${id(2)}', 'pat+news@example.org', '2025-03-01T00:00:00Z', null, 'net-news', null);
        insert into public.digest_deliveries (recap_date, subscriber_id, sent_at) values
          ('2025-06-30', '${id(1)}', '2025-06-30T09:00:00Z'), ('2025-06-30', '${id(2)}', '2025-06-30T09:00:01Z'), ('2025-07-07', '${id(2)}', '2025-07-07T09:00:00Z');
        insert into public.digest_contents (content_hash, recap_date, sender, site_url, secret_fingerprint, subject, html, body_text)
          values ('c1', '2025-07-07', 'digest@launchedweekly.test', 'https://launchedweekly.test', 'f', 's', 'h', 't');
        insert into public.digest_runs (kind, started_at, message) values ('scheduled', '2025-07-07T09:00:00Z', 'refused: pat+news@example.org');
        insert into public.digest_batches (recap_date, sequence, idempotency_key, subscriber_ids, content_hash, state, failure, run_id, created_at)
          select '2025-07-07', 1, 'k1', array['${id(2)}'], 'c1', 'failed', '{"message": "pat+news@example.org rejected"}', max(r.id), '2025-07-07T09:00:00Z' from public.digest_runs r;`;
      let server: Awaited<ReturnType<typeof startTestServer>> | undefined;
      afterAll(async () => {
        await server?.close();
      });

      it('last week’s one-click unsubscribe of the merged spelling unsubscribes the mailbox', async () => {
        await upgraded(kind, MERGE, rows, async (client) => {
          server = await startTestServer({ store: storeOn(kind, client) });
          const token = createUnsubscribeToken(id(2), TEST_UNSUBSCRIBE_SECRET);
          const page = await fetch(`${server.url}/unsubscribe?token=${encodeURIComponent(token)}`);
          expect(page.status).toBe(200);
          expect(await page.text()).toContain('Unsubscribe from Launched Weekly?');
          const oneClick = await fetch(`${server.url}/unsubscribe?token=${encodeURIComponent(token)}`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: 'List-Unsubscribe=One-Click',
          });
          expect(oneClick.status).toBe(200);
          expect(await oneClick.text()).toContain('You are unsubscribed');
          expect(await listed(client)).toEqual([{ id: id(1), email: 'pat@example.org', status: 'unsubscribed', confirmed: true }]);
          await server.close();
          server = undefined;
        });
      });

      it('“download my data” holds every spelling with its network hashes and deliveries; “delete my data” leaves nothing of any', async () => {
        await upgraded(kind, MERGE, rows, async (client) => {
          const store = storeOn(kind, client);
          const exported = dataExport((await store.subscriberDetails(id(1)))!);
          expect(exported.address).toBe('pat@example.org');
          expect(exported.recapsSent.map((r) => r.recap)).toEqual(['2025-06-30', '2025-07-07']);
          expect(exported.otherSpellings).toEqual([
            expect.objectContaining({
              address: 'pat+news@example.org',
              firstSignupAt: '2025-03-01T00:00:00.000Z',
              signupNetworkAddressHash: 'net-news',
              recapsSent: [expect.objectContaining({ recap: '2025-06-30', sentAt: '2025-06-30T09:00:01.000Z' })],
            }),
          ]);
          // The merged spelling's id finds the same export.
          expect(dataExport((await store.subscriberDetails(id(2)))!).otherSpellings).toHaveLength(1);

          expect(await store.deleteSubscriber(id(1), 'mailbox-hash-of-pat')).toBe('active');
          expect(await rowsNaming(client, ['pat@example.org', 'pat+news@example.org', id(1), id(2), 'net-news', 'net-pat'])).toEqual([]);
        });
      });
    });
  });
}
