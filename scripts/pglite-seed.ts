// `npm run build`'s last step: the image a new embedded database starts from (server/store/pglite.ts,
// SEED_DIR): an in-memory PGlite with every migration in supabase/migrations applied, dumped as a
// gzipped tarball named after the migrations' digest. The directory is emptied first (images of
// earlier migrations go, and its time stamp tells scripts/ensure-build.ts when this step last ran).
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadMigrations } from '../server/store/migrate.ts';
import { createSeedImage, SEED_DIR, seedPath } from '../server/store/pglite.ts';

export async function buildPGliteSeed(): Promise<string> {
  const migrations = await loadMigrations();
  const target = seedPath(migrations);
  await mkdir(SEED_DIR, { recursive: true });
  for (const file of await readdir(SEED_DIR)) await rm(join(SEED_DIR, file), { force: true });
  await writeFile(target, await createSeedImage(migrations));
  return target;
}

if (import.meta.url === `file://${process.argv[1]}`) await buildPGliteSeed();
