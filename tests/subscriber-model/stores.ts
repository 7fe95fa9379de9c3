// The stores a generated life runs on: PGlite from the build's seed image (every migration already
// applied, as a new embedded database starts) and PostgreSQL, each with a direct SQL connection.
import { readFile } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { loadMigrations, migrate } from '../../server/store/migrate.ts';
import { seedPath } from '../../server/store/pglite.ts';
import { sqlStore } from '../../server/store/sql-store.ts';
import { pgliteClient, type OpenedSqlBackend } from '../support/sql-backends.ts';

export async function pgliteFromSeed(): Promise<OpenedSqlBackend> {
  const image = await readFile(seedPath(await loadMigrations()));
  const client = pgliteClient(new PGlite({ loadDataDir: new Blob([image]) }));
  await migrate(client);
  const store = sqlStore('pglite', client);
  return { store, sql: client, cleanup: () => store.close() };
}
