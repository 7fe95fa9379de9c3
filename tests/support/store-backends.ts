// The three store backends, each on a fresh database, for tests of rules every backend must keep
// alike. `sql` is a direct connection to the same database (on PGlite, the store's own), for tests
// that need to see or shape rows the way another writer would.
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { createPgClient, openPostgresStore } from '../../server/store/postgres.ts';
import type { SqlClient } from '../../server/store/sql-client.ts';
import { sqlStore } from '../../server/store/sql-store.ts';
import { openSupabaseStore } from '../../server/store/supabase.ts';
import type { Store } from '../../server/store/types.ts';
import { startFakePostgrest } from './fake-postgrest.ts';
import { createTestDatabase, postgresUrl } from './postgres.ts';
import { migratedPGliteClient, withDirectSql } from './sql-backends.ts';

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

/**
 * Opens `backend` before the calling describe's tests (or before each, for a fresh database per
 * test), hands it to `use`, and cleans it up after them.
 */
export function openAroundTests(backend: StoreBackend, use: (opened: OpenedBackend) => void, { eachTest = false } = {}): void {
  let opened: OpenedBackend | null = null;
  (eachTest ? beforeEach : beforeAll)(async () => {
    opened = await backend.open();
    use(opened);
  });
  (eachTest ? afterEach : afterAll)(async () => {
    await opened?.cleanup();
    opened = null;
  });
}

export const storeBackends: StoreBackend[] = [
  {
    name: 'pglite',
    available: true,
    async open() {
      // The store and the test share PGlite's one connection, so a test can write rows the way
      // another writer would on this backend too.
      const sql = await migratedPGliteClient();
      const store = sqlStore('pglite', sql);
      return { store, sql, cleanup: () => store.close() };
    },
  },
  {
    name: 'postgres',
    available: postgresUrl !== null,
    async open() {
      const db = await createTestDatabase();
      return withDirectSql(db, await openPostgresStore(db.url, { max: 4 }));
    },
  },
  {
    name: 'supabase',
    available: postgresUrl !== null,
    async open() {
      const db = await createTestDatabase({ from: 'supabase' });
      const fake = await startFakePostgrest(db.url);
      const store = await openSupabaseStore({ url: fake.url, anonKey: fake.anonKey, serviceRoleKey: fake.serviceRoleKey });
      return withDirectSql(db, store, () => fake.close());
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
