// supabase/migrations on the three kinds of database they meet: a fresh one, the old site's
// Supabase table with its rows, and one that was already migrated (by us, or by the Supabase CLI,
// which records elsewhere, so every file may run twice).
import { PGlite } from '@electric-sql/pglite';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, migrate, MigrationLockTimeoutError, pendingMigrations, type Migration } from '../../server/store/migrate.ts';
import { openPGliteStore } from '../../server/store/pglite.ts';
import { createPgClient, openPostgresStore } from '../../server/store/postgres.ts';
import type { SqlClient, SqlExecutor } from '../../server/store/sql-client.ts';
import { recaps } from '../../content/index.ts';
import { runWeeklyDigest } from '../../server/mail/digest/run.ts';
import { OutboxMailer } from '../../server/mail/outbox.ts';
import { sqlStore } from '../../server/store/sql-store.ts';
import { readOutbox } from '../support/outbox.ts';
import { createTestDatabase, postgresUrl } from '../support/postgres.ts';
import { migrationKinds, type MigrationKind } from '../support/migration-kinds.ts';
import { weekStartSql } from '../support/report-weeks.ts';
import { pgliteClient } from '../support/sql-backends.ts';
import { createSupabaseRoles } from '../support/supabase-roles.ts';
import { addSignup, listActiveSubscribers } from '../support/store-ops.ts';

const OLD_TABLE = `
create table public.email_signups (
  id uuid primary key default gen_random_uuid(),
  email text unique,
  created_at timestamptz default now()
);
insert into public.email_signups (email, created_at) values
  ('early@example.com', '2025-02-03T10:00:00Z'),
  ('fan@example.com', '2025-03-15T18:30:00Z'),
  ('last@example.com', '2025-07-01T08:05:00Z');`;

/** Everything a migration could change: structure, grants, policies, functions, and the data. */
async function snapshot(client: SqlExecutor): Promise<string> {
  const parts = await Promise.all([
    client.query(`select table_name, column_name, data_type, is_nullable, column_default from information_schema.columns
                  where table_schema = 'public' order by table_name, column_name`),
    client.query(`select indexname, indexdef from pg_indexes where schemaname = 'public' order by indexname`),
    client.query(`select conrelid::regclass::text as tbl, conname, pg_get_constraintdef(oid) as def from pg_constraint
                  where connamespace = 'public'::regnamespace order by 1, 2`),
    client.query(`select tablename, policyname, cmd, roles::text, qual, with_check from pg_policies where schemaname = 'public' order by 1, 2`),
    client.query(`select relname, relrowsecurity, coalesce(relacl::text, '') as acl from pg_class
                  where relnamespace = 'public'::regnamespace and relkind = 'r' order by relname`),
    client.query(`select proname, md5(pg_get_functiondef(oid)) as body, coalesce(proacl::text, '') as acl from pg_proc
                  where pronamespace = 'public'::regnamespace order by proname`),
    client.query(`select id::text, email, created_at, source, unsubscribed_at, unsubscribe_reason, resubscribed_at
                  from public.email_signups order by email`),
    client.query(`select version, name, applied_at from public.app_migrations order by version`),
  ]);
  return JSON.stringify(parts.map((part) => part.rows));
}

/** Runs `work` on a fresh raw database of `kind` (with Supabase's API roles when asked), and drops it afterwards whatever happened. */
async function onFreshDatabase(kind: MigrationKind, work: (client: SqlClient) => Promise<void>, { roles = false } = {}): Promise<void> {
  const { client, drop } = await kind.create(roles);
  try {
    await work(client);
  } finally {
    await drop();
  }
}

/** Runs `work` on a fresh, fully migrated PostgreSQL database over two connections: one that migrates, one that holds locks. */
async function withMigratedAndReader(work: (client: SqlClient, reader: SqlClient) => Promise<void>): Promise<void> {
  const db = await createTestDatabase({ from: 'empty' });
  const client = createPgClient(db.url, { max: 1 });
  const reader = createPgClient(db.url, { max: 1 });
  try {
    await migrate(client);
    await work(client, reader);
  } finally {
    await reader.close();
    await client.close();
    await db.drop();
  }
}

