// Lighthouse (npm `lighthouse`) with Debian's Chromium against the production build: mobile and
// desktop, home + archive + one recap, median of 5 runs per page and category: Lighthouse's own
// guidance on score variability, since one run on a shared 2-core machine moves total blocking time
// by tens of milliseconds (LIGHTHOUSE_RUNS to change it). Every run is cold, as a reader's first
// visit after a deploy: the server just started (its own process, npm start's flags, nothing
// rendered yet), a browser just started with a fresh profile, no load before the measured one.
//   npm run bench -- lighthouse
import * as chromeLauncher from 'chrome-launcher';
import lighthouse from 'lighthouse';
import desktopConfig from 'lighthouse/core/config/desktop-config.js';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CHROMIUM_FLAGS, CHROMIUM_PATH } from '../tests/support/chromium.ts';
import { recordResults } from './support/results.ts';
import { startEnv, startFlags } from './support/start-flags.ts';

const PAGES = ['/', '/archive', '/weekly-recap-july-14'];
const RUNS = Number(process.env.LIGHTHOUSE_RUNS ?? 5);
const CATEGORIES = ['performance', 'accessibility', 'best-practices', 'seo'] as const;

/** Median of the runs that produced the figure; a run Lighthouse could not measure is left out. */
const median = (values: number[]) => {
  const measured = values.filter(Number.isFinite).sort((a, b) => a - b);
  return measured.length === 0 ? NaN : measured[Math.floor(measured.length / 2)]!;
};

const BENCH_SERVER = fileURLToPath(new URL('./support/bench-server.ts', import.meta.url));

/** The production app on a fresh embedded database, in a process of its own started with npm start's flags. */
async function startColdServer(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, [...startFlags(), '--import', 'tsx', BENCH_SERVER, '/', '--cold'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...startEnv(), ...process.env, NODE_ENV: 'production' },
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  const { port } = JSON.parse(line) as { port: number };
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
}

/**
 * One cold Lighthouse run of `path`: a server and a browser (fresh profile) started for it alone. A
 * run Lighthouse could not record (runtimeError) is tried again, cold again, twice at most.
 */
async function measuredRun(path: string, formFactor: 'mobile' | 'desktop') {
  for (let attempt = 1; attempt <= 3; attempt++) {
    const server = await startColdServer();
    const chrome = await chromeLauncher.launch({
      chromePath: CHROMIUM_PATH,
      chromeFlags: [...CHROMIUM_FLAGS.filter((flag) => flag !== '--headless'), '--headless=new'],
    });
    try {
      const options = { port: chrome.port, output: 'json' as const, logLevel: 'error' as const, onlyCategories: [...CATEGORIES] };
      const result = await lighthouse(server.url + path, options, formFactor === 'desktop' ? desktopConfig : undefined);
      const lhr = result!.lhr;
      if (!lhr.runtimeError) return lhr;
      console.error(`${formFactor} ${path}: Lighthouse runtime error ${lhr.runtimeError.code}: ${lhr.runtimeError.message}${attempt < 3 ? '; retrying' : ''}`);
    } finally {
      chrome.kill();
      server.stop();
    }
  }
  return null;
}

const worst = (values: number[]) => Math.min(...values.filter(Number.isFinite));

export async function runLighthouse(): Promise<void> {
  const rows: string[] = [];
  const misses: string[] = [];
  for (const formFactor of ['mobile', 'desktop'] as const) {
    const figures = new Map(PAGES.map((path) => [path, { scores: Object.fromEntries(CATEGORIES.map((c) => [c, [] as number[]])), lcp: [] as number[], tbt: [] as number[], cls: [] as number[] }]));
    // Rounds over the pages (/, /archive, recap, /, …) rather than all runs of one page and then
    // the next: what the machine does meanwhile (Lighthouse's own collections in this process among
    // it) falls on every page alike instead of on whichever page comes last.
    for (let round = 1; round <= RUNS; round++) {
      for (const path of PAGES) {
        const lhr = await measuredRun(path, formFactor);
        if (!lhr) continue;
        const page = figures.get(path)!;
        for (const category of CATEGORIES) page.scores[category]!.push(Math.round((lhr.categories[category]?.score ?? 0) * 100));
        page.lcp.push(lhr.audits['largest-contentful-paint']?.numericValue ?? NaN);
        page.tbt.push(lhr.audits['total-blocking-time']?.numericValue ?? NaN);
        page.cls.push(lhr.audits['cumulative-layout-shift']?.numericValue ?? NaN);
        if (round === RUNS) {
          for (const category of CATEGORIES) {
            for (const ref of lhr.categories[category]?.auditRefs ?? []) {
              const audit = lhr.audits[ref.id];
              if (ref.weight > 0 && audit && audit.score !== null && audit.score < 1) {
                misses.push(`${formFactor} ${path} ${category}: ${audit.id} (${audit.title}, score ${audit.score})`);
              }
            }
          }
        }
        console.error(`${formFactor} ${path} run ${round}/${RUNS}: ${CATEGORIES.map((c) => page.scores[c]!.at(-1)).join(' / ')}`);
      }
    }
    for (const [path, page] of figures) {
      rows.push(
        `| ${formFactor} | \`${path}\` | ${CATEGORIES.map((c) => `${median(page.scores[c]!)} (${worst(page.scores[c]!)})`).join(' | ')} | ${median(page.lcp).toFixed(0)} (${Math.max(...page.lcp).toFixed(0)}) | ${median(page.tbt).toFixed(0)} (${Math.max(...page.tbt).toFixed(0)}) | ${median(page.cls).toFixed(3)} | ${page.scores.performance!.join(', ')} |`,
      );
    }
  }
  await recordResults(
    'Lighthouse',
    'npm run bench -- lighthouse',
    `Lighthouse ${(await import('lighthouse/package.json', { with: { type: 'json' } })).default.version} with Debian Chromium (${CHROMIUM_PATH}), the production build served on loopback (simulated throttling, Lighthouse's defaults per form factor), median of ${RUNS} cold runs per page, taken in rounds over the three pages: each run on a server process just started (\`npm start\`'s flags, a fresh embedded database, nothing rendered before) and a browser just started with a fresh profile, with no load before the measured one. Each cell: the median, and in brackets the worst run.

| form factor | page | performance | accessibility | best practices | SEO | LCP ms | TBT ms | CLS | performance, each run |
|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

${misses.length === 0 ? 'Every weighted audit passed on the last run of each page.' : `Weighted audits below 1 on the last run:\n\n${[...new Set(misses)].map((m) => `- ${m}`).join('\n')}`}`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await runLighthouse();
