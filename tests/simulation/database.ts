// The simulation's one shared database, on PGlite (from the build's seed image) or PostgreSQL, with
// what a simulation needs beyond the Store: emptying it between scenarios, a backup and its restore,
// and the database's time. The database tells time with its own now() (leases, outbox retries,
// throttles), and the simulation's clock jumps hours in a millisecond. PGlite runs in this process
// and reads its time from Date.now(), so it is handed the simulated clock itself; a PostgreSQL server
// reads its host's clock, so every timestamp it compares with now() is moved back by the simulated
// time that passed instead, which is what waiting would have done.
import { readFile } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import type { Clock } from '../../server/clock.ts';
import { loadMigrations, migrate } from '../../server/store/migrate.ts';
import { seedPath } from '../../server/store/pglite.ts';
import { createPgClient, openPostgresStore } from '../../server/store/postgres.ts';
import type { SqlClient, SqlExecutor } from '../../server/store/sql-client.ts';
import { sqlStore } from '../../server/store/sql-store.ts';
import type { Store } from '../../server/store/types.ts';

export type BackendName = 'PGlite' | 'PostgreSQL';

/** Timestamps the SQL functions compare with the database's now(). */
const AGED_COLUMNS: Record<string, string[]> = {
  mail_outbox: ['created_at', 'next_attempt_at', 'lease_until', 'settled_at'],
  digest_locks: ['locked_until'],
  email_signups: ['pending_since', 'confirmation_sent_at'],
  mailbox_confirmations: ['sent_at'],
  notice_webhooks: ['created_at', 'next_attempt_at', 'lease_until', 'settled_at'],
};

/** Never emptied, backed up or restored: the migrations' ledger. */
const KEPT_TABLES = new Set(['app_migrations']);

/** The database's time kept to a scenario's clock; released when the scenario ends. */
export interface DatabaseTime {
  /** Brings the database's time up to the clock's, once per simulated instant, across every replica. */
  catchUp(): Promise<void>;
  release(): Promise<void>;
}

