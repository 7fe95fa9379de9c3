// What the anon key (public by design: the old site shipped it in its browser bundle) can do once
// the migrations ran on a database with Supabase's roles and default grants: nothing. Not even add a
// signup, which would skip the server's checks (honeypot, limits, disposable domains) and could
// create an active subscriber directly (20261123000210_revoke_anon_signup_insert.sql). The service role, used only by the server and the job, reads everything.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations } from '../../server/store/migrate.ts';
import { createPgClient } from '../../server/store/postgres.ts';
import { startFakePostgrest, type FakePostgrest } from '../support/fake-postgrest.ts';
import { createTestDatabase, postgresUrl, type TestDatabase } from '../support/postgres.ts';

const DENIED = { code: '42501' };

/** The test database and the connection the role switches run on, opened in the top describe's beforeAll. */
interface Connected {
  db: TestDatabase;
  conn: pg.Client;
}

type RunAs = (role: string, sql: string, params?: unknown[]) => Promise<pg.QueryResult>;

/** Runs each statement as `role`, one at a time (each rolled back), and expects every one refused for lack of permission. */
async function expectDenied(as: RunAs, role: string, statements: readonly string[]) {
  for (const sql of statements) await expect(as(role, sql), sql).rejects.toMatchObject(DENIED);
}

describe.skipIf(!postgresUrl)('Row-level security with Supabase roles', () => {
  const ctx = {} as Connected;

  /** Runs `sql` as `role` in a transaction that is rolled back, so cases do not leak into each other. */
  async function as<Row extends pg.QueryResultRow = Record<string, unknown>>(role: string, sql: string, params: unknown[] = []) {
    await ctx.conn.query('begin');
    try {
      await ctx.conn.query(`set local role ${role}`);
      return await ctx.conn.query<Row>(sql, params);
    } finally {
      await ctx.conn.query('rollback');
    }
  }

  beforeAll(async () => {
    ctx.db = await createTestDatabase({ from: 'supabase' });
    const client = createPgClient(ctx.db.url, { max: 1 });
    await client.exec(`insert into public.email_signups (email) values ('existing@example.com');
                       insert into public.digest_deliveries (recap_date, subscriber_id) values ('2025-07-14', 'x');`);
    await client.close();
    ctx.conn = new pg.Client({ connectionString: ctx.db.url });
    await ctx.conn.connect();
  });

  afterAll(async () => {
    await ctx.conn?.end();
    await ctx.db?.drop();
  });

  describe('as anon', () => anonRefusals(as));

  it('anon and authenticated may execute none of the store functions the server and the job call', async () => {
    const callable = await ctx.conn.query<{ role: string; proname: string }>(
      `select r.role, p.proname from pg_proc p, unnest(array['anon', 'authenticated']) as r(role)
       where p.pronamespace = 'public'::regnamespace and p.prorettype <> 'trigger'::regtype
         and has_function_privilege(r.role, p.oid, 'execute')
       order by 1, 2`,
    );
    expect(callable.rows).toEqual([]);
    const served = await ctx.conn.query<{ n: number }>(
      `select count(*)::int as n from pg_proc p
       where p.pronamespace = 'public'::regnamespace and p.prorettype <> 'trigger'::regtype
         and has_function_privilege('service_role', p.oid, 'execute')`,
    );
    expect(served.rows[0]!.n).toBeGreaterThanOrEqual(35);
  });

  describe('as authenticated (a signed-in user of the same project)', () => {
    it('may do nothing with these tables or functions', async () => {
      await expectDenied(as, 'authenticated', [
        "insert into public.email_signups (email) values ('user@example.com')",
        'select email from public.email_signups',
        'select * from public.digest_deliveries',
        "select public.acquire_digest_lock('2025-07-14', 'me', 1000)",
      ]);
    });
  });

  describe('as service_role', () => {
    it('reads and writes everything the server and the job need', async () => {
      expect((await as('service_role', 'select email from public.email_signups')).rows).toEqual([{ email: 'existing@example.com' }]);
      expect((await as('service_role', 'select subscriber_id from public.digest_deliveries')).rows).toEqual([{ subscriber_id: 'x' }]);
      expect((await as('service_role', 'select count(*)::int as n from public.app_migrations')).rows[0]).toEqual({ n: (await loadMigrations()).length });
      expect((await as('service_role', "update public.email_signups set unsubscribed_at = now() where email = 'existing@example.com'")).rowCount).toBe(1);
      expect((await as('service_role', "select public.acquire_digest_lock('2025-07-14', 'me', 1000) as ok")).rows).toEqual([{ ok: true }]);
    });
  });

  describe('over the REST interface', () => restInterface(ctx));
});

