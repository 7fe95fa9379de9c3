// `npm run build`'s last step: the image a new embedded database starts from (server/store/pglite.ts,
// SEED_DIR): an in-memory PGlite with every migration in supabase/migrations applied, dumped as a
// gzipped tarball named after the migrations' digest. The directory is emptied first (images of
// earlier migrations go, and its time stamp tells scripts/ensure-build.ts when this step last ran).
//
// Making the image (initdb and every migration inside WebAssembly) is the build's costliest step
// and its result depends only on the migrations and on PGlite's version, so it is kept in a cache
// outside the repository (node_modules/.cache, as the share images) and copied from there while
// neither changes.
import { readFileSync } from 'node:fs';
import { copyFile, mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadMigrations } from '../server/store/migrate.ts';
import { createSeedImage, SEED_DIR, seedPath } from '../server/store/pglite.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
export const SEED_CACHE_DIR = join(root, 'node_modules/.cache/launched-weekly/pglite-seed');

/** The PGlite the lock file installs: an image made by another version is made again. */
function pgliteVersion(): string {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
  return lock.packages['node_modules/@electric-sql/pglite']?.version ?? 'unknown';
}

async function emptyDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const file of await readdir(dir)) await rm(join(dir, file), { force: true });
}

/** Writes the image for the current migrations into `seedDir`, from the cache when it holds one; the path written. */
export async function buildPGliteSeed({ seedDir = SEED_DIR, cacheDir = SEED_CACHE_DIR } = {}): Promise<string> {
  const migrations = await loadMigrations();
  const name = basename(seedPath(migrations));
  const target = join(seedDir, name);
  const cached = join(cacheDir, `pglite-${pgliteVersion()}-${name}`);
  await emptyDir(seedDir);
  const hit = await copyFile(cached, target).then(
    () => true,
    () => false,
  );
  if (hit) return target;
  const image = await createSeedImage(migrations);
  await writeFile(target, image);
  // One image kept: those of earlier migrations or PGlite versions are never used again. Written
  // whole or not at all, so a build stopped halfway leaves no half image to copy.
  await emptyDir(cacheDir);
  await writeFile(`${cached}.partial`, image);
  await rename(`${cached}.partial`, cached);
  return target;
}

if (import.meta.url === `file://${process.argv[1]}`) await buildPGliteSeed();
