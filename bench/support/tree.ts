// A tree to measure: this checkout ("after") or another revision prepared beside it ("before",
// bench/support/before-tree.ts). A bench takes one and finds there everything it runs: the root to
// run in, `npm start`'s environment and node flags as that tree's package.json says, its built files
// and its modules, so a before/after run compares the two trees' own configurations. A tree's
// migrations come with it: its server, its jobs and its store module (`load`) apply their own.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tsImport } from 'tsx/esm/api';
import { startCommand } from './start-flags.ts';

export interface Tree {
  /** "after" for this checkout, "before" for the revision it is compared with. */
  label: 'before' | 'after';
  /** The git revision, for a before tree (as given to --before). */
  ref?: string;
  root: string;
  /** The environment variables the tree's start script sets (glibc's allocator settings). */
  startEnv: Record<string, string>;
  /** The node flags of the tree's start script. */
  startFlags: string[];
  /** A path inside the tree, e.g. `path('dist/bin/server.js')`. */
  path: (relative: string) => string;
  /**
   * Imports one of the tree's TypeScript modules in this process (with its own dependencies), through
   * tsx's scoped import with the tree's own tsconfig.json: a tree outside this checkout is outside
   * this tsconfig's "include", and its .tsx files need their JSX settings.
   */
  load: (relative: string) => Promise<unknown>;
}

export function treeAt(root: string, label: Tree['label'], ref?: string): Tree {
  const start = startCommand(root);
  return {
    label,
    ref,
    root,
    startEnv: start.env,
    startFlags: start.flags,
    path: (relative) => join(root, relative),
    load: (relative) => tsImport(join(root, relative), { parentURL: import.meta.url, tsconfig: join(root, 'tsconfig.json') }) as Promise<unknown>,
  };
}

/** This checkout. */
export const currentTree = (): Tree => treeAt(fileURLToPath(new URL('../..', import.meta.url)), 'after');
