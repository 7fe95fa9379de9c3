// `npm run bench [-- NAME ...] [--before REF]`: runs the named benchmarks (default: all) and writes
// their figures to bench/RESULTS.md. Not part of CI: load and Lighthouse runs need the machine to
// themselves. With `--before REF` (any git revision) the benchmarks that can measure REF's tree too
// do, in the same run, and their tables give before, after and after/before.
import { prepareBeforeTree } from './support/before-tree.ts';
import type { Tree } from './support/tree.ts';

type Suite = (before?: Tree) => Promise<unknown>;

const SUITES: Record<string, Suite> = {
  ssr: async (before) => (await import('./ssr-vs-static.ts')).runSsrVsStatic(before),
  bundle: async () => (await import('./bundle-report.ts')).runBundleReport(),
  lighthouse: async () => (await import('./lighthouse.ts')).runLighthouse(),
  digest: async (before) => (await import('./digest.ts')).runDigestBench(before),
  signup: async (before) => (await import('./signup.ts')).runSignupBench(before),
  memory: async () => (await import('./memory.ts')).runMemoryBench(),
  audit: async () => (await import('./audit.ts')).runAudit(),
  scale: async (before) => (await import('./scale.ts')).runScaleBench(before),
  runtime: async (before) => (await import('./runtime.ts')).runRuntimeBench(before),
  report: async (before) => (await import('./report.ts')).runReportBench(before),
  model: async () => (await import('./model.ts')).runModelBench(),
  monday: async () => (await import('./monday.ts')).runMondayBench(),
};
/** The benchmarks that measure a before tree beside this one. */
const COMPARES = new Set(['runtime', 'ssr', 'signup', 'report', 'digest', 'scale']);

const args = process.argv.slice(2);
const beforeAt = args.indexOf('--before');
const beforeRef = beforeAt === -1 ? undefined : args[beforeAt + 1];
if (beforeAt !== -1 && (!beforeRef || beforeRef.startsWith('--'))) {
  console.error('--before needs a git revision, e.g. --before 84c19e3');
  process.exit(2);
}
const requested = args.filter((_, i) => beforeAt === -1 || (i !== beforeAt && i !== beforeAt + 1));
const unknown = requested.filter((name) => !(name in SUITES));
if (unknown.length > 0) {
  console.error(`Unknown benchmark: ${unknown.join(', ')}. Choose from: ${Object.keys(SUITES).join(', ')}`);
  process.exit(2);
}
/** Run only when named: the model's lives and the simulated Mondays take hours at their default sizes, and they check rules, not speed. */
const ONLY_WHEN_NAMED = new Set(['model', 'monday']);
const names = requested.length > 0 ? requested : Object.keys(SUITES).filter((name) => !ONLY_WHEN_NAMED.has(name));
const cannot = names.filter((name) => !COMPARES.has(name));
if (beforeRef && cannot.length > 0) {
  console.error(`--before is supported by ${[...COMPARES].join(', ')}, not by ${cannot.join(', ')}: name the benchmarks to compare.`);
  process.exit(2);
}

const before = beforeRef ? await prepareBeforeTree(beforeRef) : undefined;
try {
  for (const name of names) {
    console.error(`==> ${name}${before ? ` (before: ${before.ref}, after: this checkout)` : ''}`);
    await SUITES[name]!(before);
  }
} finally {
  await before?.remove();
}
