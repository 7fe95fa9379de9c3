// What each chunk of the client build weighs, gzipped, and what a first visit loads.
//   npm run bench -- bundle
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { firstVisitScripts } from '../scripts/first-visit-scripts.ts';
import { CLIENT_DIST } from '../server/site/load-renderer.ts';
import { recordResults } from './support/results.ts';

export async function runBundleReport(): Promise<void> {
  const assets = join(CLIENT_DIST, 'assets');
  const files = (await readdir(assets)).filter((f) => /\.(js|css)$/.test(f));
  const sizes = await Promise.all(
    files.map(async (file) => {
      const text = await readFile(join(assets, file));
      return { file, raw: text.length, gzip: gzipSync(text, { level: 9 }).length };
    }),
  );
  sizes.sort((a, b) => b.gzip - a.gzip);
  const html = await readFile(join(CLIENT_DIST, 'index.html'), 'utf8');
  const loaded = await firstVisitScripts(CLIENT_DIST, html);
  const firstVisit = sizes.filter((s) => s.file.endsWith('.css') ? html.includes(s.file) : loaded.includes(`/assets/${s.file}`));
  const kb = (n: number) => (n / 1024).toFixed(1);
  const weekChunks = sizes.filter((s) => /^\d{4}-\d{2}-\d{2}-/.test(s.file));
  await recordResults(
    'Client bundle',
    'npm run build && npm run bench -- bundle',
    `First visit (the scripts the page's loader starts: the entry, its static imports and the chunks it loads to hydrate; the stylesheet): **JS ${kb(firstVisit.filter((s) => s.file.endsWith('.js')).reduce((n, s) => n + s.gzip, 0))} KB gzipped, CSS ${kb(firstVisit.filter((s) => s.file.endsWith('.css')).reduce((n, s) => n + s.gzip, 0))} KB gzipped** (budget 110 KB / 15 KB; tests/site/bundle-budget.test.ts enforces it in CI).

| file | raw KB | gzip KB | loaded |
|---|---|---|---|
${sizes
  .filter((s) => !/^\d{4}-\d{2}-\d{2}-/.test(s.file))
  .map((s) => `| ${s.file} | ${kb(s.raw)} | ${kb(s.gzip)} | ${firstVisit.includes(s) ? 'first visit' : 'on demand'} |`)
  .join('\n')}
${
  weekChunks.length > 0
    ? `| ${weekChunks.length} week chunks | ${kb(weekChunks.reduce((n, s) => n + s.raw, 0) / weekChunks.length)} avg | ${kb(weekChunks.reduce((n, s) => n + s.gzip, 0) / weekChunks.length)} avg | on client-side navigation to that week |`
    : '| (no week chunks: a week’s text arrives as route data, /data/recaps/<slug>.json) | | | |'
}`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await runBundleReport();
