// Lighthouse (npm `lighthouse`) with Debian's Chromium against the production build: mobile and
// desktop, home + archive + one recap, median of 5 runs per page and category: Lighthouse's own
// guidance on score variability, since one run on a shared 2-core machine moves total blocking time
// by tens of milliseconds (LIGHTHOUSE_RUNS to change it).
//   npm run bench -- lighthouse
import * as chromeLauncher from 'chrome-launcher';
import lighthouse from 'lighthouse';
import desktopConfig from 'lighthouse/core/config/desktop-config.js';
import { CHROMIUM_FLAGS, CHROMIUM_PATH } from '../tests/support/chromium.ts';
import { startTestServer } from '../tests/support/server.ts';
import { recordResults } from './support/results.ts';

const PAGES = ['/', '/archive', '/weekly-recap-july-14'];
const RUNS = Number(process.env.LIGHTHOUSE_RUNS ?? 5);
const CATEGORIES = ['performance', 'accessibility', 'best-practices', 'seo'] as const;

/** Median of the runs that produced the figure; a run Lighthouse could not measure is left out. */
const median = (values: number[]) => {
  const measured = values.filter(Number.isFinite).sort((a, b) => a - b);
  return measured.length === 0 ? NaN : measured[Math.floor(measured.length / 2)]!;
};

/**
 * The server runs in this process, beside Lighthouse: every page and the files it links are fetched
 * a few times before Chromium starts, so its first answers (compiled on first use) do not share
 * the two cores with the first page's measured load.
 */
async function warmUp(base: string): Promise<void> {
  const assets = new Set<string>();
  for (let round = 0; round < 10; round++) {
    for (const path of [...PAGES, ...assets]) {
      const response = await fetch(base + path, { headers: { 'Accept-Encoding': 'gzip, br' } });
      const body = await response.text();
      if (!response.headers.get('content-type')?.startsWith('text/html')) continue;
      for (const match of body.matchAll(/(?:src|href|data-entry)="(\/[^"]+\.(?:js|css|svg))"/g)) assets.add(match[1]!);
    }
  }
}

/** One Lighthouse run; a run Lighthouse could not record (runtimeError) is tried again, twice at most. */
async function measuredRun(url: string, port: number, formFactor: 'mobile' | 'desktop') {
  for (let attempt = 1; attempt <= 3; attempt++) {
    const result = await lighthouse(url, { port, output: 'json', logLevel: 'error', onlyCategories: [...CATEGORIES] }, formFactor === 'desktop' ? desktopConfig : undefined);
    const lhr = result!.lhr;
    if (!lhr.runtimeError) return lhr;
    console.error(`${formFactor} ${url}: Lighthouse runtime error ${lhr.runtimeError.code}: ${lhr.runtimeError.message}${attempt < 3 ? '; retrying' : ''}`);
  }
  return null;
}

export async function runLighthouse(): Promise<void> {
  const server = await startTestServer({ config: { env: 'production' } });
  await warmUp(server.url);
  const chrome = await chromeLauncher.launch({
    chromePath: CHROMIUM_PATH,
    chromeFlags: [...CHROMIUM_FLAGS.filter((flag) => flag !== '--headless'), '--headless=new'],
  });
  const rows: string[] = [];
  const misses: string[] = [];
  try {
    // One unrecorded load of each page first: a browser just started has its font and style caches
    // to fill, which a reader's browser has long done; the first measured page would pay for it.
    for (const path of PAGES) await measuredRun(server.url + path, chrome.port, 'mobile');
    for (const formFactor of ['mobile', 'desktop'] as const) {
      const figures = new Map(PAGES.map((path) => [path, { scores: Object.fromEntries(CATEGORIES.map((c) => [c, [] as number[]])), lcp: [] as number[], tbt: [] as number[], cls: [] as number[] }]));
      // Rounds over the pages (/, /archive, recap, /, …) rather than all runs of one page and then
      // the next: what the machine does meanwhile (Lighthouse's own collections in this process among
      // it) falls on every page alike instead of on whichever page comes last.
      for (let round = 1; round <= RUNS; round++) {
        for (const path of PAGES) {
          const lhr = await measuredRun(server.url + path, chrome.port, formFactor);
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
          `| ${formFactor} | \`${path}\` | ${CATEGORIES.map((c) => median(page.scores[c]!)).join(' | ')} | ${median(page.lcp).toFixed(0)} | ${median(page.tbt).toFixed(0)} | ${median(page.cls).toFixed(3)} | ${page.scores.performance!.join(', ')} |`,
        );
      }
    }
  } finally {
    chrome.kill();
    await server.close();
  }
  await recordResults(
    'Lighthouse',
    'npm run bench -- lighthouse',
    `Lighthouse ${(await import('lighthouse/package.json', { with: { type: 'json' } })).default.version} with Debian Chromium (${CHROMIUM_PATH}), the production build served on loopback (simulated throttling, Lighthouse's defaults per form factor), median of ${RUNS} runs per page, taken in rounds over the three pages after one unrecorded load of each.

| form factor | page | performance | accessibility | best practices | SEO | LCP ms | TBT ms | CLS | performance, each run |
|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

${misses.length === 0 ? 'Every weighted audit passed on the last run of each page.' : `Weighted audits below 1 on the last run:\n\n${[...new Set(misses)].map((m) => `- ${m}`).join('\n')}`}`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await runLighthouse();