/** Runs `sql` in a transaction on `reader` that stays open, as another session's would; resolves once it holds, with a function that ends it. */
async function holdInTransaction(reader: SqlClient, sql: string): Promise<() => Promise<void>> {
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  let holding!: () => void;
  const held = new Promise<void>((resolve) => (holding = resolve));
  const transaction = reader.transaction(async (tx) => {
    await tx.query(sql);
    holding();
    await finished;
  });
  await held;
  return async () => {
    finish();
    await transaction;
  };
}

let migrations: Migration[];
beforeAll(async () => {
  migrations = await loadMigrations();
});

/** Every table of the schema, in name order. */
const PUBLIC_TABLES = [
  'app_keys',
  'app_migrations',
  'digest_batches',
  'digest_contents',
  'digest_deliveries',
  'digest_locks',
  'digest_recap_sends',
  'digest_runs',
  'digest_schedule_starts',
  'digest_tick_claims',
  'digest_ticks',
  'email_engagement',
  'email_engagement_receipts',
  'email_event_counts',
  'email_events',
  'email_signups',
  'email_signups_merged',
  'link_click_window',
  'link_clicks',
  'mail_outbox',
  'mail_sender_hold',
  'mailbox_confirmations',
  'notice_webhooks',
  'referral_settings',
  'server_notices',
  'signup_rate_limits',
  'subscriber_link_uses',
  'subscriber_state_history',
  'subscriber_suppressions',
];

/** Every function of the schema, in name order: a function added by a migration joins this list. */
const PUBLIC_FUNCTIONS = [
  'acquire_digest_lock',
  'acquire_digest_lock_at',
  'activate_subscriber',
  'activate_subscriber_welcome',
  'claim_welcome',
  'confirm_subscriber_link',
  'count_digest_recap_sends',
  'count_subscribers',
  'delete_subscriber',
  'delete_subscriber_by_link',
  'digest_batch',
  'digest_batch_attempt',
  'digest_begin_tick',
  'digest_claim_tick',
  'digest_content',
  'digest_count_deliveries',
  'digest_delivered_to',
  'digest_end_tick',
  'digest_end_tick_with_notice',
  'digest_finish_run',
  'digest_mark_unknown',
  'digest_open_batches',
  'digest_recent_runs',
  'digest_recipients',
  'digest_record_deliveries',
  'digest_record_missed_tick',
  'digest_record_missed_tick_with_notice',
  'digest_record_schedule_start',
  'digest_renew_tick',
  'digest_save_content',
  'digest_schedule_in_force',
  'digest_settle_batch',
  'digest_start_run',
  'digest_ticks_since',
  'digest_undelivered',
  'digest_write_batch',
  'email_signups_bump_link_version',
  'email_signups_first_active',
  'email_signups_normalise_email',
  'forget_deleted_subscribers',
  'forget_merged_signups',
  'import_subscribers',
  'list_subscribers',
  'mailbox_hash_key',
  'mailbox_key',
  'mark_subscriber_left',
  'metrics_snapshot',
  'new_share_code',
  'notice_webhook_claim',
  'notice_webhook_enqueue',
  'notice_webhook_from_outbox',
  'notice_webhook_settle',
  'operator_notice_enqueue',
  'outbox_claim',
  'outbox_enqueue',
  'outbox_from_signup',
  'outbox_hold_sender',
  'outbox_hold_sender_with_notice',
  'outbox_recent',
  'outbox_release_sender',
  'outbox_settle',
  'prune_link_click_window',
  'prune_pending_subscribers',
  'prune_pending_subscribers_batch',
  'prune_retained',
  'prune_retained_batch',
  'record_email_engagement',
  'record_email_event',
  'record_link_click',
  'record_subscriber_states',
  'referral_credit',
  'referral_set_milestones',
  'release_confirmation',
  'release_digest_lock',
  'replace_share_code',
  'report_engagement',
  'report_growth',
  'report_snapshot',
  'request_subscriber_link',
  'resubscribe_by_owner',
  'scrub_failure',
  'server_notice_clear',
  'server_notice_record',
  'server_notices',
  'share_code_known',
  'signup_counted',
  'signup_decide',
  'signup_rate_limit_hit',
  'subscriber_by_email',
  'subscriber_by_id',
  'subscriber_current_id',
  'subscriber_details',
  'subscriber_json',
  'subscriber_link_state',
  'subscriber_link_target',
  'suppress_mailbox',
  'use_subscriber_link',
];

