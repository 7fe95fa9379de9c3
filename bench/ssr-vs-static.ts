// SSR path vs express.static for the same recap page, from the same server process.
//   npm run bench -- ssr          (or: node --import tsx bench/ssr-vs-static.ts)
// autocannon, 50 connections, alternating rounds; reports the median requests/s of each and the
// ratio. Goal (issue 7): SSR ≥ 0.8 × static.
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { recordResults } from './support/results.ts';

const CONNECTIONS = 50;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function startServer(): Promise<{ port: number; page: string; bytes: number; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./support/bench-server.ts', import.meta.url).pathname], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  return { ...(JSON.parse(line) as { port: number; page: string; bytes: number }), stop: () => child.kill('SIGTERM') };
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
    const rows: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const a = await load(ssrUrl);
      const b = await load(staticUrl);
      if (a.errors + a.non2xx + b.errors + b.non2xx > 0) throw new Error(`errors during round ${round}: ${JSON.stringify({ a, b })}`);
      ssr.push(a.rps);
      stat.push(b.rps);
      rows.push(`| ${round} | ${a.rps.toFixed(0)} | ${a.p99} | ${b.rps.toFixed(0)} | ${b.p99} | ${(a.rps / b.rps).toFixed(2)} |`);
      console.error(`round ${round}/${ROUNDS}: SSR ${a.rps.toFixed(0)} req/s, static ${b.rps.toFixed(0)} req/s`);
    }
    const ratio = median(ssr) / median(stat);
    await recordResults(
      'SSR path vs express.static (same recap page, same process)',
      'npm run bench -- ssr',
      `Page \`${server.page}\` (${server.bytes} bytes of HTML), ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${SECONDS} s after a 2 s warm-up each, no compression requested. Server: the production build with request logging on (into a null sink), PGlite store.

| round | SSR req/s | SSR p99 ms | static req/s | static p99 ms | ratio |
|---|---|---|---|---|---|
${rows.join('\n')}

**Median: SSR ${median(ssr).toFixed(0)} req/s, static ${median(stat).toFixed(0)} req/s, ratio ${ratio.toFixed(2)}** (goal ≥ 0.80).`,
    );
    return { ratio };
  } finally {
    server.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runSsrVsStatic();
