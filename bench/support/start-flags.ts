// The node flags `npm start` (and the image's CMD, which a test keeps in step) runs the server
// with, read from package.json, so a bench measures the configuration production runs.
import { readFileSync } from 'node:fs';

const SERVER = 'dist/bin/server.js';

/** `override` (a space-separated list, e.g. from an env variable) instead, when it is set. */
export function startFlags(override?: string): string[] {
  if (override !== undefined) return override.split(' ').filter(Boolean);
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
  const start = manifest.scripts.start!;
  const command = new RegExp(`node ((?:--\\S+ )*)${SERVER.replaceAll('.', '\\.')}`).exec(start);
  if (!command) throw new Error(`package.json's start script does not run node … ${SERVER}: ${start}`);
  return command[1]!.split(' ').filter(Boolean);
}
