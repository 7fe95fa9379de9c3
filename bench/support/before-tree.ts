// The tree a before/after run compares with (`npm run bench -- NAME --before REF`): REF's files
// exported with `git archive` into a temporary folder, installed with `npm ci` and built with its own
// `npm run build`, so it runs exactly as that revision ran. Needs only git, Node and the npm
// registry, as a fresh clone on a fresh machine has. Prepared once per run and removed at its end.
// BENCH_BEFORE_TREE=DIR uses a tree prepared earlier instead (e.g. kept with BENCH_BEFORE_KEEP=1),
// and leaves it in place.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { treeAt, type Tree } from './tree.ts';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Runs a command with its output on stderr (the bench's progress), failing on a non-zero exit. */
function run(command: string, args: string[], cwd: string): Promise<void> {
  console.error(`[before] ${cwd}$ ${command} ${args.join(' ')}`);
  // The bench's own NODE_ENV (a test runner's "test") must not change how the tree installs or builds.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NODE_ENV'));
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', process.stderr, process.stderr] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`[before] ${command} ${args.join(' ')} exited with ${code}`))));
  });
}

export interface BeforeTree extends Tree {
  remove(): Promise<void>;
}

export async function prepareBeforeTree(ref: string): Promise<BeforeTree> {
  const given = process.env.BENCH_BEFORE_TREE;
  if (given) {
    console.error(`[before] using the tree prepared in ${given} (BENCH_BEFORE_TREE) as ${ref}`);
    return { ...treeAt(given, 'before', ref), remove: async () => {} };
  }
  const started = performance.now();
  const root = await mkdtemp(join(tmpdir(), 'launched-weekly-before-'));
  const remove = async () => {
    if (process.env.BENCH_BEFORE_KEEP) return console.error(`[before] kept ${root} (BENCH_BEFORE_KEEP)`);
    console.error(`[before] removing ${root}`);
    await rm(root, { recursive: true, force: true, maxRetries: 5 });
  };
  try {
    // One shell pipe, so the archive streams into tar without a temporary file.
    await run('sh', ['-c', `git -C '${REPO_ROOT}' archive --format=tar "$0" | tar -x -C '${root}'`, ref], REPO_ROOT);
    await run('npm', ['ci', '--no-audit', '--no-fund'], root);
    await run('npm', ['run', 'build'], root);
  } catch (error) {
    await remove();
    throw error;
  }
  console.error(`[before] ${ref} ready in ${root} after ${((performance.now() - started) / 1000).toFixed(0)} s`);
  return { ...treeAt(root, 'before', ref), remove };
}
