// `npm start` builds first when the build is missing or older than any source file, so a fresh
// clone serves with one command and a stale build is never served by accident.
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const SOURCES = ['client', 'content', 'index.html', 'vite.config.ts', 'package-lock.json'];
const OUTPUTS = ['dist/client/index.html', 'dist/server/entry-server.js'];

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
if (builtAt() < sourcesChanged) {
  console.error(builtAt() === 0 ? 'No build found: building the site once (about a minute)…' : 'Sources changed since the last build: rebuilding…');
  execFileSync('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
}
