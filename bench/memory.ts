// Does the server's memory stay flat under page traffic? 100,000 requests over a mix of every
// page, per-request renders (?signup=…), never-seen 404 paths and query strings, the feeds; the
// server process (a child: the production build on PGlite, bench/support/bench-server.ts) reports
// its resident set size after every 10,000, and its heap after a full collection, which is where
// a leak would show once V8 has grown its heap to its working size.
//   npm run bench -- memory
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { sitePaths } from '../server/app.ts';
import { recordResults } from './support/results.ts';
import { startEnv, startFlags } from './support/start-flags.ts';

const TOTAL = Number(process.env.BENCH_MEMORY_REQUESTS ?? 100_000);
const SAMPLE_EVERY = 10_000;
const CONNECTIONS = 20;

interface Sample {
  /** Resident set size as the load left it. */
  rss: number;
  /** After a full garbage collection. */
  heapUsed: number;
  /** Buffers and other memory V8 tracks outside its heap, after the collection. */
  external: number;
  rssAfterGc: number;
}

const MiB = 2 ** 20;

/** Child process: the bench server, answering "sample" over IPC with its memory figures. */
async function serve() {
  process.on('message', (message) => {
    if (message !== 'sample') return;
    const { rss } = process.memoryUsage();
    globalThis.gc?.();
    const after = process.memoryUsage();
    process.send?.({ rss: rss / MiB, heapUsed: after.heapUsed / MiB, external: after.external / MiB, rssAfterGc: after.rss / MiB } satisfies Sample);
  });
  await import('./support/bench-server.ts');
}

function sample(child: ChildProcess): Promise<Sample> {
  return new Promise((resolve) => {
    child.once('message', (message) => resolve(message as Sample));
    child.send('sample');
  });
}

function requestMix(): autocannon.Request[] {
  let n = 0;
  const pages = [...sitePaths()].map((path) => ({ method: 'GET' as const, path }));
  return [
    ...pages,
    { method: 'GET', path: '/?signup=subscribed' },
    { method: 'GET', path: '/about?signup=invalid-email' },
    { method: 'GET', path: '/weekly-recap-july-14?signup=already-subscribed' },
    // Unknown paths and query strings never seen before: neither may leave anything behind.
    { method: 'GET', path: '/', setupRequest: (request) => ({ ...request, path: `/no-such-page-${n++}` }) },
    { method: 'GET', path: '/', setupRequest: (request) => ({ ...request, path: `/archive?utm_source=bench-${n++}` }) },
    { method: 'GET', path: '/rss.xml' },
    { method: 'GET', path: '/sitemap.xml' },
    { method: 'GET', path: '/healthz' },
  ];
}

export async function runMemoryBench(): Promise<void> {
  // The mode goes in the environment: bench-server.ts reads its first argument as a page path.
  // npm start's memory flags and allocator settings, as production runs the server.
  const child = spawn(process.execPath, [...startFlags(), '--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url)], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    env: { ...startEnv(), ...process.env, NODE_ENV: 'production', BENCH_MEMORY_SERVER: '1' },
  });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
    });
    const { port } = JSON.parse(line) as { port: number };
    const url = `http://127.0.0.1:${port}`;
    const requests = requestMix();
    const atStart = await sample(child);
    // Warm-up: every page rendered and cached once, JIT settled; not counted.
    await autocannon({ url, connections: CONNECTIONS, amount: 2_000, requests });
    const samples: (Sample & { requests: number; rps: number })[] = [{ requests: 0, rps: 0, ...(await sample(child)) }];
    for (let done = SAMPLE_EVERY; done <= TOTAL; done += SAMPLE_EVERY) {
      const started = performance.now();
      const result = await autocannon({ url, connections: CONNECTIONS, amount: SAMPLE_EVERY, requests });
      const seconds = (performance.now() - started) / 1000;
      if (result.errors + result.timeouts > 0 || result['5xx'] > 0) {
        throw new Error(`errors under load: ${JSON.stringify({ errors: result.errors, timeouts: result.timeouts, '5xx': result['5xx'] })}`);
      }
      const rps = result.requests.total / seconds;
      const figures = await sample(child);
      samples.push({ requests: done, rps, ...figures });
      console.error(`${done} requests: RSS ${figures.rss.toFixed(1)} MiB, heap after GC ${figures.heapUsed.toFixed(1)} MiB, external ${figures.external.toFixed(1)} MiB (${rps.toFixed(0)} req/s)`);
    }
    const first = samples[1]!;
    const last = samples.at(-1)!;
    const peak = Math.max(...samples.map((s) => s.rss));
    const signed = (value: number) => `${value >= 0 ? '+' : ''}${value.toFixed(1)}`;
    await recordResults(
      `Server memory over ${TOTAL.toLocaleString('en')} page requests`,
      'npm run bench -- memory',
      `The production build (bench/support/bench-server.ts: PGlite, request logging into a null sink) in a child process; autocannon with ${CONNECTIONS} connections cycles through ${requests.length} requests: the ${sitePaths().size} pages, three per-request renders (\`?signup=…\`), a new unknown path and a new query string every time, the RSS feed, the sitemap and /healthz. The server reports its RSS as the load left it, then runs a full garbage collection (\`--expose-gc\`) and reports the V8 heap in use and the RSS again: after a 2,000-request warm-up and after every ${SAMPLE_EVERY.toLocaleString('en')}. The RSS includes PGlite's WebAssembly memory.

| requests | RSS MiB | heap used after GC MiB | external after GC MiB | RSS after GC MiB | req/s in that batch (a lower bound: autocannon ends a batch on its 1 s tick) |
|---|---|---|---|---|---|
${samples.map((s) => `| ${s.requests.toLocaleString('en')} | ${s.rss.toFixed(1)} | ${s.heapUsed.toFixed(1)} | ${s.external.toFixed(1)} | ${s.rssAfterGc.toFixed(1)} | ${s.requests === 0 ? '(after warm-up)' : s.rps.toFixed(0)} |`).join('\n')}

At start (before any request): RSS ${atStart.rss.toFixed(1)} MiB, heap ${atStart.heapUsed.toFixed(1)} MiB. Peak RSS ${peak.toFixed(1)} MiB. **From ${SAMPLE_EVERY.toLocaleString('en')} to ${TOTAL.toLocaleString('en')} requests: RSS ${signed(last.rss - first.rss)} MiB, heap after GC ${signed(last.heapUsed - first.heapUsed)} MiB.**`,
    );
  } finally {
    child.kill('SIGTERM');
  }
}

if (process.env.BENCH_MEMORY_SERVER === '1') await serve();
else if (import.meta.url === `file://${process.argv[1]}`) await runMemoryBench();
