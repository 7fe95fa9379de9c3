// SSR path vs express.static for the same recap page: the production server (with `npm start`'s
// node flags and allocator settings) against express.static serving the page it rendered, from a
// plain Node process of its own with Node's defaults, as an outside check runs them.
//   npm run bench -- ssr          (or: node --import tsx bench/ssr-vs-static.ts)
// autocannon, 50 connections, alternating rounds; reports the median requests/s and p99 of each,
// their ratios with the worst round's beside them, and the server's RSS at the end.
// Goals: SSR ≥ 0.9 × static's requests/s, SSR p99 ≤ 1.2 × static's p99.
// With `--before REF` both trees' servers (each its own bench/support/bench-server.ts and start
// flags) are measured in the same rounds, one after the other; the ratio is each tree's own.
// Knobs: BENCH_ROUNDS, BENCH_SECONDS, BENCH_SSR_NODE_FLAGS (instead of the start script's),
// BENCH_SSR_PRINT_ONLY=1 (print instead of writing to bench/RESULTS.md).
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { recordResults } from './support/results.ts';
import { goalLines } from './support/goals.ts';
import { benchCommand, comparisonTable } from './support/compare.ts';
import { startFlags } from './support/start-flags.ts';
import { currentTree, type Tree } from './support/tree.ts';

const CONNECTIONS = 50;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);

const nodeFlags = (tree: Tree) => startFlags(process.env.BENCH_SSR_NODE_FLAGS ?? tree.startFlags.join(' '));
const serverEnv = (tree: Tree) => ({ ...tree.startEnv, ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('MALLOC_'))) });
const serverCommand = (tree: Tree) => `${Object.entries(serverEnv(tree)).map(([name, value]) => `${name}=${value} `).join('')}node ${nodeFlags(tree).join(' ')}`;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]) / 1024;
}

interface BenchServer {
  port: number;
  page: string;
  bytes: number;
  rss: () => Promise<number>;
  stop: () => void;
}

/** The tree's own bench server (its app and its start flags), run with the tree's own tsx. */
async function startServer(tree: Tree): Promise<BenchServer> {
  const child = spawn(process.execPath, [...nodeFlags(tree), '--import', 'tsx', tree.path('bench/support/bench-server.ts')], {
    cwd: tree.root,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...tree.startEnv, ...process.env, NODE_ENV: 'production' },
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  return { ...(JSON.parse(line) as { port: number; page: string; bytes: number }), rss: () => rssMiB(child.pid!), stop: () => child.kill('SIGTERM') };
}

const STATIC_SERVER = fileURLToPath(new URL('./support/static-server.ts', import.meta.url));

/** express.static in its own plain process, serving `html` as /page.html. */
async function startStaticServer(html: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'launched-weekly-static-'));
  await writeFile(join(dir, 'page.html'), html);
  const child = spawn(process.execPath, [STATIC_SERVER, dir], { stdio: ['ignore', 'pipe', 'inherit'], env: { PATH: process.env.PATH } });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`static server exited with ${code}`)));
  });
  const { port } = JSON.parse(line) as { port: number };
  return {
    url: `http://127.0.0.1:${port}/page.html`,
    stop: async () => {
      child.kill('SIGTERM');
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function load(url: string): Promise<{ rps: number; p99: number; errors: number; non2xx: number }> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS });
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors, non2xx: result.non2xx };
}

interface Measured {
  tree: Tree;
  server: BenchServer;
  staticServer: { url: string; stop: () => Promise<void> };
  ssr: number[];
  stat: number[];
  ssrP99: number[];
  statP99: number[];
  rows: string[][];
  rss: number;
}

const ratios = (m: Measured) => ({ ratio: median(m.ssr) / median(m.stat), p99Ratio: median(m.ssrP99) / median(m.statP99) });
/** The worst round: its throughput ratio the lowest, its p99 ratio the highest. */
const worst = (m: Measured) => ({
  ratio: Math.min(...m.ssr.map((rps, i) => rps / m.stat[i]!)),
  p99Ratio: Math.max(...m.ssrP99.map((p99, i) => p99 / m.statP99[i]!)),
});

