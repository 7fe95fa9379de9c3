// The stores a generated life runs on: PGlite from the build's seed image (every migration already
// applied, as a new embedded database starts) and PostgreSQL, each with a direct SQL connection,
// and the app started on one of them for the length of a describe block.
import { readFile } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll } from 'vitest';
import { loadMigrations, migrate } from '../../server/store/migrate.ts';
import { seedPath } from '../../server/store/pglite.ts';
import { sqlStore } from '../../server/store/sql-store.ts';
import { postgresUrl } from '../support/postgres.ts';
import { pgliteClient, sqlBackends, type OpenedSqlBackend } from '../support/sql-backends.ts';
import { startLifeSystem, type LifeSystem } from './system.ts';

export async function pgliteFromSeed(): Promise<OpenedSqlBackend> {
  const image = await readFile(seedPath(await loadMigrations()));
  const client = pgliteClient(new PGlite({ loadDataDir: new Blob([image]) }));
  await migrate(client);
  const store = sqlStore('pglite', client);
  return { store, sql: client, cleanup: () => store.close() };
}

export const modelStores = [
  { name: 'PGlite (from the seed)', available: true, open: pgliteFromSeed },
  { name: 'PostgreSQL', available: postgresUrl !== null, open: () => sqlBackends[1]!.open() },
];

/** Opens the store and starts the app on it before the block's tests, and closes both after; the system, once started. */
export function lifeSystemFor(open: () => Promise<OpenedSqlBackend>): () => LifeSystem {
  let opened: OpenedSqlBackend | undefined;
  let system: LifeSystem | undefined;
  beforeAll(async () => {
    opened = await open();
    system = await startLifeSystem(opened.store, opened.sql);
  });
  afterAll(async () => {
    await system?.close();
    await opened?.cleanup();
  });
  return () => system!;
}