export interface SimDatabase {
  name: BackendName;
  store: Store;
  sql: SqlClient;
  /** Empties every table and restarts every sequence: a new scenario on a new list. */
  reset(): Promise<void>;
  /** From now until its release, the database's now() is `clock`'s (the rows' ages change with it). */
  followClock(clock: Clock): Promise<DatabaseTime>;
  /** A copy of every table and sequence, as a nightly backup would hold. */
  backup(): Promise<void>;
  /** Puts the last backup back: rows, identities and sequences as they were then. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

async function tablesOf(sql: SqlClient): Promise<string[]> {
  const result = await sql.query<{ name: string }>(`select tablename as name from pg_tables where schemaname = 'public' order by tablename`);
  return result.rows.map((row) => row.name).filter((name) => !KEPT_TABLES.has(name));
}

async function sequencesOf(sql: SqlClient): Promise<string[]> {
  const result = await sql.query<{ name: string }>(`select sequencename as name from pg_sequences where schemaname = 'public' order by sequencename`);
  return result.rows.map((row) => row.name);
}

async function writableColumns(sql: SqlClient, table: string): Promise<string[]> {
  const result = await sql.query<{ name: string }>(
    `select column_name as name from information_schema.columns where table_schema = 'public' and table_name = $1 and is_generated = 'NEVER' order by ordinal_position`,
    [table],
  );
  return result.rows.map((row) => `"${row.name}"`);
}

/**
 * PGlite's now() is Emscripten's clock, which asks Date.now(): answering it with the simulated clock
 * gives the database the simulation's time without a write. Time then jumps back (a scenario begins
 * before the last one ended, or the real clock returns), which PostgreSQL never expects: its
 * statistics, last flushed at a time now in the future, count as flushed less than a second ago
 * until the clock passes that time, and the idle timer that waits to flush them is armed weeks
 * ahead. A forced flush after each jump dates the last flush to the new time.
 */
async function dateNowFollows(sql: SqlClient, clock: Clock): Promise<DatabaseTime> {
  const flushStatistics = async () => {
    await sql.query('select pg_stat_force_next_flush()');
    // The flush happens when the database is next idle, which a second statement ensures.
    await sql.query('select 1');
  };
  const original = Date.now;
  Date.now = () => clock.now().getTime();
  await flushStatistics();
  return {
    catchUp: () => Promise.resolve(),
    release: async () => {
      Date.now = original;
      await flushStatistics();
    },
  };
}

/** A database on another host keeps its own clock: its rows are aged by the simulated time instead. */
function agedFollows(clock: Clock, age: (ms: number) => Promise<void>): DatabaseTime {
  let agedTo = clock.now().getTime();
  let pending: Promise<void> = Promise.resolve();
  return {
    catchUp() {
      const target = clock.now().getTime();
      if (target <= agedTo) return pending;
      const step = target - agedTo;
      agedTo = target;
      pending = pending.then(() => age(step));
      return pending;
    },
    release: () => Promise.resolve(),
  };
}

function simDatabase(name: BackendName, store: Store, sql: SqlClient, closeAll: () => Promise<void>): SimDatabase {
  let tables: string[] | null = null;
  const allTables = async () => (tables ??= await tablesOf(sql));
  // The schema does not change during a simulation: asked once per table, not once per restore.
  const columns = new Map<string, Promise<string[]>>();
  const columnsOf = (table: string) => {
    if (!columns.has(table)) columns.set(table, writableColumns(sql, table));
    return columns.get(table)!;
  };
  const agingSql = Object.entries(AGED_COLUMNS)
    .map(([table, columns]) => `update public.${table} set ${columns.map((c) => `${c} = ${c} - make_interval(secs => $SECONDS)`).join(', ')}`)
    .join(';\n');
  const agingBy = (seconds: number) => agingSql.replaceAll('$SECONDS', String(seconds));
  // Seconds the rows have been aged in all, and that sum when the backup was taken: a backup's rows
  // must come back as old as the time since makes them, as they would from a real backup.
  let agedSeconds = 0;
  let agedAtBackup = 0;
  let backupMade = false;
  return {
    name,
    store,
    sql,
    async reset() {
      const names = await allTables();
      // Rows deleted with triggers (and so foreign keys) off, and sequences set back, as
      // `truncate … restart identity` would, without rewriting every table's files.
      const statements = names.map((t) => `delete from public.${t}`);
      for (const sequence of await sequencesOf(sql)) statements.push(`select setval('public.${sequence}', 1, false)`);
      if (backupMade) statements.push(...[...names, 'sequences'].map((t) => `delete from sim_backup.${t}`));
      await sql.transaction(async (tx) => {
        await tx.exec(`set local session_replication_role = replica;\n${statements.join(';\n')}`);
      });
    },
    async followClock(clock) {
      if (name === 'PGlite') return dateNowFollows(sql, clock);
      return agedFollows(clock, async (ms) => {
        // Triggers stay off: moving a timestamp is not a change of it (no confirmation is queued again).
        await sql.exec(`begin;\nset local session_replication_role = replica;\n${agingBy(ms / 1000)};\ncommit`);
        agedSeconds += ms / 1000;
      });
    },
    async backup() {
      const names = await allTables();
      // The backup's tables are made once per database and refilled: creating and truncating
      // tables rewrites the catalog and the tables' files, far slower than rows in and out.
      const statements = backupMade
        ? [...names, 'sequences'].map((t) => `delete from sim_backup.${t}`)
        : [
            'drop schema if exists sim_backup cascade',
            'create schema sim_backup',
            ...names.map((t) => `create table sim_backup.${t} as table public.${t} with no data`),
            'create table sim_backup.sequences (name text, last_value bigint, called boolean)',
          ];
      statements.push(...names.map((t) => `insert into sim_backup.${t} select * from public.${t}`));
      statements.push(`insert into sim_backup.sequences select sequencename, last_value, coalesce(last_value, 0) > 0 from pg_sequences where schemaname = 'public'`);
      await sql.exec(statements.join(';\n'));
      backupMade = true;
      agedAtBackup = agedSeconds;
    },
    async restore() {
      const names = await allTables();
      // Triggers are off below, foreign keys with them, so the tables empty in any order.
      const statements = names.map((t) => `delete from public.${t}`);
      for (const table of names) {
        const list = (await columnsOf(table)).join(', ');
        statements.push(`insert into public.${table} (${list}) overriding system value select ${list} from sim_backup.${table}`);
      }
      for (const sequence of await sequencesOf(sql)) {
        statements.push(
          `select setval('public.${sequence}', coalesce((select last_value from sim_backup.sequences where name = '${sequence}'), 1), coalesce((select called from sim_backup.sequences where name = '${sequence}'), false))`,
        );
      }
      const sinceBackup = agedSeconds - agedAtBackup;
      if (sinceBackup > 0) statements.push(agingBy(sinceBackup));
      // Triggers stay off while rows come back: a restore replays no side effect (no outbox row).
      await sql.transaction(async (tx) => {
        await tx.exec(`set local session_replication_role = replica;\n${statements.join(';\n')}`);
      });
    },
    close: closeAll,
  };
}

/** PGlite as the store's SqlClient (the bench runs outside Vitest, so not through tests/support). */
function clientOver(db: PGlite): SqlClient {
  const over = (target: Pick<PGlite, 'query' | 'exec'>): SqlExecutor => ({
    query: async <Row>(text: string, params: unknown[] = []) => {
      const { rows, affectedRows } = await target.query<Row>(text, params);
      return { rows, affectedRows: affectedRows ?? 0 };
    },
    exec: async (text: string) => void (await target.exec(text)),
  });
  return { ...over(db), transaction: (work) => db.transaction((tx) => work(over(tx))), close: () => db.close() };
}

export async function openPGliteDatabase(): Promise<SimDatabase> {
  const migrations = await loadMigrations();
  const image = await readFile(seedPath(migrations)).catch(() => null);
  // Time jumps back between scenarios, which PostgreSQL never expects: its repeating timer for
  // reporting start-up progress, left armed at the real time, would then be due weeks ahead.
  const startParams = [...PGlite.defaultStartParams, '-c', 'log_startup_progress_interval=0'];
  const db = new PGlite({ loadDataDir: image ? new Blob([image]) : undefined, startParams });
  const client = clientOver(db);
  await migrate(client, migrations);
  const store = sqlStore('pglite', client);
  return simDatabase('PGlite', store, client, () => store.close());
}

/** On a database of its own (tests/support/postgres.ts makes one per caller). */
export async function openPostgresDatabase(url: string, drop: () => Promise<void>): Promise<SimDatabase> {
  const admin = createPgClient(url, { max: 1 });
  await migrate(admin);
  const store = await openPostgresStore(url, { max: 4 });
  return simDatabase('PostgreSQL', store, admin, async () => {
    await store.close();
    await admin.close();
    await drop();
  });
}
