// The three store backends, each on a fresh database, for tests of rules every backend must keep
// alike. `sql` is a direct connection to the same database where there is one (PostgreSQL and
// the Supabase stand-in), for tests that need to see or shape rows the way another writer would.
import { migrate } from '../../server/store/migrate.ts';
import { openPGliteStore } from '../../server/store/pglite.ts';
import { createPgClient, openPostgresStore } from '../../server/store/postgres.ts';
import type { SqlClient } from '../../server/store/sql-client.ts';
import { openSupabaseStore } from '../../server/store/supabase.ts';
import type { Store } from '../../server/store/types.ts';
import { startFakePostgrest } from './fake-postgrest.ts';
import { createTestDatabase, postgresUrl, type TestDatabase } from './postgres.ts';
import { createSupabaseRoles } from './supabase-roles.ts';

export interface OpenedBackend {
  store: Store;
  sql: SqlClient | null;
  cleanup(): Promise<void>;
}

export interface StoreBackend {
  name: 'pglite' | 'postgres' | 'supabase';
  available: boolean;
  open(): Promise<OpenedBackend>;
}

async function withSql(db: TestDatabase, store: Store, extra: () => Promise<void> = async () => {}): Promise<OpenedBackend> {
  const sql = createPgClient(db.url, { max: 2 });
  return {
    store,
    sql,
    async cleanup() {
      await store.close();
      await extra();
      await sql.close();
      await db.drop();
    },
  };
}

export const storeBackends: StoreBackend[] = [
  {
    name: 'pglite',
    available: true,
    async open() {
      const store = await openPGliteStore(null);
      return { store, sql: null, cleanup: () => store.close() };
    },
  },
  {
    name: 'postgres',
    available: postgresUrl !== null,
    async open() {
      const db = await createTestDatabase();
      return withSql(db, await openPostgresStore(db.url, { max: 4 }));
    },
  },
  {
    name: 'supabase',
    available: postgresUrl !== null,
    async open() {
      const db = await createTestDatabase();
      await createSupabaseRoles(db.url);
      const admin = createPgClient(db.url, { max: 1 });
      try {
        await migrate(admin);
      } finally {
        await admin.close();
      }
      const fake = await startFakePostgrest(db.url);
      const store = await openSupabaseStore({ url: fake.url, anonKey: fake.anonKey, serviceRoleKey: fake.serviceRoleKey });
      return withSql(db, store, () => fake.close());
    },
  },
];

/**
 * Stores for tests that start the real app (startTestServer): on PGlite the server opens its own
 * embedded store (`store` undefined, no outside connection); on PostgreSQL a fresh database, with
 * a direct connection for shaping rows the way another writer would.
 */
export const appStoreKinds = [
  { name: 'PGlite', available: true, open: async () => ({ store: undefined as Store | undefined, sql: null as SqlClient | null, drop: async () => {} }) },
  {
    name: 'PostgreSQL',
    available: postgresUrl !== null,
    open: async () => {
      const db = await createTestDatabase();
      const store = await openPostgresStore(db.url, { max: 4 });
      const sql = createPgClient(db.url, { max: 1 });
      return {
        store: store as Store | undefined,
        sql: sql as SqlClient | null,
        drop: async () => {
          await store.close();
          await sql.close();
          await db.drop();
        },
      };
    },
  },
];
