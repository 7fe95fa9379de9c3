// The two SQL backends (PGlite and PostgreSQL), each a fresh migrated database with the store AND a
// direct SQL connection to it, for tests that must shape rows the way time or another writer would
// (age a pending signup by 29 days) on the embedded database too, where store-backends.ts offers
// no second connection (PGlite has exactly one owner; here the store and the test share it).
import { PGlite } from '@electric-sql/pglite';
import { loadMigrations, migrate } from '../../server/store/migrate.ts';
import { seedImage } from '../../server/store/pglite.ts';
import { createPgClient, openPostgresStore } from '../../server/store/postgres.ts';
import type { SqlClient, SqlExecutor } from '../../server/store/sql-client.ts';
import { sqlStore } from '../../server/store/sql-store.ts';
import type { Store } from '../../server/store/types.ts';
import { createTestDatabase, postgresUrl, type TestDatabase } from './postgres.ts';

/** A raw in-memory PGlite as a SqlClient. */
export function pgliteClient(db: PGlite = new PGlite()): SqlClient {
  const executor = (target: Pick<PGlite, 'query' | 'exec'>): SqlExecutor => ({
    async query<Row>(sql: string, params: unknown[] = []) {
      const result = await target.query<Row>(sql, params);
      return { rows: result.rows, affectedRows: result.affectedRows ?? 0 };
    },
    async exec(sql: string) {
      await target.exec(sql);
    },
  });
  return { ...executor(db), transaction: (work) => db.transaction((tx) => work(executor(tx))), close: () => db.close() };
}

/**
 * A raw in-memory PGlite with every migration applied, started from the build's image as the
 * embedded store is (server/store/pglite.ts); without a matching image the migrations run here.
 */
export async function migratedPGliteClient(): Promise<SqlClient> {
  const migrations = await loadMigrations();
  const client = pgliteClient(new PGlite({ loadDataDir: await seedImage(migrations) }));
  await migrate(client, migrations);
  return client;
}

export interface OpenedSqlBackend {
  store: Store;
  sql: SqlClient;
  cleanup(): Promise<void>;
}

/** A store on a test database with a direct connection beside it; cleanup closes both, then `extra`, and drops the database. */
export async function withDirectSql(db: TestDatabase, store: Store, extra: () => Promise<void> = async () => {}): Promise<OpenedSqlBackend> {
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

export const sqlBackends = [
  {
    name: 'PGlite',
    available: true,
    async open(): Promise<OpenedSqlBackend> {
      const client = await migratedPGliteClient();
      const store = sqlStore('pglite', client);
      return { store, sql: client, cleanup: () => store.close() };
    },
  },
  {
    name: 'PostgreSQL',
    available: postgresUrl !== null,
    async open(): Promise<OpenedSqlBackend> {
      const db = await createTestDatabase();
      return withDirectSql(db, await openPostgresStore(db.url, { max: 4 }));
    },
  },
];
