// `npm start` builds first when the build is missing or older than any source file, so a fresh
// clone serves with one command and a stale build is never served by accident.
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const SOURCES = ['client', 'content', 'public', 'index.html', 'vite.config.ts', 'package.json', 'package-lock.json', 'scripts/share-images.ts'];
// The last file each build step writes: a step that failed leaves its output older or missing.
const OUTPUTS = ['dist/client/index.html', 'dist/server/entry-server.js', 'dist/client/share/site.png'];

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
if (builtAt() < sourcesChanged) {
  console.error(builtAt() === 0 ? 'No build found: building the site once…' : 'Sources changed since the last build: rebuilding…');
  try {
    // Always a production build: an inherited NODE_ENV=test (the test run) would bundle React's
    // development build, three times the size and not what readers get.
    execFileSync('npm', ['run', 'build'], {
      cwd: root,
      env: { ...process.env, NODE_ENV: 'production' },
      stdio: ['ignore', quiet ? 'pipe' : 'inherit', quiet ? 'pipe' : 'inherit'],
    });
  } catch (error) {
    const failed = error as { stdout?: Buffer; stderr?: Buffer };
    if (quiet) process.stderr.write(`${failed.stdout ?? ''}${failed.stderr ?? ''}`);
    console.error('The build failed; see above.');
    process.exit(1);
  }
}