const kinds = migrationKinds;

for (const kind of kinds) {
  describe.skipIf(!kind.available)(`Migrations on ${kind.name}`, () => {
    freshAndOldSiteTables(kind);
    caseMerges(kind);
    mailboxMerge(kind);
    upgradesAndReruns(kind);
  });
}

/** A fresh database gets the whole schema; the old site's table is adopted with its rows. */
function freshAndOldSiteTables(kind: MigrationKind) {
  it('apply every file to a fresh database and record each one', async () => {
    await onFreshDatabase(kind, async (client) => {
      expect(await pendingMigrations(client)).toEqual(migrations.map((m) => m.version));
      expect(await migrate(client)).toEqual(migrations.map((m) => m.version));
      const recorded = await client.query<{ version: string; name: string }>('select version, name from public.app_migrations order by version');
      expect(recorded.rows).toEqual(migrations.map(({ version, name }) => ({ version, name })));
      expect(await pendingMigrations(client)).toEqual([]);
      const tables = await client.query<{ relname: string; relrowsecurity: boolean }>(
        `select relname, relrowsecurity from pg_class where relnamespace = 'public'::regnamespace and relkind = 'r' order by relname`,
      );
      // Row-level security on every table: the public API keys reach none of them directly.
      expect(tables.rows).toEqual(PUBLIC_TABLES.map((relname) => ({ relname, relrowsecurity: true })));
      const functions = await client.query<{ proname: string }>(`select proname from pg_proc where pronamespace = 'public'::regnamespace order by 1`);
      expect(functions.rows.map((r) => r.proname).sort()).toEqual(PUBLIC_FUNCTIONS);
    });
  });

  it("adopt the old site's table: rows kept, active, with the new columns", async () => {
    await onFreshDatabase(kind, async (client) => {
      await client.exec(OLD_TABLE);
      const before = await client.query<{ id: string; email: string; created_at: Date }>('select id::text, email, created_at from public.email_signups order by email');
      expect(await migrate(client)).toHaveLength(migrations.length);

      const after = await client.query<{ id: string; email: string; created_at: Date; source: string | null; unsubscribed_at: Date | null }>(
        'select id::text, email, created_at, source, unsubscribed_at from public.email_signups order by email',
      );
      expect(after.rows.map(({ id, email, created_at }) => ({ id, email, created_at }))).toEqual(before.rows);
      expect(after.rows.every((row) => row.source === null && row.unsubscribed_at === null)).toBe(true);
      const columns = await client.query<{ column_name: string }>(
        `select column_name from information_schema.columns where table_schema = 'public' and table_name = 'email_signups' order by ordinal_position`,
      );
      expect(columns.rows.map((c) => c.column_name)).toEqual([
        'id',
        'email',
        'created_at',
        'source',
        'unsubscribed_at',
        'unsubscribe_reason',
        'resubscribed_at',
        'pending_since',
        'status_changed_at',
        'confirmed_at',
        'signup_ip_hash',
        'confirm_ip_hash',
        'confirmation_sent_at',
        'welcomed_at',
        'status',
        'link_version',
        'mailbox',
        'origin_page',
        'origin_ref',
        'origin_utm_source',
        'origin_utm_medium',
        'origin_utm_campaign',
        'share_code',
        'referred_by',
        'via_share',
        'first_active_at',
        'referral_thanked',
      ]);
      const states = await client.query<{ status: string; status_changed_at: Date }>('select status, status_changed_at from public.email_signups order by email');
      expect(states.rows.map((row) => row.status)).toEqual(['active', 'active', 'active']);
      expect(states.rows.map((row) => row.status_changed_at)).toEqual(before.rows.map((row) => row.created_at));
      // The old unique constraint is what the signup relies on; no second index is added beside it.
      const unique = await client.query<{ indexname: string }>(
        `select indexname from pg_indexes where schemaname = 'public' and tablename = 'email_signups' and indexdef ilike '%unique%(email)%'`,
      );
      expect(unique.rows.map((r) => r.indexname)).toEqual(['email_signups_email_key']);
    });
  });
}

