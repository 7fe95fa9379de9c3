// The node flags and environment `npm start` (and the image's CMD and ENV, which a test keeps in
// step) runs the server with, read from a tree's package.json, so a bench measures the
// configuration production runs (and, with --before, the configuration the earlier tree ran).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SERVER = 'dist/bin/server.js';
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** `VAR=value … node --flag … dist/bin/server.js` in the start script of the tree at `root`: the assignments and the flags. */
export function startCommand(root = REPO_ROOT): { env: Record<string, string>; flags: string[] } {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const start = manifest.scripts.start!;
  const command = new RegExp(`((?:[A-Z_]+=\\S+ )*)node ((?:--\\S+ )*)${SERVER.replaceAll('.', '\\.')}`).exec(start);
  if (!command) throw new Error(`${root}: package.json's start script does not run node … ${SERVER}: ${start}`);
  const env = Object.fromEntries(command[1]!.split(' ').filter(Boolean).map((assignment) => assignment.split('=', 2) as [string, string]));
  return { env, flags: command[2]!.split(' ').filter(Boolean) };
}

/** `override` (a space-separated list, e.g. from an env variable) instead, when it is set. */
export function startFlags(override?: string, root = REPO_ROOT): string[] {
  if (override !== undefined) return override.split(' ').filter(Boolean);
  return startCommand(root).flags;
}

/** The environment variables the start script sets for the server (glibc's allocator settings). */
export function startEnv(root = REPO_ROOT): Record<string, string> {
  return startCommand(root).env;
}