export async function runSsrVsStatic(before?: Tree): Promise<{ ratio: number }> {
  const trees = before ? [before, currentTree()] : [currentTree()];
  const measured: Measured[] = [];
  try {
    for (const tree of trees) {
      const server = await startServer(tree);
      const html = await (await fetch(`http://127.0.0.1:${server.port}${server.page}`)).text();
      measured.push({ tree, server, staticServer: await startStaticServer(html), ssr: [], stat: [], ssrP99: [], statP99: [], rows: [], rss: 0 });
    }
    const urls = (m: Measured) => ({ ssrUrl: `http://127.0.0.1:${m.server.port}${m.server.page}`, staticUrl: m.staticServer.url });
    for (const m of measured) {
      // Warm-up: JIT, the page cache, the file system cache.
      await autocannon({ url: urls(m).ssrUrl, connections: CONNECTIONS, duration: 2 });
      await autocannon({ url: urls(m).staticUrl, connections: CONNECTIONS, duration: 2 });
    }
    for (let round = 1; round <= ROUNDS; round++) {
      for (const m of measured) {
        const a = await load(urls(m).ssrUrl);
        const b = await load(urls(m).staticUrl);
        const which = before ? `${m.tree.label} ` : '';
        if (a.errors + a.non2xx + b.errors + b.non2xx > 0) throw new Error(`errors during ${which}round ${round}: ${JSON.stringify({ a, b })}`);
        m.ssr.push(a.rps);
        m.stat.push(b.rps);
        m.ssrP99.push(a.p99);
        m.statP99.push(b.p99);
        m.rows.push([a.rps.toFixed(0), String(a.p99), b.rps.toFixed(0), String(b.p99), (a.rps / b.rps).toFixed(2)]);
        console.error(`round ${round}/${ROUNDS}: ${which}SSR ${a.rps.toFixed(0)} req/s, static ${b.rps.toFixed(0)} req/s`);
      }
    }
    for (const m of measured) m.rss = await m.server.rss();
    const after = measured.at(-1)!;
    const { ratio, p99Ratio } = ratios(after);
    const worstAfter = worst(after);
    const server = after.server;
    // One row per round; with a before tree each cell is "before / after".
    const rows = after.rows.map((cells, i) => `| ${i + 1} | ${cells.map((cell, c) => (before ? `${measured[0]!.rows[i]![c]} / ${cell}` : cell)).join(' | ')} |`);
    const servers = before
      ? `\`${serverCommand(after.tree)}\` for this tree, \`${serverCommand(before)}\` for ${before.ref} (each tree's own bench/support/bench-server.ts and \`npm start\` environment and flags), the two measured one after the other in each round (a round's cells below: before / after)`
      : `\`${serverCommand(after.tree)}\` (\`npm start\`'s environment and flags)`;
    const summary = (m: Measured) => `SSR ${median(m.ssr).toFixed(0)} req/s, static ${median(m.stat).toFixed(0)} req/s; p99 SSR ${median(m.ssrP99)} ms, static ${median(m.statP99)} ms. Server RSS at the end: ${m.rss.toFixed(0)} MiB.`;
    const body = `Page \`${server.page}\` (${server.bytes} bytes of HTML), ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${SECONDS} s after a 2 s warm-up each, no compression requested. Server: the production build with request logging on (into a null sink), PGlite store, ${servers}. Static: \`node bench/support/static-server.ts\` (express.static, Node's defaults, a process of its own) serving the HTML the server rendered. Load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(' ')}.
${
  before
    ? `\n${comparisonTable(before, [
        { what: 'SSR / static requests per second', before: ratios(measured[0]!).ratio, after: ratio, digits: 2 },
        { what: "SSR p99 / static's p99", before: ratios(measured[0]!).p99Ratio, after: p99Ratio, digits: 2 },
        { what: 'SSR requests per second', before: median(measured[0]!.ssr), after: median(after.ssr) },
        { what: 'SSR p99', before: median(measured[0]!.ssrP99), after: median(after.ssrP99), unit: 'ms' },
      ])}\n`
    : ''
}
| round | SSR req/s | SSR p99 ms | static req/s | static p99 ms | ratio |
|---|---|---|---|---|---|
${rows.join('\n')}

${before ? `Median, before: ${summary(measured[0]!)} After: ${summary(after)}` : `Median: ${summary(after)}`}

Worst round: SSR / static requests per second ${worstAfter.ratio.toFixed(2)}, SSR p99 / static's p99 ${worstAfter.p99Ratio.toFixed(2)}.

${goalLines([
  { what: 'SSR / static requests per second', value: ratio, is: '≥', target: 0.9 },
  { what: "SSR p99 / static's p99", value: p99Ratio, is: '≤', target: 1.2 },
])}`;
    if (process.env.BENCH_SSR_PRINT_ONLY) console.log(body);
    else await recordResults('SSR path vs express.static (in its own plain process)', benchCommand('npm run bench -- ssr', before), body);
    return { ratio };
  } finally {
    for (const m of measured) {
      m.server.stop();
      await m.staticServer.stop();
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runSsrVsStatic();