/** The old site's table with `values` as its rows and no unique key on the address, taken up to just before addresses were normalised. */
async function oldRowsBeforeNormalising(client: SqlClient, values: string): Promise<void> {
  await client.exec(`create table public.email_signups (id uuid primary key default gen_random_uuid(), email text, created_at timestamptz default now());
    insert into public.email_signups (id, email, created_at) values ${values};`);
  await migrate(client, migrations.filter((m) => m.version < '20261123000100'));
}

interface SignupRow {
  id: string;
  email: string;
  status: string;
  created_at: Date;
}

/** Every row's id, address, state and signup time, in address order: what a merge of old rows leaves. */
async function signupsByEmail(client: SqlClient): Promise<SignupRow[]> {
  return (await client.query<SignupRow>('select id::text, email, status, created_at from public.email_signups order by email')).rows;
}

/** Old rows whose addresses differ only in case or spaces become one row each. */
function caseMerges(kind: MigrationKind) {
  it('normalise old addresses and merge rows that differ only in case, keeping the stricter state and every ledger row', async () => {
    await onFreshDatabase(kind, async (client) => {
      // As the old site could leave it: no unique key on the address, capitals and spaces kept.
      await oldRowsBeforeNormalising(client, `
          ('00000000-0000-4000-8000-000000000001', 'Pat@Example.com', '2025-03-01T00:00:00Z'),
          ('00000000-0000-4000-8000-000000000002', ' pat@example.com', '2025-02-01T00:00:00Z'),
          ('00000000-0000-4000-8000-000000000003', 'PAT@EXAMPLE.COM', '2025-04-01T00:00:00Z'),
          ('00000000-0000-4000-8000-000000000004', 'Solo@Example.com ', '2025-05-01T00:00:00Z')`);
      // One copy complained, one received two recaps, another the second of them too.
      await client.exec(`update public.email_signups set unsubscribed_at = '2025-05-05T00:00:00Z', unsubscribe_reason = 'complained'
                           where id = '00000000-0000-4000-8000-000000000003';
        insert into public.digest_deliveries (recap_date, subscriber_id) values
          ('2025-07-07', '00000000-0000-4000-8000-000000000001'), ('2025-07-14', '00000000-0000-4000-8000-000000000001'),
          ('2025-07-14', '00000000-0000-4000-8000-000000000002');`);
      await migrate(client);
      expect(await signupsByEmail(client)).toEqual([
        { id: '00000000-0000-4000-8000-000000000003', email: 'pat@example.com', status: 'complained', created_at: new Date('2025-02-01T00:00:00Z') },
        { id: '00000000-0000-4000-8000-000000000004', email: 'solo@example.com', status: 'active', created_at: new Date('2025-05-01T00:00:00Z') },
      ]);
      const ledger = await client.query<{ recap_date: string; subscriber_id: string }>(
        "select to_char(recap_date, 'YYYY-MM-DD') as recap_date, subscriber_id from public.digest_deliveries order by 1",
      );
      expect(ledger.rows).toEqual([
        { recap_date: '2025-07-07', subscriber_id: '00000000-0000-4000-8000-000000000003' },
        { recap_date: '2025-07-14', subscriber_id: '00000000-0000-4000-8000-000000000003' },
      ]);
      // From now on the database itself stores every address normalised, whoever writes it.
      await client.exec(`insert into public.email_signups (email) values ('  New.Reader@Example.COM')`);
      const added = await client.query<{ email: string }>("select email from public.email_signups where email like 'new%'");
      expect(added.rows).toEqual([{ email: 'new.reader@example.com' }]);
    });
  });

  it('merge rows that differ only in case into the most recent intent: a later active signup beats an older unsubscribe', async () => {
    await onFreshDatabase(kind, async (client) => {
      await oldRowsBeforeNormalising(client, `
          ('00000000-0000-4000-8000-00000000000a', 'Foo@x.com', '2025-01-01T00:00:00Z'),
          ('00000000-0000-4000-8000-00000000000b', 'foo@x.com', '2025-06-01T00:00:00Z'),
          ('00000000-0000-4000-8000-00000000000c', 'Bar@x.com', '2025-01-01T00:00:00Z'),
          ('00000000-0000-4000-8000-00000000000d', 'bar@x.com', '2025-02-01T00:00:00Z')`);
      // Foo left in February, then signed up again as foo in June: the June intent (active) wins.
      // bar signed up in February and its older Bar copy unsubscribed in May: unsubscribed wins.
      await client.exec(`update public.email_signups set unsubscribed_at = '2025-02-01T00:00:00Z', unsubscribe_reason = 'unsubscribed'
                           where id = '00000000-0000-4000-8000-00000000000a';
                         update public.email_signups set unsubscribed_at = '2025-05-01T00:00:00Z', unsubscribe_reason = 'unsubscribed'
                           where id = '00000000-0000-4000-8000-00000000000c';`);
      await migrate(client);
      expect(await signupsByEmail(client)).toEqual([
        { id: '00000000-0000-4000-8000-00000000000c', email: 'bar@x.com', status: 'unsubscribed', created_at: new Date('2025-01-01T00:00:00Z') },
        { id: '00000000-0000-4000-8000-00000000000b', email: 'foo@x.com', status: 'active', created_at: new Date('2025-01-01T00:00:00Z') },
      ]);
    });
  });
}

