// A fresh database per test file on the throwaway PostgreSQL that tests/setup/postgres.ts starts,
// copied from one of the migrated templates it made (`create database … template …`), so a test
// file does not wait for every migration to run again.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, inject } from 'vitest';

const postgres = inject('postgres');
export const postgresUrl: string | null = postgres?.url ?? null;

if (!postgresUrl) {
  console.warn('[postgres] No PostgreSQL reachable: skipping tests that need a real PostgreSQL.');
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/**
 * What a new test database holds:
 * - `migrated` (the default): every migration applied, as the stores leave a database they open;
 * - `supabase`: Supabase's roles and default grants, then every migration, as `supabase db push`
 *   leaves a project;
 * - `empty`: nothing, for tests of the migrations themselves or of a database never migrated.
 */
export type TestDatabaseStart = 'migrated' | 'supabase' | 'empty';

export async function createTestDatabase({ from = 'migrated' }: { from?: TestDatabaseStart } = {}): Promise<TestDatabase> {
  if (!postgres) throw new Error('No PostgreSQL for tests');
  const serverUrl = postgres.url;
  const name = `lw_${randomBytes(6).toString('hex')}`;
  const template = { migrated: postgres.migratedTemplate, supabase: postgres.supabaseTemplate, empty: null }[from];
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(template ? `create database ${name} template ${template}` : `create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

/** Adds `count` active subscribers reader0001@example.com … in one statement, for tests that need many (five digits and more past 9,999). */
export async function insertReaders(client: pg.Client, count: number): Promise<void> {
  await client.query(
    `insert into public.email_signups (email, source)
     select format('reader%s@example.com', lpad(g::text, greatest(4, length($1::text)), '0')), '/' from generate_series(1, $1::int) g`,
    [count],
  );
}

/** A fresh database and one direct connection to it. */
export interface ConnectedTestDatabase {
  db: TestDatabase;
  sql: pg.Client;
}

/** A fresh migrated database and a direct connection to it, open around the calling describe's tests, for tests that shape and read rows by hand. */
export function useConnectedTestDatabase(): ConnectedTestDatabase {
  const connected = {} as ConnectedTestDatabase;
  beforeAll(async () => {
    connected.db = await createTestDatabase();
    connected.sql = new pg.Client({ connectionString: connected.db.url });
    await connected.sql.connect();
  });
  afterAll(async () => {
    await connected.sql?.end();
    await connected.db?.drop();
  });
  return connected;
}
