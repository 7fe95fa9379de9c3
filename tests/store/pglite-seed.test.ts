// A new embedded database starts from the image `npm run build` makes of the current migrations
// (scripts/pglite-seed.ts), not from PostgreSQL's initdb: the database opened in a fresh DATA_DIR
// carries the image's system identifier (initdb draws a new one every time) and every migration.
// An image of other migrations, or a database that exists already, is never loaded.
import { PGlite } from '@electric-sql/pglite';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, type Migration } from '../../server/store/migrate.ts';
import { openPGliteStore, seedFor, seedPath } from '../../server/store/pglite.ts';
import { buildPGliteSeed } from '../../scripts/pglite-seed.ts';

async function systemIdentifier(db: PGlite): Promise<string> {
  const { rows } = await db.query<{ id: string }>('select system_identifier::text as id from pg_control_system()');
  return rows[0]!.id;
}

describe('the embedded database from the build-time image', () => {
  let dir: string;
  let migrations: Migration[];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'launched-weekly-seed-'));
    migrations = await loadMigrations();
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('the build made an image of exactly the current migrations', () => {
    expect(existsSync(seedPath(migrations)), seedPath(migrations)).toBe(true);
  });

  it('a fresh DATA_DIR opens as the image, with every migration recorded', async () => {
    const image = new PGlite({ loadDataDir: new Blob([readFileSync(seedPath(migrations))]) });
    const imageId = await systemIdentifier(image);
    await image.close();

    const dataDir = join(dir, 'fresh');
    const store = await openPGliteStore(dataDir);
    await store.close();
    const db = new PGlite(join(dataDir, 'db'));
    try {
      expect(await systemIdentifier(db)).toBe(imageId);
      const { rows } = await db.query<{ version: string }>('select version from public.app_migrations order by version');
      expect(rows.map((row) => row.version)).toEqual(migrations.map((m) => m.version));
    } finally {
      await db.close();
    }
  });

  it('is not used for an existing database or for other migrations', async () => {
    const fresh = join(dir, 'never-opened', 'db');
    expect(await seedFor(fresh, migrations)).toBeInstanceOf(Blob);
    const edited = migrations.map((m, i) => (i === migrations.length - 1 ? { ...m, sql: `${m.sql}\n-- edited` } : m));
    expect(await seedFor(fresh, edited)).toBeUndefined();
    expect(await seedFor(fresh, migrations.slice(0, -1))).toBeUndefined();
    expect(await seedFor(join(dir, 'fresh', 'db'), migrations)).toBeUndefined();
  });

  // initdb draws a new system identifier every time: the same one twice means the image was copied, not made again.
  it('a second build copies the image from its cache; without the cache it is made anew', async () => {
    const seedDir = join(dir, 'build-seed');
    const cacheDir = join(dir, 'build-cache');
    const identifierOf = async (path: string) => {
      const db = new PGlite({ loadDataDir: new Blob([readFileSync(path)]) });
      try {
        return await systemIdentifier(db);
      } finally {
        await db.close();
      }
    };
    const first = await identifierOf(await buildPGliteSeed({ seedDir, cacheDir }));
    const second = await identifierOf(await buildPGliteSeed({ seedDir, cacheDir }));
    expect(second).toBe(first);
    await rm(cacheDir, { recursive: true, force: true });
    const remade = await identifierOf(await buildPGliteSeed({ seedDir, cacheDir }));
    expect(remade).not.toBe(first);
  }, 60_000);
});