/** Spellings of one mailbox become one row, and the next digest sends that mailbox one copy. */
function mailboxMerge(kind: MigrationKind) {
  it('merge the spellings of one mailbox into one row: a complaint on any row wins, else the most recent intent; histories kept; the next digest sends the active inbox one copy', async () => {
    await onFreshDatabase(kind, async (client) => {
      await migrate(client, migrations.filter((m) => m.version < '20261128001020'));
      const id = (n: number) => `00000000-0000-4000-8000-0000000001${String(n).padStart(2, '0')}`;
      // pat: one spelling active, the other complained. lee: one spelling unsubscribed long ago, the other active since.
      await client.exec(`insert into public.email_signups (id, email, created_at, confirmed_at, unsubscribed_at, unsubscribe_reason, signup_ip_hash) values
          ('${id(1)}', 'pat.probe@gmail.com', '2025-01-01T00:00:00Z', null, null, null, 'net-pat-1'),
          ('${id(2)}', 'patprobe+news@googlemail.com', '2025-02-01T00:00:00Z', null, '2025-03-01T00:00:00Z', 'complained', 'net-pat-2'),
          ('${id(3)}', 'lee@example.org', '2024-01-01T00:00:00Z', null, '2024-02-01T00:00:00Z', 'unsubscribed', 'net-lee-3'),
          ('${id(4)}', 'lee+weekly@example.org', '2025-05-01T00:00:00Z', null, null, null, 'net-lee-4');
        insert into public.digest_deliveries (recap_date, subscriber_id) values
          ('2025-06-30', '${id(1)}'), ('2025-06-30', '${id(2)}'), ('2025-07-07', '${id(4)}'), ('2024-01-22', '${id(3)}');`);
      const history = await client.query<{ subscriber_id: string; n: number }>('select subscriber_id, count(*)::int as n from public.subscriber_state_history group by 1 order by 1');
      await migrate(client);

      const rows = await client.query<{ id: string; email: string; status: string }>('select id::text, email, status from public.email_signups order by email');
      expect(rows.rows).toEqual([
        { id: id(3), email: 'lee@example.org', status: 'active' },
        { id: id(1), email: 'pat.probe@gmail.com', status: 'complained' },
      ]);
      // Every row kept as it was, with the delivery the kept row already had for that recap.
      const merged = await client.query<{ id: string; merged_into: string; email: string; signup_ip_hash: string; deliveries: unknown[] }>(
        "select id, merged_into, original->>'email' as email, original->>'signup_ip_hash' as signup_ip_hash, original->'deliveries' as deliveries from public.email_signups_merged order by id",
      );
      expect(merged.rows.map(({ id: mergedId, merged_into, email, signup_ip_hash, deliveries }) => [mergedId, merged_into, email, signup_ip_hash, deliveries.length])).toEqual([
        [id(2), id(1), 'patprobe+news@googlemail.com', 'net-pat-2', 1],
        [id(4), id(3), 'lee+weekly@example.org', 'net-lee-4', 0],
      ]);
      const ledger = await client.query<{ recap_date: string; subscriber_id: string }>(
        "select to_char(recap_date, 'YYYY-MM-DD') as recap_date, subscriber_id from public.digest_deliveries order by 1, 2",
      );
      expect(ledger.rows).toEqual([
        { recap_date: '2024-01-22', subscriber_id: id(3) },
        { recap_date: '2025-06-30', subscriber_id: id(1) },
        { recap_date: '2025-07-07', subscriber_id: id(3) },
      ]);
      // The state history of both spellings now belongs to the kept row (and the merge's own change is added).
      const after = await client.query<{ subscriber_id: string; n: number }>('select subscriber_id, count(*)::int as n from public.subscriber_state_history group by 1 order by 1');
      const before = new Map(history.rows.map((row) => [row.subscriber_id, row.n]));
      expect(after.rows.map((row) => row.subscriber_id)).toEqual([id(1), id(3)]);
      expect(after.rows[0]!.n).toBeGreaterThanOrEqual(before.get(id(1))! + before.get(id(2))!);
      expect(after.rows[1]!.n).toBeGreaterThanOrEqual(before.get(id(3))! + before.get(id(4))!);
      // It cannot recur: another spelling of a mailbox on the list is refused by the unique index.
      await expect(client.query("insert into public.email_signups (email) values ('p.a.t.probe@gmail.com')")).rejects.toMatchObject({ code: '23505' });
      // The next digest, run as Monday's job runs it: the active mailbox gets one copy, at the address kept; the complainer none.
      const digestOutbox = await mkdtemp(join(tmpdir(), 'lw-merged-digest-'));
      try {
        const report = await runWeeklyDigest({
          store: sqlStore(kind.name === 'PGlite' ? 'pglite' : 'postgres', client),
          mailer: new OutboxMailer({ dir: digestOutbox, from: 'Launched Weekly <digest@launchedweekly.test>' }),
          recaps,
          now: new Date('2025-07-15T09:00:00Z'),
          siteUrl: 'https://launchedweekly.test',
          unsubscribeSecret: 'merged-mailbox-test-secret-0123456789abcdef',
          mode: 'scheduled',
          freshnessDays: 7,
        });
        expect(report.sent).toBe(1);
        expect((await readOutbox(digestOutbox)).map((eml) => eml.to)).toEqual(['lee@example.org']);
      } finally {
        await rm(digestOutbox, { recursive: true, force: true });
      }
    });
  });
}

