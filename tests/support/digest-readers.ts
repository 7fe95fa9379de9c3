// The set-up of the digest's crash and repeat tests: a fresh PostgreSQL database with readers on
// the list, the store over it, a direct connection to shape rows the way time or another writer
// would, and the Resend stand-in.
import pg from 'pg';
import { openPostgresStore } from '../../server/store/postgres.ts';
import type { Store } from '../../server/store/types.ts';
import { startFakeResend, type FakeResend } from './fake-resend.ts';
import { createTestDatabase, insertReaders, type TestDatabase } from './postgres.ts';

export interface ReadersAndProvider {
  db: TestDatabase;
  store: Store;
  sql: pg.Client;
  fake: FakeResend;
  /** Closes the provider, the connection and the store, then drops the database. */
  close(): Promise<void>;
}

export async function openReadersAndProvider(readers: number): Promise<ReadersAndProvider> {
  const db = await createTestDatabase();
  const store = await openPostgresStore(db.url, { max: 4 });
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  await insertReaders(sql, readers);
  const fake = await startFakeResend();
  return {
    db,
    store,
    sql,
    fake,
    async close() {
      await fake.close();
      await sql.end();
      await store.close();
      await db.drop();
    },
  };
}
