// A temporary copy of the repository with synthetic weeks added after the 24 real ones, for the
// scale benchmark (`npm run bench -- scale`) and the generated-weeks test. Never writes into the
// repository: the copy lives under the system's temp folder and borrows node_modules by symlink.
// The first synthetic week is scaffolded by the curator's own command (`npm run new-recap --
// --date 2026-02-02`, after a pause of 203 days), the rest weekly after it; each is filled in the
// way a curator would fill the scaffold, with text unique to its week.
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { addDays, recapPathFor } from '../../content/dates.ts';
import { recaps as realRecaps } from '../../content/index.ts';
import { scaffoldRecap } from '../../scripts/new-recap.ts';
import { writeRegistry } from '../../scripts/recap-registry.ts';

const run = promisify(execFile);
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The first week after the published history: a Monday in 2026, so its path carries the year. */
export const FIRST_SYNTHETIC_WEEK = '2026-02-02';
/** Left out of the copy: installed, built or local state. */
const SKIP = new Set(['node_modules', 'dist', 'data', '.git', '.tmp', 'coverage']);

/**
 * When the synthetic weeks are public: they run years past today, so each file says it was
 * published with the first of them (publishAt, content/publication.ts), except the coming weeks a
 * test asks for, which keep the usual time (their date at 09:00), years ahead.
 */
export const SYNTHETIC_PUBLISHED_AT = `${FIRST_SYNTHETIC_WEEK}T09:00:00Z`;

export interface WeekCard {
  date: string;
  path: string;
  title: string;
  headline: string;
  /** Not public yet: no publishAt in its file, and a date years ahead. */
  coming: boolean;
}

export interface ScaledCopy {
  root: string;
  /** The synthetic weeks, oldest first. */
  synthetic: WeekCard[];
  /** Runs a Node script of the copy (tsx loaded), with the copy as working directory. */
  node(args: readonly string[], env?: Record<string, string>): Promise<{ stdout: string; stderr: string }>;
  remove(): Promise<void>;
}

/** The text a curator writes into week number `n`'s scaffold: unique words per week, so a test can look for them. */
export function fillScaffold(source: string, n: number, publishAt?: string): { source: string; title: string; headline: string } {
  const title = `Synthetic Week ${n} Roundup of Quiet Tools`;
  const headline = `Week ${n} Brings Calm Builders Forward`;
  let filled = (publishAt ? source.replace(/^( {2}path: '[^']+',\n)/m, `$1  publishAt: '${publishAt}',\n`) : source)
    .replace("headline: ''", `headline: '${headline}'`)
    .replace("title: ''", `title: '${title}'`)
    .replace("intro: ''", `intro: 'Ten launches from synthetic week ${n}, written to measure the site at scale.'`);
  for (let rank = 1; rank <= 10; rank++) {
    filled = filled.replace(
      `{ rank: ${rank}, name: '', url: '', tagline: '', upvotes: 0, note: '' }`,
      `{ rank: ${rank}, name: 'Gadget ${n}-${rank}', url: 'https://launched.lovable.app/products/gadget-${n}-${rank}', tagline: 'Keeps week ${n} tidy, item ${rank}.', upvotes: ${200 - rank * 7}, note: 'A steady pick for week ${n}, rank ${rank}.' }`,
    );
  }
  return { source: filled, title, headline };
}

/**
 * Copies the repository (or the tree at `from`, e.g. an earlier revision prepared by the bench) and
 * adds `totalWeeks - 24` synthetic weeks (none when totalWeeks is 24), the newest `comingWeeks` of
 * them not public yet.
 */
export async function makeScaledCopy(totalWeeks: number, { comingWeeks = 0, from = REPO_ROOT }: { comingWeeks?: number; from?: string } = {}): Promise<ScaledCopy> {
  const root = await mkdtemp(join(tmpdir(), `launched-weekly-${totalWeeks}-weeks-`));
  await cp(from, root, { recursive: true, filter: (source) => !SKIP.has(relative(from, source).split('/')[0] ?? '') });
  await symlink(join(from, 'node_modules'), join(root, 'node_modules'));
  const node = (args: readonly string[], env: Record<string, string> = {}) =>
    run(process.execPath, ['--import', 'tsx', ...args], { cwd: root, env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 });

  const recapsDir = join(root, 'content', 'recaps');
  const synthetic: WeekCard[] = [];
  const count = totalWeeks - realRecaps.length;
  if (count > 0) {
    // The first one the way the curator does it.
    await node(['scripts/new-recap.ts', '--date', FIRST_SYNTHETIC_WEEK]);
    const firstFile = join(recapsDir, `${FIRST_SYNTHETIC_WEEK}.ts`);
    const isComing = (n: number) => n > count - comingWeeks;
    const first = fillScaffold(await readFile(firstFile, 'utf8'), 1, isComing(1) ? undefined : SYNTHETIC_PUBLISHED_AT);
    await writeFile(firstFile, first.source);
    synthetic.push({ date: FIRST_SYNTHETIC_WEEK, path: recapPathFor(FIRST_SYNTHETIC_WEEK), title: first.title, headline: first.headline, coming: isComing(1) });
    // The rest straight from the same scaffold, one registry write at the end.
    let date = FIRST_SYNTHETIC_WEEK;
    for (let n = 2; n <= count; n++) {
      date = addDays(date, 7);
      const week = fillScaffold(scaffoldRecap(date, 7), n, isComing(n) ? undefined : SYNTHETIC_PUBLISHED_AT);
      await writeFile(join(recapsDir, `${date}.ts`), week.source);
      synthetic.push({ date, path: recapPathFor(date), title: week.title, headline: week.headline, coming: isComing(n) });
    }
    await writeRegistry(recapsDir);
  }
  return { root, synthetic, node, remove: () => rm(root, { recursive: true, force: true }) };
}

/** The client and server bundles (what `npm run build` does before the share images), timed. */
export async function viteBuild(copy: ScaledCopy): Promise<number> {
  // The copy's own Vite (its node_modules are the tree's it was copied from).
  const vite = join(copy.root, 'node_modules', 'vite', 'bin', 'vite.js');
  // A production build whoever calls it (a test runner sets NODE_ENV=test, which would bundle React's development build).
  const options = { cwd: copy.root, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NODE_ENV: 'production' } };
  const started = performance.now();
  await run(process.execPath, [vite, 'build', '--logLevel', 'warn'], options);
  await run(process.execPath, [vite, 'build', '--ssr', 'client/entry-server.tsx', '--outDir', 'dist/server', '--logLevel', 'warn'], options);
  return performance.now() - started;
}