/** Later files on data an earlier schema left, and every file applied a second time. */
function upgradesAndReruns(kind: MigrationKind) {
  it('give an old table without a unique e-mail the unique index signup relies on', async () => {
    await onFreshDatabase(kind, async (client) => {
      await client.exec(`create table public.email_signups (id uuid primary key default gen_random_uuid(), email text not null, created_at timestamptz not null default now());
                         insert into public.email_signups (email) values ('one@example.com'), ('two@example.com');`);
      await migrate(client);
      await expect(client.query("insert into public.email_signups (email) values ('one@example.com')")).rejects.toMatchObject({ code: '23505' });
    });
  });

  it('give an existing state history the states its rows left, and the same report as before', async () => {
    await onFreshDatabase(kind, async (client) => {
      await migrate(client, migrations.filter((m) => m.version < '20261126004010'));
      // Four subscribers over four weeks: one stays, one leaves and comes back, one leaves for
      // good, one is deleted; two recaps went out.
      await client.exec(`insert into public.email_signups (email) values ('stay@m.test'), ('back@m.test'), ('left@m.test'), ('gone@m.test');
        update public.subscriber_state_history set changed_at = ${weekStartSql(3)};
        update public.email_signups set unsubscribed_at = now(), unsubscribe_reason = 'unsubscribed' where email in ('back@m.test', 'left@m.test');
        update public.subscriber_state_history set changed_at = ${weekStartSql(2)} where state = 'unsubscribed';
        update public.email_signups set unsubscribed_at = null, unsubscribe_reason = null where email = 'back@m.test';
        insert into public.digest_deliveries (recap_date, subscriber_id, sent_at)
          select d, id::text, d::timestamptz + interval '9 hours' from public.email_signups, (values (date '2025-07-07'), (date '2025-07-14')) r(d);
        delete from public.email_signups where email = 'gone@m.test';
        update public.subscriber_state_history set changed_at = ${weekStartSql(1)} where changed_at > ${weekStartSql(1)};`);
      const report = async () => (await client.query<{ report: unknown }>(`select public.report_snapshot(52) - 'generatedAt' as report`)).rows[0]!.report;
      const before = await report();
      expect(before).toMatchObject({
        weeks: [
          { states: { active: 4 }, signups: 4 },
          { states: { active: 2, unsubscribed: 2 }, signups: 0 },
          { states: { active: 2, unsubscribed: 1 }, signups: 0 },
          { states: { active: 2, unsubscribed: 1 }, signups: 0 },
        ],
        sends: [{ recapDate: '2025-07-14', sent: 3 }, { recapDate: '2025-07-07', sent: 3 }],
      });

      await migrate(client);
      expect(await report()).toEqual(before);
      const moves = await client.query<{ state: string; from_state: string | null; n: number }>(
        'select state, from_state, count(*)::int as n from public.subscriber_state_history group by 1, 2 order by 1, 2',
      );
      expect(moves.rows).toEqual([
        { state: 'active', from_state: 'unsubscribed', n: 1 },
        { state: 'active', from_state: null, n: 4 },
        { state: 'deleted', from_state: 'active', n: 1 },
        { state: 'unsubscribed', from_state: 'active', n: 2 },
      ]);
    });
  });

  it('change nothing when applied again, by the ledger or by running every file once more', async () => {
    await onFreshDatabase(kind, async (client) => {
      await client.exec(OLD_TABLE);
      await migrate(client);
      const once = await snapshot(client);
      expect(await migrate(client)).toEqual([]);
      expect(await snapshot(client)).toBe(once);
      // As after `supabase db push` followed by `npm run db:migrate` on a project whose ledger is empty.
      for (const migration of migrations) await client.exec(migration.sql);
      expect(await snapshot(client)).toBe(once);
    }, { roles: true });
  });
}

