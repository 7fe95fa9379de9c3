// SSR path vs express.static for the same recap page, from the same server process.
//   npm run bench -- ssr          (or: node --import tsx bench/ssr-vs-static.ts)
// autocannon, 50 connections, alternating rounds; reports the median requests/s and p99 of each,
// their ratios, and the server's RSS at the end. The server runs with `npm start`'s node flags.
// Goals (issue 41): SSR ≥ 0.9 × static's requests/s, SSR p99 ≤ 1.2 × static's p99.
// Knobs: BENCH_ROUNDS, BENCH_SECONDS, BENCH_SSR_NODE_FLAGS (instead of the start script's),
// BENCH_SSR_PRINT_ONLY=1 (print instead of writing to bench/RESULTS.md).
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { recordResults } from './support/results.ts';
import { goalLines } from './support/goals.ts';
import { startEnv, startFlags } from './support/start-flags.ts';

const CONNECTIONS = 50;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);

const NODE_FLAGS = startFlags(process.env.BENCH_SSR_NODE_FLAGS);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]) / 1024;
}

async function startServer(): Promise<{ port: number; page: string; bytes: number; rss: () => Promise<number>; stop: () => void }> {
  const child = spawn(process.execPath, [...NODE_FLAGS, '--import', 'tsx', new URL('./support/bench-server.ts', import.meta.url).pathname], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...startEnv(), ...process.env, NODE_ENV: 'production' },
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  return { ...(JSON.parse(line) as { port: number; page: string; bytes: number }), rss: () => rssMiB(child.pid!), stop: () => child.kill('SIGTERM') };
}

async function load(url: string): Promise<{ rps: number; p99: number; errors: number; non2xx: number }> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS });
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors, non2xx: result.non2xx };
}

export async function runSsrVsStatic(): Promise<{ ratio: number }> {
  const server = await startServer();
  const base = `http://127.0.0.1:${server.port}`;
  const ssrUrl = base + server.page;
  const staticUrl = `${base}/__static/page.html`;
  try {
    // Warm-up: JIT, the page cache, the file system cache.
    await autocannon({ url: ssrUrl, connections: CONNECTIONS, duration: 2 });
    await autocannon({ url: staticUrl, connections: CONNECTIONS, duration: 2 });
    const ssr: number[] = [];
    const stat: number[] = [];
    const ssrP99: number[] = [];
    const statP99: number[] = [];
    const rows: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const a = await load(ssrUrl);
      const b = await load(staticUrl);
      if (a.errors + a.non2xx + b.errors + b.non2xx > 0) throw new Error(`errors during round ${round}: ${JSON.stringify({ a, b })}`);
      ssr.push(a.rps);
      stat.push(b.rps);
      ssrP99.push(a.p99);
      statP99.push(b.p99);
      rows.push(`| ${round} | ${a.rps.toFixed(0)} | ${a.p99} | ${b.rps.toFixed(0)} | ${b.p99} | ${(a.rps / b.rps).toFixed(2)} |`);
      console.error(`round ${round}/${ROUNDS}: SSR ${a.rps.toFixed(0)} req/s, static ${b.rps.toFixed(0)} req/s`);
    }
    const ratio = median(ssr) / median(stat);
    const p99Ratio = median(ssrP99) / median(statP99);
    const rss = await server.rss();
    const body = `Page \`${server.page}\` (${server.bytes} bytes of HTML), ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${SECONDS} s after a 2 s warm-up each, no compression requested. Server: the production build with request logging on (into a null sink), PGlite store, \`${Object.entries({ ...startEnv(), ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('MALLOC_'))) }).map(([name, value]) => `${name}=${value} `).join('')}node ${NODE_FLAGS.join(' ')}\` (\`npm start\`'s environment and flags). Load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(' ')}.

| round | SSR req/s | SSR p99 ms | static req/s | static p99 ms | ratio |
|---|---|---|---|---|---|
${rows.join('\n')}

Median: SSR ${median(ssr).toFixed(0)} req/s, static ${median(stat).toFixed(0)} req/s; p99 SSR ${median(ssrP99)} ms, static ${median(statP99)} ms. Server RSS at the end: ${rss.toFixed(0)} MiB.

${goalLines([
  { what: 'SSR / static requests per second', value: ratio, is: '≥', target: 0.9 },
  { what: "SSR p99 / static's p99", value: p99Ratio, is: '≤', target: 1.2 },
])}`;
    if (process.env.BENCH_SSR_PRINT_ONLY) console.log(body);
    else await recordResults('SSR path vs express.static (same recap page, same process)', 'npm run bench -- ssr', body);
    return { ratio };
  } finally {
    server.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runSsrVsStatic();
