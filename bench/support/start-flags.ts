// The node flags and environment `npm start` (and the image's CMD and ENV, which a test keeps in
// step) runs the server with, read from package.json, so a bench measures the configuration
// production runs.
import { readFileSync } from 'node:fs';

const SERVER = 'dist/bin/server.js';

/** `VAR=value … node --flag … dist/bin/server.js` in the start script: the assignments and the flags. */
function startCommand(): { env: Record<string, string>; flags: string[] } {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
  const start = manifest.scripts.start!;
  const command = new RegExp(`((?:[A-Z_]+=\\S+ )*)node ((?:--\\S+ )*)${SERVER.replaceAll('.', '\\.')}`).exec(start);
  if (!command) throw new Error(`package.json's start script does not run node … ${SERVER}: ${start}`);
  const env = Object.fromEntries(command[1]!.split(' ').filter(Boolean).map((assignment) => assignment.split('=', 2) as [string, string]));
  return { env, flags: command[2]!.split(' ').filter(Boolean) };
}

/** `override` (a space-separated list, e.g. from an env variable) instead, when it is set. */
export function startFlags(override?: string): string[] {
  if (override !== undefined) return override.split(' ').filter(Boolean);
  return startCommand().flags;
}

/** The environment variables the start script sets for the server (glibc's allocator settings). */
export function startEnv(): Record<string, string> {
  return startCommand().env;
}