/** What the anon role tries straight in SQL, test by test: every statement is refused, whatever the table or function. */
const ANON_REFUSALS: [title: string, statements: string[]][] = [
  [
    'may not insert a signup, so no row can skip the server’s checks',
    [
      "insert into public.email_signups (email, source) values ('new@example.com', '/')",
      "insert into public.email_signups (email) values ('Bot.Typed@Example.com')",
      // Not even through a duplicate: the permission check comes before the unique key.
      "insert into public.email_signups (email) values ('existing@example.com')",
      "insert into public.email_signups (email, unsubscribed_at) values ('x@example.com', now())",
    ],
  ],
  [
    'may not touch the signup limits',
    [
      'select * from public.signup_rate_limits',
      "select public.signup_rate_limit_hit('k', 1, 60000)",
      "select public.signup_counted('k', 1, 60000, 'm', 1, 60000, 'x@example.com', '/', 'single', null, '{}', false)",
    ],
  ],
  [
    'may not read, change or delete subscribers',
    [
      'select email from public.email_signups',
      'select count(*) from public.email_signups',
      "insert into public.email_signups (email) values ('z@example.com') returning id",
      'update public.email_signups set unsubscribed_at = now()',
      'delete from public.email_signups',
    ],
  ],
  [
    'may not touch the ledger, the lease or the migration record',
    [
      ...['digest_deliveries', 'digest_locks', 'app_migrations'].map((table) => `select * from public.${table}`),
      "insert into public.digest_deliveries (recap_date, subscriber_id) values ('2025-07-14', 'y')",
      "insert into public.digest_locks (recap_date, holder, locked_until) values ('2025-07-14', 'me', now())",
      "insert into public.app_migrations (version, name) values ('99999999999999', 'x')",
    ],
  ],
  ['may not call the lease functions', ["select public.acquire_digest_lock('2025-07-14', 'me', 1000)", "select public.release_digest_lock('2025-07-14', 'me')"]],
];

function anonRefusals(as: RunAs) {
  for (const [title, statements] of ANON_REFUSALS) it(title, () => expectDenied(as, 'anon', statements));
}

/** The same refusals through the PostgREST stand-in, and what the service key may do there. */
function restInterface(ctx: Connected) {
  let fake: FakePostgrest;

  beforeAll(async () => {
    fake = await startFakePostgrest(ctx.db.url);
  });

  afterAll(async () => {
    await fake?.close();
  });

  const call = (key: string, path: string, init: RequestInit = {}) =>
    fetch(`${fake.url}/rest/v1/${path}`, { ...init, headers: { apikey: key, Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...init.headers } });

  it('the anon key cannot add a signup, list, read back or call the lease', async () => {
    const added = await call(fake.anonKey, 'email_signups', { method: 'POST', body: JSON.stringify({ email: 'rest@example.com' }), headers: { Prefer: 'return=minimal' } });
    expect(added.status).toBe(401);
    expect(await added.json()).toMatchObject({ code: '42501', message: 'permission denied for table email_signups' });

    const listed = await call(fake.anonKey, 'email_signups?select=email');
    expect(listed.status).toBe(401);
    expect(await listed.json()).toMatchObject({ code: '42501', message: 'permission denied for table email_signups' });

    const lease = await call(fake.anonKey, 'rpc/acquire_digest_lock', { method: 'POST', body: JSON.stringify({ p_recap_date: '2025-07-14', p_holder: 'x', p_lease_ms: 1000 }) });
    expect(lease.status).toBe(401);
    expect(await lease.json()).toMatchObject({ code: '42501' });

    const limit = await call(fake.anonKey, 'rpc/signup_rate_limit_hit', { method: 'POST', body: JSON.stringify({ p_key: 'k', p_points: 1, p_window_ms: 60000 }) });
    expect(limit.status).toBe(401);

    // Nothing the anon key sent became a row, active or otherwise.
    const rows = await call(fake.serviceRoleKey, 'email_signups?select=email&email=eq.rest%40example.com');
    expect(await rows.json()).toEqual([]);
  });

  it('the service key adds a signup, as the server does', async () => {
    const added = await call(fake.serviceRoleKey, 'email_signups', { method: 'POST', body: JSON.stringify({ email: 'rest@example.com', source: '/' }), headers: { Prefer: 'return=minimal' } });
    expect(added.status).toBe(201);
  });

  it('the service key lists subscribers', async () => {
    const listed = await call(fake.serviceRoleKey, 'email_signups?select=email&email=eq.rest%40example.com');
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual([{ email: 'rest@example.com' }]);
  });

  it('treats values in the query as values, never as SQL', async () => {
    const quoted = await call(fake.serviceRoleKey, `email_signups?select=email&email=eq.${encodeURIComponent("x' or '1'='1")}`);
    expect(await quoted.json()).toEqual([]);
    const cast = await call(fake.serviceRoleKey, `email_signups?select=${encodeURIComponent('email::text from pg_authid --')}`);
    expect(cast.status).toBe(400);
    expect(await cast.json()).toMatchObject({ code: 'PGRST100' });
    const column = await call(fake.serviceRoleKey, 'email_signups?select=email&order=email;drop table x.asc');
    expect(column.status).toBe(400);
  });
}
