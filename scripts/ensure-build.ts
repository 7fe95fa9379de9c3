// `npm start` (and the compiled CLIs' scripts) build first when the build is missing or older than
// any source file, so a fresh clone serves with one command and a stale build is never served by
// accident. Node runs this file itself (its TypeScript is only erasable type annotations): no tsx,
// so it works where only production dependencies are installed. There it cannot build, and says so.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const SOURCES = [
  'client',
  'shared',
  'content',
  'bin',
  'server',
  'jobs',
  'public',
  'index.html',
  'vite.config.ts',
  'tsconfig.json',
  'package.json',
  'package-lock.json',
  'scripts/share-images.ts',
  'scripts/build-node.ts',
  'scripts/pglite-seed.ts',
  'supabase/migrations',
];
// The last file each build step writes: a step that failed leaves its output older or missing.
const OUTPUTS = ['dist/client/index.html', 'dist/server/entry-server.js', 'dist/client/share/site.png', 'dist/bin/server.js', 'dist/pglite'];

function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((newest, name) => Math.max(newest, newestMtime(join(path, name))), stat.mtimeMs);
}

function builtAt(): number {
  try {
    return Math.min(...OUTPUTS.map((file) => statSync(join(root, file)).mtimeMs));
  } catch {
    return 0;
  }
}

const sourcesChanged = Math.max(...SOURCES.map((source) => newestMtime(join(root, source))));
// --quiet (the test run) prints the build's output only when it fails.
const quiet = process.argv.includes('--quiet');
const canBuild = existsSync(join(root, 'node_modules/vite/package.json'));
if (builtAt() === 0 && !canBuild) {
  console.error('The site is not built and the build tools are not installed (production dependencies only). Run `npm ci` and `npm run build` first, or build the image.');
  process.exit(1);
}
// With production dependencies only (an image, a pruned deploy), the build that is there is the
// one shipped: a newer timestamp on a source (a copied tree, `npm prune` touching the manifest)
// is not a reason to refuse to start.
if (canBuild && builtAt() < sourcesChanged) {
  console.error(builtAt() === 0 ? 'No build found: building the site once…' : 'Sources changed since the last build: rebuilding…');
  try {
    // Always a production build: an inherited NODE_ENV=test (the test run) would bundle React's
    // development build, three times the size and not what readers get.
    execFileSync('npm', ['run', 'build'], {
      cwd: root,
      env: { ...process.env, NODE_ENV: 'production' },
      // The build's progress goes to stderr: a command's own output (`npm run digest -- --json`)
      // must be all that reaches stdout, even on the run that builds first.
      stdio: ['ignore', quiet ? 'pipe' : 2, quiet ? 'pipe' : 'inherit'],
    });
  } catch (error) {
    const failed = error as { stdout?: Buffer; stderr?: Buffer };
    if (quiet) process.stderr.write(`${failed.stdout ?? ''}${failed.stderr ?? ''}`);
    console.error('The build failed; see above.');
    process.exit(1);
  }
}
