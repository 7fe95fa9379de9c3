// The digest's checks against the ledger ("not sent this recap yet") cost one primary-key probe per
// subscriber they look at, however large the ledger and whatever its statistics say. A ledger
// filled since its last ANALYZE looks nearly empty to the planner, which then read every ledger row
// of the recap for each page and each batch: a send to N subscribers cost O(N²) in the database
// (supabase/migrations/20261126004020_digest_pages_probe_the_ledger.sql). Counted with PostgreSQL's
// own per-transaction table statistics: the ledger rows a call read, by any scan.
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { insertReaders, postgresUrl, useConnectedTestDatabase } from '../support/postgres.ts';

const RECAP = '2025-07-14';
const SUBSCRIBERS = 20_000;
const ALREADY_SENT = 19_000;
const PAGE = 500;
const BATCH = 100;

/** Runs `query` on `sql` in a transaction: its rows, and the ledger rows it read (sequential and index scans). */
async function withLedgerRowsRead<Row extends pg.QueryResultRow>(sql: pg.Client, query: string, params: unknown[]): Promise<{ rows: Row[]; read: number }> {
  await sql.query('begin');
  try {
    const { rows } = await sql.query<Row>(query, params);
    const stats = await sql.query<{ read: string }>(
      `select (coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::text as read
       from pg_stat_xact_user_tables where relname = 'digest_deliveries'`,
    );
    return { rows, read: Number(stats.rows[0]!.read) };
  } finally {
    await sql.query('rollback');
  }
}

describe.skipIf(!postgresUrl)('the digest’s ledger checks on a ledger the statistics have not seen', () => {
  const database = useConnectedTestDatabase();

  beforeAll(async () => {
    const { sql } = database;
    await insertReaders(sql, SUBSCRIBERS);
    // Statistics taken while the ledger was empty, then most of the list sent: those with the
    // highest ids, so the first page and batch in id order are people not sent yet.
    await sql.query('analyze');
    await sql.query(
      `insert into public.digest_deliveries (recap_date, subscriber_id)
       select $1, id::text from public.email_signups order by id::text desc limit ${ALREADY_SENT}`,
      [RECAP],
    );
  });

  it('reads at most one ledger row per candidate for a page of undelivered subscribers', async () => {
    const { rows, read } = await withLedgerRowsRead<{ n: number }>(database.sql, 'select jsonb_array_length(public.digest_undelivered($1, null, $2)) as n', [RECAP, PAGE]);
    expect(read).toBeLessThanOrEqual(PAGE);
    expect(rows[0]!.n).toBe(PAGE);
  });

  it('reads at most one ledger row per recipient when it writes a batch', async () => {
    const { sql } = database;
    const ids = (await sql.query<{ id: string }>(`select id::text as id from public.email_signups order by id::text limit ${BATCH}`)).rows.map((row) => row.id);
    await sql.query(
      `insert into public.digest_contents (content_hash, recap_date, sender, site_url, secret_fingerprint, subject, html, body_text)
       values ('probe-content', $1, 'Launched Weekly <digest@example.org>', 'https://example.org', 'f', 's', '<p>h</p>', 't')`,
      [RECAP],
    );
    const { read } = await withLedgerRowsRead(
      sql,
      `select public.digest_write_batch(p_recap_date := $1, p_run_id := null, p_idempotency_key := 'probe-batch',
                                         p_content_hash := 'probe-content', p_subscriber_ids := $2, p_created_at := now())`,
      [RECAP, JSON.stringify(ids)],
    );
    expect(read).toBeLessThanOrEqual(BATCH);
  });
});
