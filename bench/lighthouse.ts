// Lighthouse (npm `lighthouse`) with Debian's Chromium against the production build: mobile and
// desktop, home + archive + one recap, median of 5 runs per page and category: Lighthouse's own
// guidance on score variability, since one run on a shared 2-core machine moves total blocking time
// by tens of milliseconds (LIGHTHOUSE_RUNS to change it).
//   npm run bench -- lighthouse
import * as chromeLauncher from 'chrome-launcher';
import lighthouse from 'lighthouse';
import desktopConfig from 'lighthouse/core/config/desktop-config.js';
import { CHROMIUM_FLAGS, CHROMIUM_PATH } from '../tests/support/browser.ts';
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
 * a few times first, so its first answers (compiled on first use) do not share the two cores with
 * the first page's measured load.
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
    for (const formFactor of ['mobile', 'desktop'] as const) {
      for (const path of PAGES) {
        const scores: Record<string, number[]> = Object.fromEntries(CATEGORIES.map((c) => [c, []]));
        const metrics: { lcp: number[]; tbt: number[]; cls: number[] } = { lcp: [], tbt: [], cls: [] };
        // A run Lighthouse could not record (runtimeError) is retried, up to two extra attempts.
        for (let run = 0, attempts = 0; run < RUNS && attempts < RUNS + 2; attempts++) {
          const result = await lighthouse(
            server.url + path,
            { port: chrome.port, output: 'json', logLevel: 'error', onlyCategories: [...CATEGORIES] },
            formFactor === 'desktop' ? desktopConfig : undefined,
          );
          const lhr = result!.lhr;
          if (lhr.runtimeError) {
            console.error(`${formFactor} ${path}: Lighthouse runtime error ${lhr.runtimeError.code}: ${lhr.runtimeError.message}; retrying`);
            continue;
          }
          run++;
          for (const category of CATEGORIES) scores[category]!.push(Math.round((lhr.categories[category]?.score ?? 0) * 100));
          metrics.lcp.push(lhr.audits['largest-contentful-paint']?.numericValue ?? NaN);
          metrics.tbt.push(lhr.audits['total-blocking-time']?.numericValue ?? NaN);
          metrics.cls.push(lhr.audits['cumulative-layout-shift']?.numericValue ?? NaN);
          if (run === RUNS) {
            for (const category of CATEGORIES) {
              for (const ref of lhr.categories[category]?.auditRefs ?? []) {
                const audit = lhr.audits[ref.id];
                if (ref.weight > 0 && audit && audit.score !== null && audit.score < 1) {
                  misses.push(`${formFactor} ${path} ${category}: ${audit.id} (${audit.title}, score ${audit.score})`);
                }
              }
            }
          }
          console.error(`${formFactor} ${path} run ${run}/${RUNS}: ${CATEGORIES.map((c) => scores[c]!.at(-1)).join(' / ')}`);
        }
        rows.push(
          `| ${formFactor} | \`${path}\` | ${CATEGORIES.map((c) => median(scores[c]!)).join(' | ')} | ${median(metrics.lcp).toFixed(0)} | ${median(metrics.tbt).toFixed(0)} | ${median(metrics.cls).toFixed(3)} |`,
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
    `Lighthouse ${(await import('lighthouse/package.json', { with: { type: 'json' } })).default.version} with Debian Chromium (${CHROMIUM_PATH}), the production build served on loopback (simulated throttling, Lighthouse's defaults per form factor), median of ${RUNS} runs per page.

| form factor | page | performance | accessibility | best practices | SEO | LCP ms | TBT ms | CLS |
|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

${misses.length === 0 ? 'Every weighted audit passed on the last run of each page.' : `Weighted audits below 1 on the last run:\n\n${[...new Set(misses)].map((m) => `- ${m}`).join('\n')}`}`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await runLighthouse();