describe.skipIf(postgresUrl === null)('A migration that cannot lock a busy table', () => {
  it('gives up after lock_timeout with "table busy, try again", applies nothing, and succeeds once the table is free', async () => {
    await withMigratedAndReader(async (client, reader) => {
      const extra: Migration = { version: '29991231000000', name: 'extra_column', sql: 'alter table public.email_signups add column extra text;' };
      // A long transaction that read the table: ALTER TABLE has to wait for it.
      const release = await holdInTransaction(reader, 'select count(*) from public.email_signups');
      const started = Date.now();
      const error = await migrate(client, [...migrations, extra], { lockTimeoutMs: 300 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MigrationLockTimeoutError);
      expect((error as Error).message).toContain('Migration 29991231000000 could not lock a table within 0.3 s: the table is busy, try again.');
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await pendingMigrations(client, [...migrations, extra])).toEqual(['29991231000000']);
      await release();
      expect(await migrate(client, [...migrations, extra], { lockTimeoutMs: 300 })).toEqual(['29991231000000']);
    });
  });
});

describe.skipIf(postgresUrl === null)('A restart on an up-to-date database', () => {
  it('only reads the ledger: a session holding the ledger table does not hold it up', async () => {
    await withMigratedAndReader(async (client, reader) => {
      // Share mode lets the ledger be read but not altered (the path that applies files does both).
      const release = await holdInTransaction(reader, 'lock table public.app_migrations in share mode');
      expect(await migrate(client, migrations, { lockTimeoutMs: 300 })).toEqual([]);
      await release();
    });
  });
});

describe('The embedded store opens an old data directory', () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'launched-weekly-migrate-'));
  });

  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('migrates the old table on open and treats its rows as subscribers', async () => {
    const raw = new PGlite(join(dataDir, 'db'));
    await raw.exec(OLD_TABLE);
    await raw.close();
    const store = await openPGliteStore(dataDir);
    try {
      expect(await store.countSubscribers()).toMatchObject({ active: 3, inactive: 0 });
      expect(await addSignup(store, 'fan@example.com', '/')).toBe('already_subscribed');
      expect((await store.findSubscriberByEmail('early@example.com'))?.createdAt.toISOString()).toBe('2025-02-03T10:00:00.000Z');
      await expect(store.checkReady()).resolves.toBeUndefined();
    } finally {
      await store.close();
    }
  });
});

