// Ten years of Mondays: the site's costs at 24 weeks (the real content) and at 520 (the real weeks
// plus 496 synthetic ones from 2026-02-02 on), each in a temporary copy of the repository (never
// in the repository itself; bench/support/scale-copy.ts).
//   npm run bench -- scale            (SCALE_WEEKS=520 by default)
// Records per size: build time (Vite client + server, share images, and the whole `npm run build`:
// goal at 520 weeks < 30 s), first-visit JS per page type,
// archive HTML size, time from starting the server to its first answered page, and the server's
// resident memory after serving each page type once (the copy's compiled server, started as
// its `npm start` starts it).
// With `--before REF` REF's tree is copied and grown to the large size too, built the same way, and
// started in the same turns; its column and a before | after | after/before table join the tables.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { firstVisitScripts } from '../scripts/first-visit-scripts.ts';
import { freePort } from '../scripts/free-port.ts';
import { benchCommand, comparisonTable } from './support/compare.ts';
import { goalLines } from './support/goals.ts';
import { recordResults } from './support/results.ts';
import { startCommand } from './support/start-flags.ts';
import { makeScaledCopy, REPO_ROOT, viteBuild, type ScaledCopy } from './support/scale-copy.ts';
import type { Tree } from './support/tree.ts';

const run = promisify(execFile);

const STARTS = 5;
const kb = (bytes: number) => (bytes / 1024).toFixed(1);
const signed = (figure: string) => (figure.startsWith('-') ? figure : `+${figure}`);
const gz = (data: string | Buffer) => gzipSync(data, { level: 9 }).length;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

interface Figures {
  weeks: number;
  viteMs: number;
  images: { ms: number; line: string };
  imagesAgain: { ms: number; line: string };
  wholeBuildMs: number;
  firstAnswerMs: number[];
  rssMb: number;
  rssRuns: number[];
  pages: { type: string; path: string; jsGzip: number; htmlBytes: number; htmlGzip: number; status: number }[];
  archiveJsonGzip: number;
  contentLoad: { tsx: Load; bundled: Load };
}

/** Loading and validating the content in a fresh process: milliseconds, and resident MB after a full GC. */
interface Load {
  ms: number;
  rssMb: number;
}

const LOAD_PROBE = "const t = performance.now(); await import(process.argv[1]); const ms = performance.now() - t; globalThis.gc(); console.log(JSON.stringify({ ms, rssMb: process.memoryUsage().rss / 1048576 }))";

/**
 * Where the start-up time goes as weeks are added: content/index.ts imports one module per week.
 * Under tsx (how `npm start` runs the server today) each is transformed and linked on its own;
 * bundled into one module (what a compiled server does), they are one file to parse.
 */
async function measureContentLoad(copy: ScaledCopy): Promise<{ tsx: Load; bundled: Load }> {
  const esbuild = join(REPO_ROOT, 'node_modules', '.bin', 'esbuild');
  const bundle = join(copy.root, 'dist', 'content-probe.mjs');
  await run(esbuild, ['content/index.ts', '--bundle', '--platform=node', '--format=esm', '--packages=external', `--outfile=${bundle}`, '--log-level=warning'], { cwd: copy.root });
  const probe = async (args: string[]) => {
    const runs: Load[] = [];
    for (let i = 0; i < STARTS; i++) {
      const { stdout } = await run(process.execPath, ['--expose-gc', ...args], { cwd: copy.root });
      runs.push(JSON.parse(stdout.trim().split('\n').at(-1)!) as Load);
    }
    return { ms: median(runs.map((r) => r.ms)), rssMb: median(runs.map((r) => r.rssMb)) };
  };
  return {
    tsx: await probe(['--import', 'tsx', '--input-type=module', '-e', LOAD_PROBE, join(copy.root, 'content/index.ts')]),
    bundled: await probe(['--input-type=module', '-e', LOAD_PROBE, bundle]),
  };
}

async function shareImages(copy: ScaledCopy) {
  const started = performance.now();
  const { stdout } = await copy.node(['scripts/share-images.ts']);
  return { ms: performance.now() - started, line: stdout.trim().replace(/^share-images: /, '') };
}

/** The gzipped weight of the scripts a first visit to `html` loads (scripts/first-visit-scripts.ts). */
async function firstVisitJs(dist: string, html: string): Promise<number> {
  let total = 0;
  for (const url of await firstVisitScripts(dist, html)) total += gz(await readFile(join(dist, url)));
  return total;
}

