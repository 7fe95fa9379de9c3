// /readyz tells "cannot be reached" apart from "reachable but not migrated", and in the second case
// names the migrations that are missing: an operator who deployed new code against a database that
// was not migrated (a Supabase project migrated by hand, say) sees what to apply.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations } from '../../server/store/migrate.ts';
import { openPostgresStore } from '../../server/store/postgres.ts';
import type { Store } from '../../server/store/types.ts';
import { createTestDatabase, postgresUrl, type TestDatabase } from '../support/postgres.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

describe.skipIf(!postgresUrl)('/readyz on a reachable database that lacks migrations', () => {
  let database: TestDatabase;
  let store: Store;
  let server: TestServer;
  let sql: pg.Client;
  let storeClosed = false;

  beforeAll(async () => {
    database = await createTestDatabase();
    store = await openPostgresStore(database.url);
    server = await startTestServer({ store });
    sql = new pg.Client({ connectionString: database.url });
    await sql.connect();
  });

  afterAll(async () => {
    await sql?.end();
    await server?.close();
    if (!storeClosed) await store?.close();
    await database?.drop();
  });

  it('is ready when every migration is recorded, and names the ones that are not', async () => {
    expect(await (await fetch(`${server.url}/readyz`)).json()).toEqual({ status: 'ready', store: 'postgres' });

    const [first, , last] = (await loadMigrations()).slice(-3).map((m) => m.version);
    await sql.query('delete from public.app_migrations where version = any($1)', [[first, last]]);
    const response = await fetch(`${server.url}/readyz`);
    expect(response.status).toBe(503);
    const body = (await response.json()) as { status: string; message: string; missingMigrations: string[] };
    expect(body).toEqual({
      status: 'unavailable',
      store: 'postgres',
      missingMigrations: [first, last],
      message: `The database is reachable but not migrated: ${first}, ${last} are missing. Apply supabase/migrations with npm run db:migrate.`,
    });
  });

  it('still says the database cannot be reached when it cannot', async () => {
    await store.close();
    storeClosed = true;
    const response = await fetch(`${server.url}/readyz`);
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ status: 'unavailable', store: 'postgres', message: 'The database cannot be reached.' });
  });
});
