// The embedded default: PGlite (Postgres compiled to WebAssembly) in DATA_DIR/db. PGlite has no
// lock of its own, and two processes on one data directory silently lose writes, so this module
// takes the owner lock first (owner-lock.ts) and refuses to open a directory another live process owns.
import { PGlite } from '@electric-sql/pglite';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadMigrations, migrate, type Migration } from './migrate.ts';
import type { QueryResult, SqlClient, SqlExecutor } from './sql-client.ts';
import { sqlStore } from './sql-store.ts';
import { takeOwnerLock } from './owner-lock.ts';
import type { Store } from './types.ts';

class PGliteClient implements SqlClient {
  constructor(private readonly db: PGlite) {}

  static executor(db: Pick<PGlite, 'query' | 'exec'>): SqlExecutor {
    return {
      async query<Row>(sql: string, params: unknown[] = []): Promise<QueryResult<Row>> {
        const result = await db.query<Row>(sql, params);
        return { rows: result.rows, affectedRows: result.affectedRows ?? 0 };
      },
      async exec(sql: string) {
        await db.exec(sql);
      },
    };
  }

  query<Row>(sql: string, params?: unknown[]) {
    return PGliteClient.executor(this.db).query<Row>(sql, params);
  }

  exec(sql: string) {
    return PGliteClient.executor(this.db).exec(sql);
  }

  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) => work(PGliteClient.executor(tx)));
  }

  async close() {
    await this.db.close();
  }
}

/**
 * PostgreSQL's defaults reserve 128 MB of shared buffers, which inside PGlite is WebAssembly memory
 * the process keeps for good. A newsletter's tables, even at a hundred thousand subscribers, fit
 * in a small fraction of that (the runtime bench measures the server's resident memory).
 */
const SMALL_HOST_SETTINGS = ['-c', 'shared_buffers=16MB'];

/**
 * A new database starts from an image of one already created and migrated, made by the build
 * (`scripts/pglite-seed.ts`, `npm run build`'s last step): PostgreSQL's initdb inside WebAssembly
 * and the first migration take seconds; unpacking the image takes a fraction of that. The image is
 * used only when it was made from exactly the migrations in supabase/migrations (their digest is
 * its name), so an edited or added migration never leaves a new database behind; without a
 * matching image, PGlite runs initdb as before. `migrate` runs afterwards either way.
 */
export const SEED_DIR = fileURLToPath(new URL('../../dist/pglite/', import.meta.url));

/** The digest of the migrations an image holds: their versions, names and SQL, in order. */
export function migrationsDigest(migrations: readonly Migration[]): string {
  const hash = createHash('sha256');
  for (const migration of migrations) hash.update(`${migration.version}\0${migration.name}\0${migration.sql}\0`);
  return hash.digest('hex').slice(0, 16);
}

export const seedPath = (migrations: readonly Migration[]) => join(SEED_DIR, `seed-${migrationsDigest(migrations)}.tar.gz`);

/** The build's image of a database with exactly `migrations` applied; none when the build made none for them. */
export async function seedImage(migrations: readonly Migration[]): Promise<Blob | undefined> {
  const image = await readFile(seedPath(migrations)).catch(() => null);
  return image ? new Blob([image]) : undefined;
}

/** The image a database at `dbPath` is to start from: none when it exists already or no image matches `migrations`. */
export async function seedFor(dbPath: string, migrations: readonly Migration[]): Promise<Blob | undefined> {
  if (existsSync(join(dbPath, 'PG_VERSION'))) return undefined;
  return seedImage(migrations);
}

/** A new in-memory database with every migration applied, as a gzipped tarball of its data directory. */
export async function createSeedImage(migrations: Migration[]): Promise<Uint8Array> {
  const db = await PGlite.create();
  try {
    await migrate(new PGliteClient(db), migrations);
    return new Uint8Array(await (await db.dumpDataDir('gzip')).arrayBuffer());
  } finally {
    await db.close();
  }
}

async function openOnDisk(dataDir: string, migrations: readonly Migration[]): Promise<{ db: PGlite; releaseLock: () => Promise<void> }> {
  await mkdir(dataDir, { recursive: true });
  const dbPath = join(dataDir, 'db');
  const releaseLock = await takeOwnerLock(dataDir, dbPath);
  try {
    const db = new PGlite(dbPath, { startParams: [...PGlite.defaultStartParams, ...SMALL_HOST_SETTINGS], loadDataDir: await seedFor(dbPath, migrations) });
    await db.waitReady;
    return { db, releaseLock };
  } catch (error) {
    await releaseLock();
    throw error;
  }
}

/**
 * Opens (creating and migrating if needed) the embedded database; `dataDir` null = in memory,
 * which starts from the build's image too, since the tests open many of them.
 */
export async function openPGliteStore(dataDir: string | null): Promise<Store> {
  const migrations = await loadMigrations();
  const { db, releaseLock } =
    dataDir === null ? { db: new PGlite({ loadDataDir: await seedImage(migrations) }), releaseLock: async () => {} } : await openOnDisk(dataDir, migrations);
  const client = new PGliteClient(db);
  await migrate(client, migrations);
  return sqlStore('pglite', {
    query: (sql, params) => client.query(sql, params),
    exec: (sql) => client.exec(sql),
    transaction: (work) => client.transaction(work),
    close: async () => {
      await client.close();
      await releaseLock();
    },
  });
}