describe.skipIf(!postgresUrl)('The Postgres store opens an old database', () => {
  it('migrates the old table on open and lists its rows for sending', async () => {
    const db = await createTestDatabase({ from: 'empty' });
    const admin = createPgClient(db.url, { max: 1 });
    await admin.exec(OLD_TABLE);
    await admin.close();
    const store = await openPostgresStore(db.url, { max: 2 });
    try {
      const page = await listActiveSubscribers(store, null, 10);
      expect(page.map((s) => s.email).sort()).toEqual(['early@example.com', 'fan@example.com', 'last@example.com']);
      expect(await addSignup(store, 'new@example.com', '/')).toBe('subscribed');
    } finally {
      await store.close();
      await db.drop();
    }
  });
});

describe.skipIf(!postgresUrl)('npm run db:migrate', () => {
  const runMigrate = (env: Record<string, string>) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', 'bin/migrate.ts'],
        { cwd: fileURLToPath(new URL('../..', import.meta.url)), env: { PATH: process.env.PATH, NODE_ENV: 'test', DATA_DIR: tmpdir(), ...env }, timeout: 60_000 },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });

  it('applies the migrations to DATABASE_URL, even beside the Supabase settings, then finds nothing to do', async () => {
    const db = await createTestDatabase({ from: 'empty' });
    try {
      await createSupabaseRoles(db.url);
      const supabase = { SUPABASE_URL: 'https://abcd1234.supabase.co', SUPABASE_ANON_KEY: 'a', SUPABASE_SERVICE_ROLE_KEY: 'b' };
      const first = await runMigrate({ DATABASE_URL: db.url, ...supabase });
      expect(first.code).toBe(0);
      expect(first.stdout).toContain(`Applied ${migrations.length} of ${migrations.length} migrations`);
      const second = await runMigrate({ DATABASE_URL: db.url });
      expect(second).toMatchObject({ code: 0 });
      expect(second.stdout).toContain(`is up to date (${migrations.length} migrations)`);

      const onlySupabase = await runMigrate(supabase);
      expect(onlySupabase.code).toBe(1);
      expect(onlySupabase.stderr).toContain('Run this command with DATABASE_URL set to the project');
    } finally {
      await db.drop();
    }
  });
});

describe('The record of DIGEST_CRON starts', () => {
  it('keeps a row only where the schedule in force changes: a crash loop restarting with one schedule adds none, and the old repeats are removed', async () => {
    const migrations = await loadMigrations();
    const scheduleFile = migrations.findIndex((m) => m.name.includes('schedule_starts_only_on_change'));
    const db = pgliteClient();
    try {
      // The rows an earlier version left: one per start, a crash loop's included.
      await migrate(db, migrations.slice(0, scheduleFile));
      const start = (cron: string, at: string) => db.query('select public.digest_record_schedule_start($1, $2, $3)', [cron, 'UTC', at]);
      for (const at of ['2026-11-01T00:00:00Z', '2026-11-01T00:00:05Z', '2026-11-01T00:00:10Z']) await start('0 9 * * 1', at);
      await start('0 18 * * 1', '2026-11-05T00:00:00Z');
      await start('0 18 * * 1', '2026-11-05T00:01:00Z');
      const rows = async () => (await db.query<{ cron: string; at: string }>(`select cron, to_char(started_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') as at from public.digest_schedule_starts order by started_at`)).rows;
      expect(await rows()).toHaveLength(5);

      await migrate(db, migrations);
      expect(await rows()).toEqual([
        { cron: '0 9 * * 1', at: '2026-11-01T00:00:00' },
        { cron: '0 18 * * 1', at: '2026-11-05T00:00:00' },
      ]);
      for (let second = 0; second < 30; second++) await start('0 18 * * 1', `2026-11-06T00:00:${String(second).padStart(2, '0')}Z`);
      await start('0 9 * * 1', '2026-11-07T00:00:00Z');
      expect((await rows()).map((row) => row.cron)).toEqual(['0 9 * * 1', '0 18 * * 1', '0 9 * * 1']);
      // The schedule in force at each instant is what it was before.
      const inForce = async (at: string) => ((await db.query<{ s: { cron: string } | null }>('select public.digest_schedule_in_force($1) as s', [at])).rows[0]!.s?.cron ?? null);
      expect(await inForce('2026-11-01T00:00:07Z')).toBe('0 9 * * 1');
      expect(await inForce('2026-11-06T12:00:00Z')).toBe('0 18 * * 1');
      expect(await inForce('2026-11-08T00:00:00Z')).toBe('0 9 * * 1');
    } finally {
      await db.close();
    }
  });
});
