// Applies supabase/migrations/*.sql in name order, once each, recording them in
// app_migrations. The files are written to be idempotent, so a database that was migrated with
// the Supabase CLI (which records elsewhere) can run them again harmlessly.
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { sqlState, type SqlClient } from './sql-client.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../supabase/migrations/', import.meta.url));

export interface Migration {
  version: string;
  name: string;
  sql: string;
}

export async function loadMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((file) => /^\d{14}_[a-z0-9_]+\.sql$/.test(file)).sort();
  return Promise.all(
    files.map(async (file) => ({
      version: file.slice(0, 14),
      name: file.slice(15, -4),
      sql: await readFile(new URL(file, `file://${dir.endsWith('/') ? dir : `${dir}/`}`), 'utf8'),
    })),
  );
}

const LEDGER = `create table if not exists public.app_migrations (
  version text primary key,
  name text not null,
  applied_at timestamptz not null default now()
);
alter table public.app_migrations enable row level security;`;

// Any constant works; it only has to be the same for every process migrating this database.
const MIGRATION_LOCK_KEY = 4_715_020_250;

/**
 * How long a migration may wait for a table's lock before it gives up. An ALTER TABLE waiting
 * behind a long query queues every later reader and writer of that table behind itself, so on a
 * busy table a migration that cannot get its lock at once would stop signups and unsubscribes on
 * every replica until it did; giving up after a few seconds costs only a retry.
 */
export const MIGRATION_LOCK_TIMEOUT_MS = 5_000;

/** SQLSTATE lock_not_available: lock_timeout tripped. */
const LOCK_NOT_AVAILABLE = '55P03';

/** A migration gave up waiting for a table another session was using; nothing was applied. */
export class MigrationLockTimeoutError extends Error {
  constructor(
    readonly version: string,
    waitedMs: number,
    options?: { cause?: unknown },
  ) {
    super(
      `Migration ${version} could not lock a table within ${waitedMs / 1000} s: the table is busy, try again. ` +
        'Nothing was applied. Run `npm run db:migrate` again in a quieter moment; for a large table, migrate before deploying (docs/operating.md, "Migrating a large table").',
      options,
    );
    this.name = 'MigrationLockTimeoutError';
  }
}

export interface MigrateOptions {
  /** Default MIGRATION_LOCK_TIMEOUT_MS. */
  lockTimeoutMs?: number;
}

/** Applies what is missing; returns the versions applied by this call. */
export async function migrate(client: SqlClient, migrations?: Migration[], { lockTimeoutMs = MIGRATION_LOCK_TIMEOUT_MS }: MigrateOptions = {}): Promise<string[]> {
  const all = migrations ?? (await loadMigrations());
  // A restart on a database that has every file, the common case, only reads the ledger: no
  // transaction, no lock and no DDL, which on the embedded database is a noticeable part of the
  // time to the first page. A file not yet applied (or being applied by another process right
  // now, uncommitted) is pending, and takes the path below, which waits for the lock.
  if ((await pendingMigrations(client, all)).length === 0) return [];
  const applied: string[] = [];
  let current = 'ledger';
  try {
    await client.transaction(async (tx) => {
      // Two replicas starting together must not both apply the same file; the second waits for the
      // first without a time limit (it then finds nothing to do), so lock_timeout is set only after.
      await tx.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
      await tx.query(`select set_config('lock_timeout', $1, true)`, [`${Math.round(lockTimeoutMs)}ms`]);
      await tx.exec(LEDGER);
      const done = new Set((await tx.query<{ version: string }>('select version from public.app_migrations')).rows.map((r) => r.version));
      for (const migration of all) {
        if (done.has(migration.version)) continue;
        current = migration.version;
        await tx.exec(migration.sql);
        await tx.query('insert into public.app_migrations (version, name) values ($1, $2)', [migration.version, migration.name]);
        applied.push(migration.version);
      }
    });
  } catch (error) {
    if (sqlState(error) === LOCK_NOT_AVAILABLE) throw new MigrationLockTimeoutError(current, lockTimeoutMs, { cause: error });
    throw error;
  }
  return applied;
}

export async function pendingMigrations(client: SqlClient, migrations?: Migration[]): Promise<string[]> {
  const all = migrations ?? (await loadMigrations());
  const exists = await client.query<{ present: boolean }>("select to_regclass('public.app_migrations') is not null as present");
  if (!exists.rows[0]?.present) return all.map((m) => m.version);
  const done = new Set((await client.query<{ version: string }>('select version from public.app_migrations')).rows.map((r) => r.version));
  return all.filter((m) => !done.has(m.version)).map((m) => m.version);
}
