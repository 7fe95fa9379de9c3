// `npm run bench [-- NAME ...]`: runs the named benchmarks (default: all) and writes their figures
// to bench/RESULTS.md. Not part of CI: load and Lighthouse runs need the machine to themselves.
export {};

const SUITES: Record<string, () => Promise<unknown>> = {
  ssr: async () => (await import('./ssr-vs-static.ts')).runSsrVsStatic(),
  bundle: async () => (await import('./bundle-report.ts')).runBundleReport(),
  lighthouse: async () => (await import('./lighthouse.ts')).runLighthouse(),
  digest: async () => (await import('./digest.ts')).runDigestBench(),
  signup: async () => (await import('./signup.ts')).runSignupBench(),
  memory: async () => (await import('./memory.ts')).runMemoryBench(),
  audit: async () => (await import('./audit.ts')).runAudit(),
  scale: async () => (await import('./scale.ts')).runScaleBench(),
  runtime: async () => (await import('./runtime.ts')).runRuntimeBench(),
  report: async () => (await import('./report.ts')).runReportBench(),
};

const requested = process.argv.slice(2);
const unknown = requested.filter((name) => !(name in SUITES));
if (unknown.length > 0) {
  console.error(`Unknown benchmark: ${unknown.join(', ')}. Choose from: ${Object.keys(SUITES).join(', ')}`);
  process.exit(2);
}
for (const name of requested.length > 0 ? requested : Object.keys(SUITES)) {
  console.error(`==> ${name}`);
  await SUITES[name]!();
}