/**
 * The copy's compiled server (`dist/bin/server.js`, from its `npm run build`) with the node flags and
 * allocator settings of the copy's own `npm start`, as production runs it. NODE_ENV=development:
 * production refuses the embedded database these copies use.
 */
async function startServer(copy: ScaledCopy, dataDir: string) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const start = startCommand(copy.root);
  const started = performance.now();
  const child = spawn(process.execPath, [...start.flags, 'dist/bin/server.js'], {
    cwd: copy.root,
    env: { ...process.env, ...start.env, NODE_ENV: 'development', PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, SITE_URL: base, DIGEST_CRON: 'off', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (;;) {
    const ok = await fetch(`${base}/`).then((response) => response.status === 200, () => false);
    if (ok) break;
    if (child.exitCode !== null) throw new Error('the server of the copy exited');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const firstAnswerMs = performance.now() - started;
  const stop = () => new Promise<void>((resolve) => (child.kill('SIGTERM'), child.once('exit', () => resolve())));
  return { base, child, firstAnswerMs, stop };
}

async function residentMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

interface Prepared {
  weeks: number;
  /** "520 weeks", or "520 weeks of REF" for a before tree's copy. */
  name: string;
  copy: ScaledCopy;
  dataRoot: string;
  newestPath: string;
  viteMs: number;
  images: { ms: number; line: string };
  imagesAgain: { ms: number; line: string };
  wholeBuildMs: number;
}

/** `npm run build` in the copy, as the curator runs it each week (the share images and the seed image from their caches). */
async function wholeBuild(copy: ScaledCopy): Promise<number> {
  const started = performance.now();
  await run('npm', ['run', 'build', '--silent'], { cwd: copy.root, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NODE_ENV: 'production' } });
  return performance.now() - started;
}

/** The copy at `weeks` of this tree, or of `tree` (a before tree) when given. */
async function prepare(weeks: number, tree?: Tree): Promise<Prepared> {
  const name = `${weeks} weeks${tree ? ` of ${tree.ref}` : ''}`;
  console.error(`[scale] ${name}: copying and generating…`);
  const copy = await makeScaledCopy(weeks, tree ? { from: tree.root } : {});
  const dataRoot = await mkdtemp(join(tmpdir(), 'launched-weekly-scale-data-'));
  console.error(`[scale] ${name}: building…`);
  const viteMs = await viteBuild(copy);
  const images = await shareImages(copy);
  // The weekly case: the newest week's text changes (its #1 product's name, on its card), so
  // one card is drawn and the rest come from the cache. Stamped, so no earlier run cached it.
  const newestDate = copy.synthetic.at(-1)?.date ?? '2025-07-14';
  const file = join(copy.root, 'content/recaps', `${newestDate}.ts`);
  await writeFile(file, (await readFile(file, 'utf8')).replace(/name: '([^']*)'/, (_m, name: string) => `name: '${name} revised ${Date.now()}'`));
  const imagesAgain = await shareImages(copy);
  console.error(`[scale] ${name}: npm run build…`);
  const wholeBuildMs = await wholeBuild(copy);
  // The embedded database is created by a first start that is not counted: its one-time
  // creation does not grow with the weeks, and a deployed server restarts onto an existing
  // database.
  console.error(`[scale] ${name}: warm-up start…`);
  await (await startServer(copy, dataRoot)).stop();
  return { weeks, name, copy, dataRoot, newestPath: copy.synthetic.at(-1)?.path ?? '/weekly-recap-july-14', viteMs, images, imagesAgain, wholeBuildMs };
}

/** One start: time to the first answered page, then every page type once, then resident memory. */
async function startAndVisit(prepared: Prepared) {
  const server = await startServer(prepared.copy, prepared.dataRoot);
  const dist = join(prepared.copy.root, 'dist/client');
  const pages: Figures['pages'] = [];
  for (const [type, path] of [['home', '/'], ['archive', '/archive'], ['about', '/about'], ['recap', prepared.newestPath], ['404', '/no-such-page']] as const) {
    const response = await fetch(server.base + path, { headers: { 'Accept-Encoding': 'identity' } });
    const html = await response.text();
    pages.push({ type, path, status: response.status, jsGzip: await firstVisitJs(dist, html), htmlBytes: Buffer.byteLength(html), htmlGzip: gz(html) });
  }
  const archiveJson = await (await fetch(`${server.base}/data/archive.json`)).text();
  const rssMb = await residentMb(server.child.pid!);
  await server.stop();
  return { firstAnswerMs: server.firstAnswerMs, pages, rssMb, archiveJsonGzip: gz(archiveJson) };
}

/**
 * Both sizes (and the before tree's large one) are prepared first, then started in turns (24, 520,
 * 24, 520, …): the machine is shared and its load moves by the minute, so alternating puts both
 * sizes under the same conditions.
 */
async function measureAll(smallWeeks: number, largeWeeks: number, before?: Tree): Promise<Figures[]> {
  const prepared = [await prepare(smallWeeks), await prepare(largeWeeks), ...(before ? [await prepare(largeWeeks, before)] : [])];
  try {
    const runs: Awaited<ReturnType<typeof startAndVisit>>[][] = prepared.map(() => []);
    for (let i = 0; i < STARTS; i++) {
      for (const [index, item] of prepared.entries()) {
        console.error(`[scale] ${item.name}: start ${i + 1}/${STARTS}…`);
        runs[index]!.push(await startAndVisit(item));
      }
    }
    const loads: Figures['contentLoad'][] = [];
    for (const item of prepared) loads.push(await measureContentLoad(item.copy));
    return prepared.map((item, index): Figures => {
      const mine = runs[index]!;
      return {
        weeks: item.weeks,
        viteMs: item.viteMs,
        images: item.images,
        imagesAgain: item.imagesAgain,
        wholeBuildMs: item.wholeBuildMs,
        firstAnswerMs: mine.map((run) => run.firstAnswerMs),
        rssMb: median(mine.map((run) => run.rssMb)),
        rssRuns: mine.map((run) => run.rssMb),
        pages: mine.at(-1)!.pages,
        archiveJsonGzip: mine.at(-1)!.archiveJsonGzip,
        contentLoad: loads[index]!,
      };
    });
  } finally {
    for (const item of prepared) {
      await item.copy.remove();
      await rm(item.dataRoot, { recursive: true, force: true });
    }
  }
}

export async function runScaleBench(before?: Tree): Promise<void> {
  const large = Number(process.env.SCALE_WEEKS ?? 520);
  const [small, big, was] = (await measureAll(24, large, before)) as [Figures, Figures, Figures?];
  const rows = small.pages.map((page, index) => {
    const other = big.pages[index]!;
    return `| ${page.type} (${other.path}) | ${kb(page.jsGzip)} | ${kb(other.jsGzip)} | ${other.jsGzip - page.jsGzip} B | ${kb(page.htmlBytes)} / ${kb(page.htmlGzip)} | ${kb(other.htmlBytes)} / ${kb(other.htmlGzip)} |`;
  });
  const s = (ms: number) => (ms / 1000).toFixed(2);
  // With a before tree, a last column of its figures at the large size, after the goal.
  const beforeCell = (cell: (f: Figures) => string) => (was ? ` ${cell(was)} |` : '');
  const comparison =
    before && was
      ? `\n${comparisonTable(before, [
          { what: `\`npm run build\` at ${large} weeks`, before: was.wholeBuildMs / 1000, after: big.wholeBuildMs / 1000, unit: 's', digits: 2 },
          { what: `Vite build at ${large} weeks`, before: was.viteMs / 1000, after: big.viteMs / 1000, unit: 's', digits: 2 },
          { what: `start to first answered page at ${large} weeks`, before: median(was.firstAnswerMs) / 1000, after: median(big.firstAnswerMs) / 1000, unit: 's', digits: 2 },
          { what: `server RSS after one request per page type at ${large} weeks`, before: was.rssMb, after: big.rssMb, unit: 'MB' },
        ])}\n`
      : '';
  await recordResults(
    `Scale: 24 weeks and ${large} weeks`,
    `${benchCommand('npm run bench -- scale', before)}   (SCALE_WEEKS=${large})`,
    `Each size in its own temporary copy of the repository${before ? ` (and ${before.ref}'s tree at ${large} weeks in another, built by its own scripts, started in the same turns)` : ''} (the ${large - 24} synthetic weeks start at 2026-02-02, scaffolded by \`npm run new-recap\`), each served by its own compiled server (\`dist/bin/server.js\` with the node flags and allocator settings of its own \`npm start\`, NODE_ENV=development for the embedded database).
${comparison}
| first visit | JS gzip KB, 24 weeks | JS gzip KB, ${large} weeks | difference | HTML KB raw / gzip, 24 | HTML KB raw / gzip, ${large} |
|---|---|---|---|---|---|
${rows.join('\n')}

| | 24 weeks | ${large} weeks | goal |${was ? ` ${large} weeks, before (${before!.ref}) |` : ''}
|---|---|---|---|${was ? '---|' : ''}
| Vite build (client + server) | ${s(small.viteMs)} s | ${s(big.viteMs)} s | |${beforeCell((f) => `${s(f.viteMs)} s`)}
| share images, first build | ${s(small.images.ms)} s (${small.images.line}) | ${s(big.images.ms)} s (${big.images.line}) | |${beforeCell((f) => `${s(f.images.ms)} s (${f.images.line})`)}
| share images, one week changed | ${s(small.imagesAgain.ms)} s (${small.imagesAgain.line}) | ${s(big.imagesAgain.ms)} s (${big.imagesAgain.line}) | |${beforeCell((f) => `${s(f.imagesAgain.ms)} s (${f.imagesAgain.line})`)}
| build with one week changed (Vite + images) | ${s(small.viteMs + small.imagesAgain.ms)} s | ${s(big.viteMs + big.imagesAgain.ms)} s | |${beforeCell((f) => `${s(f.viteMs + f.imagesAgain.ms)} s`)}
| \`npm run build\`, whole (share and seed images from their caches) | ${s(small.wholeBuildMs)} s | ${s(big.wholeBuildMs)} s | < 30 s |${beforeCell((f) => `${s(f.wholeBuildMs)} s`)}
| start to first answered page, existing database (median of ${STARTS}, sizes started in turns: ${small.firstAnswerMs.map(s).join(', ')} / ${big.firstAnswerMs.map(s).join(', ')}) | ${s(median(small.firstAnswerMs))} s | ${s(median(big.firstAnswerMs))} s | ${signed(s(median(big.firstAnswerMs) - median(small.firstAnswerMs)))} s (≤ +0.5 s) |${beforeCell((f) => `${s(median(f.firstAnswerMs))} s (${f.firstAnswerMs.map(s).join(', ')})`)}
| server RSS after one request per page type (median of ${STARTS}: ${small.rssRuns.map((mb) => mb.toFixed(0)).join(', ')} / ${big.rssRuns.map((mb) => mb.toFixed(0)).join(', ')}) | ${small.rssMb.toFixed(0)} MB | ${big.rssMb.toFixed(0)} MB | ${signed((big.rssMb - small.rssMb).toFixed(0))} MB (≤ +20 MB) |${beforeCell((f) => `${f.rssMb.toFixed(0)} MB`)}
| content load in a fresh process, under tsx (median of ${STARTS}) | ${s(small.contentLoad.tsx.ms)} s, ${small.contentLoad.tsx.rssMb.toFixed(0)} MB | ${s(big.contentLoad.tsx.ms)} s, ${big.contentLoad.tsx.rssMb.toFixed(0)} MB | |${beforeCell((f) => `${s(f.contentLoad.tsx.ms)} s, ${f.contentLoad.tsx.rssMb.toFixed(0)} MB`)}
| content load in a fresh process, bundled into one module | ${s(small.contentLoad.bundled.ms)} s, ${small.contentLoad.bundled.rssMb.toFixed(0)} MB | ${s(big.contentLoad.bundled.ms)} s, ${big.contentLoad.bundled.rssMb.toFixed(0)} MB | |${beforeCell((f) => `${s(f.contentLoad.bundled.ms)} s, ${f.contentLoad.bundled.rssMb.toFixed(0)} MB`)}
| /data/archive.json (client-side navigation), gzip | ${kb(small.archiveJsonGzip)} KB | ${kb(big.archiveJsonGzip)} KB | |${beforeCell((f) => `${kb(f.archiveJsonGzip)} KB`)}

${goalLines([{ what: `\`npm run build\` at ${large} weeks`, value: Number(s(big.wholeBuildMs)), is: '<', target: 30, unit: 's' }])}`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await runScaleBench();
