// What the production runtime costs a small host: the compiled server (`node dist/bin/server.js`,
// as `npm start` and the container run it) on PostgreSQL and on the embedded PGlite, in one run:
// the very first start, time to first page after a restart (median of 5 starts), and RSS after
// 10,000 mixed requests (⅔ pages, ⅓ signups from ever new addresses), sampled every 10,000.
// Goals: RSS after 10,000 requests ≤ 120 MB on PostgreSQL, ≤ 256 MB on PGlite; first page
// after a restart ≤ 0.6 s on PostgreSQL, ≤ 1.0 s on PGlite; very first start ≤ 2 s.
//   npm run bench -- runtime
// With `--before REF` each tree runs on its own database, their starts and load runs interleaved
// (before, after, before, after…) so the machine's noise falls on both alike.
// Knobs: BENCH_RUNTIME_REQUESTS (default 10000), BENCH_RUNTIME_RUNS (load runs per store, each on a
// fresh server; default 3, the figures are their medians), BENCH_RUNTIME_STORES (PostgreSQL,PGlite),
// BENCH_RUNTIME_NODE_FLAGS (instead of the start script's), BENCH_RUNTIME_PRINT_ONLY=1 (print
// instead of writing to bench/RESULTS.md).
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { sitePaths } from '../server/app.ts';
import { startOwnPostgres } from '../scripts/own-postgres.ts';
import { freePort } from '../scripts/free-port.ts';
import { goalLines, type Goal } from './support/goals.ts';
import { recordResults } from './support/results.ts';
import { benchCommand, comparisonTable } from './support/compare.ts';
import { startFlags } from './support/start-flags.ts';
import { currentTree, type Tree } from './support/tree.ts';

const SERVER = 'dist/bin/server.js';
const TOTAL = Number(process.env.BENCH_RUNTIME_REQUESTS ?? 10_000);
// Every 10,000 requests (the goal's point), or once at the end of a shorter run.
const SAMPLE_EVERY = Math.min(10_000, TOTAL);
const STARTS = 5;
const LOAD_RUNS = Number(process.env.BENCH_RUNTIME_RUNS ?? 3);
const CONNECTIONS = 20;
const MiB = 2 ** 20;
const FIRST_PAGE = '/weekly-recap-july-14';
const STORES = (process.env.BENCH_RUNTIME_STORES ?? 'PostgreSQL,PGlite').split(',');

const nodeFlags = (tree: Tree) => startFlags(process.env.BENCH_RUNTIME_NODE_FLAGS ?? tree.startFlags.join(' '));
// glibc's allocator settings: the tree's start script's (as the image's ENV), unless the bench's own
// environment sets them, to compare.
const allocatorEnv = (tree: Tree): Record<string, string> => ({
  ...tree.startEnv,
  ...Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[0].startsWith('MALLOC_') && entry[1] !== undefined)),
});
const serverCommand = (tree: Tree) => `${Object.entries(allocatorEnv(tree)).map(([name, value]) => `${name}=${value} `).join('')}node ${nodeFlags(tree).join(' ')} ${SERVER}`;

// Loaded into the measured server only for the load run (never for the timed starts): answers
// 'sample' over the IPC channel with its memory after a full collection (needs --expose-gc).
const HEAP_PROBE = `data:text/javascript,process.on('message',(m)=>{if(m!=='sample')return;globalThis.gc();const u=process.memoryUsage();process.send({heapUsed:u.heapUsed,heapTotal:u.heapTotal,external:u.external,arrayBuffers:u.arrayBuffers,rssAfterGc:u.rss})})`;
interface Target {
  name: string;
  tree: Tree;
  /** MiB after 10,000 requests, and seconds to the first page after a restart. */
  goals: { rssMiB: number; restartSeconds: number };
  env: Record<string, string>;
  /** For an embedded database: the settings of a fresh data directory, to time more very first starts. */
  freshDataDir?: (n: number) => Record<string, string>;
}

interface Sample {
  requests: number;
  rss: number;
  heapUsed: number;
  /** V8 heap reserved (committed) after the collection. */
  heapTotal: number;
  external: number;
  rssAfterGc: number;
  rps: number;
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]) / 1024;
}

function serverEnv(target: Target, port: number): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    HOST: '127.0.0.1',
    PORT: String(port),
    SITE_URL: `http://127.0.0.1:${port}`,
    DIGEST_CRON: 'off',
    LOG_LEVEL: 'info',
    // One proxy in front: each signup comes from its own address, as a crowd's would, so the rate
    // limiter's table is exercised at its worst (one entry per address).
    TRUST_PROXY: '1',
    UNSUBSCRIBE_SECRET: 'bench-runtime-secret-0123456789abcdef012345',
    ...allocatorEnv(target.tree),
    ...target.env,
  };
}

interface Started {
  child: ChildProcess;
  url: string;
  msToFirstPage: number;
  rssAtFirstAnswer: number;
  stderrTail: () => string;
}

async function startServer(target: Target, nodeArgs: string[] = []): Promise<Started> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const child = spawn(process.execPath, [...nodeFlags(target.tree), ...nodeArgs, target.tree.path(SERVER)], {
    cwd: target.tree.root,
    env: serverEnv(target, port),
    stdio: ['ignore', 'ignore', 'pipe', ...(nodeArgs.length > 0 ? (['ipc'] as const) : [])],
  });
  let tail = '';
  child.stderr!.on('data', (chunk: Buffer) => (tail = (tail + chunk.toString()).slice(-4000)));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${label(target)}: the server exited with ${child.exitCode}:\n${tail}`);
    const answered = await fetch(`${url}${FIRST_PAGE}`).then(
      (response) => response.status,
      () => 0,
    );
    if (answered === 200) break;
    if (answered !== 0) throw new Error(`${label(target)}: ${FIRST_PAGE} answered ${answered}:\n${tail}`);
    if (performance.now() - started > 60_000) throw new Error(`${label(target)}: no page after 60 s:\n${tail}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const msToFirstPage = performance.now() - started;
  return { child, url, msToFirstPage, rssAtFirstAnswer: await rssMiB(child.pid!), stderrTail: () => tail };
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

function heapSample(child: ChildProcess): Promise<Omit<Sample, 'requests' | 'rss' | 'rps'>> {
  return new Promise((resolve) => {
    child.once('message', (message) => {
      const m = message as { heapUsed: number; heapTotal: number; external: number; rssAfterGc: number };
      resolve({ heapUsed: m.heapUsed / MiB, heapTotal: m.heapTotal / MiB, external: m.external / MiB, rssAfterGc: m.rssAfterGc / MiB });
    });
    child.send('sample');
  });
}

/** ⅔ page views across every page, ⅓ signups, each from a new address and a new client address. */
function requestMix(label: string): autocannon.Request[] {
  const pages = [...sitePaths()];
  let page = 0;
  let signup = 0;
  const nextPage = (request: autocannon.Request) => ({ ...request, path: pages[page++ % pages.length]! });
  return [
    { method: 'GET', path: '/', setupRequest: nextPage },
    { method: 'GET', path: '/', setupRequest: nextPage },
    {
      method: 'POST',
      path: '/api/subscribe',
      setupRequest: (request) => {
        const n = signup++;
        return {
          ...request,
          headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` },
          body: JSON.stringify({ email: `reader-${label}-${n}@example.com` }),
        };
      },
    },
  ];
}

interface TargetResult {
  name: string;
  /** Very first starts (creating the database): one, plus more on fresh data directories where the store has them. */
  firstStartsMs: number[];
  startsMs: number[];
  rssAtFirstAnswer: number[];
  /** One list of samples per load run, each on a fresh server. */
  loadRuns: Sample[][];
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** One fresh server under TOTAL mixed requests, sampled every SAMPLE_EVERY. */
async function loadRun(target: Target, runLabel: string): Promise<Sample[]> {
  const server = await startServer(target, ['--expose-gc', '--import', HEAP_PROBE]);
  const samples: Sample[] = [];
  try {
    const requests = requestMix(`${target.name}-${target.tree.label}-${Date.now()}`);
    for (let done = SAMPLE_EVERY; done <= TOTAL; done += SAMPLE_EVERY) {
      const began = performance.now();
      // 30 s, not autocannon's 10: on a machine shared with five others a stall is load, not a leak.
      const result = await autocannon({ url: server.url, connections: CONNECTIONS, amount: SAMPLE_EVERY, requests, timeout: 30 });
      const seconds = (performance.now() - began) / 1000;
      if (result.errors + result.timeouts > 0 || result.non2xx > 0) {
        throw new Error(`${label(target)}: failures under load: ${JSON.stringify({ errors: result.errors, timeouts: result.timeouts, non2xx: result.non2xx })}\n${server.stderrTail()}`);
      }
      const rss = await rssMiB(server.child.pid!);
      const sample = { requests: done, rss, rps: result.requests.total / seconds, ...(await heapSample(server.child)) };
      samples.push(sample);
      if (process.env.BENCH_RUNTIME_SMAPS) console.error(await readFile(`/proc/${server.child.pid}/smaps_rollup`, 'utf8'));
      console.error(`${label(target)} run ${runLabel}: ${done} requests: RSS ${rss.toFixed(1)} MiB, heap after GC ${sample.heapUsed.toFixed(1)} MiB of ${sample.heapTotal.toFixed(1)} MiB committed, external ${sample.external.toFixed(1)} MiB, RSS after GC ${sample.rssAfterGc.toFixed(1)} MiB (${sample.rps.toFixed(0)} req/s)`);
    }
  } finally {
    await stopServer(server.child);
  }
  return samples;
}

/** One store on each tree, their starts and load runs interleaved (one tree: as it runs alone). */
async function measureTargets(targets: Target[]): Promise<TargetResult[]> {
  const each = async <T>(work: (target: Target) => Promise<T>) => {
    const done: T[] = [];
    for (const target of targets) done.push(await work(target));
    return done;
  };
  const startedOnce = async (target: Target) => {
    const run = await startServer(target);
    await stopServer(run.child);
    return run;
  };
  const results: TargetResult[] = targets.map((target) => ({ name: target.name, firstStartsMs: [], startsMs: [], rssAtFirstAnswer: [], loadRuns: [] }));
  // The first start creates the schema (and, for PGlite, the database itself); the timed starts
  // are restarts of a server whose database exists, as every deploy after the first is.
  (await each(startedOnce)).forEach((run, i) => results[i]!.firstStartsMs.push(run.msToFirstPage));
  for (let n = 2; targets[0]!.freshDataDir && n <= LOAD_RUNS; n++) {
    const fresh = await each((target) => startedOnce({ ...target, env: { ...target.env, ...target.freshDataDir!(n) } }));
    fresh.forEach((run, i) => results[i]!.firstStartsMs.push(run.msToFirstPage));
  }
  for (let i = 0; i < STARTS; i++) {
    (await each(startedOnce)).forEach((run, t) => {
      results[t]!.startsMs.push(run.msToFirstPage);
      results[t]!.rssAtFirstAnswer.push(run.rssAtFirstAnswer);
    });
  }
  results.forEach((r, t) =>
    console.error(`${label(targets[t]!)}: first page after ${r.startsMs.map((ms) => ms.toFixed(0)).join(', ')} ms; RSS at first answer ${r.rssAtFirstAnswer.map((mib) => mib.toFixed(0)).join(', ')} MiB`),
  );
  for (let run = 1; run <= LOAD_RUNS; run++) (await each((target) => loadRun(target, `${run}/${LOAD_RUNS}`))).forEach((samples, t) => results[t]!.loadRuns.push(samples));
  return results;
}

/** The store's name, and the tree's when a run compares two. */
const label = (target: Target) => (target.tree.label === 'before' ? `${target.name} before (${target.tree.ref})` : target.name);

/** The issue's goals for one store, from its medians. */
function goalsOf(r: TargetResult, target: Target): Goal[] {
  const atTenThousand = r.loadRuns.map((samples) => samples.find((s) => s.requests === SAMPLE_EVERY)!.rss);
  return [
    { what: `${r.name}: RSS after ${SAMPLE_EVERY.toLocaleString('en')} mixed requests`, value: Math.round(median(atTenThousand)), is: '≤', target: target.goals.rssMiB, unit: 'MiB' },
    { what: `${r.name}: first page after a restart`, value: median(r.startsMs) / 1000, is: '≤', target: target.goals.restartSeconds, unit: 's' },
    { what: `${r.name}: very first start`, value: median(r.firstStartsMs) / 1000, is: '≤', target: 2, unit: 's' },
  ];
}

/** The two stores for one tree, on that tree's own database and data directory. */
function targetsOf(tree: Tree, databaseUrl: string, dataDir: string): Target[] {
  return [
    {
      name: 'PostgreSQL',
      tree,
      goals: { rssMiB: 120, restartSeconds: 0.6 },
      env: {
        NODE_ENV: 'production',
        DATABASE_URL: databaseUrl,
        MAIL_FROM: 'Launched Weekly <digest@launchedweekly.com>',
        RESEND_API_KEY: 're_bench_runtime',
        // Nothing listens there: single mode without welcome e-mails sends nothing anyway.
        RESEND_BASE_URL: 'http://127.0.0.1:9',
        RESEND_WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        DATA_DIR: dataDir,
      },
    },
    // Production refuses the embedded database, so it runs as `npm start` runs it on a fresh
    // clone; the same JSON log lines (pretty ones cost more) go to the same pipe.
    { name: 'PGlite', tree, goals: { rssMiB: 256, restartSeconds: 1.0 }, env: { NODE_ENV: 'development', DATA_DIR: join(dataDir, 'pglite') }, freshDataDir: (n) => ({ DATA_DIR: join(dataDir, `pglite-fresh-${n}`) }) },
  ];
}

const f = (n: number) => n.toFixed(0);
const mib = (values: number[]) => `${f(median(values))} (${values.map(f).join(', ')})`;
const at = (samples: Sample[], n: number) => samples.find((s) => s.requests === n)!;

function row(r: TargetResult, target: Target): string {
  const tenK = r.loadRuns.map((samples) => at(samples, SAMPLE_EVERY));
  const last = r.loadRuns.map((samples) => samples.at(-1)!);
  const growth = r.loadRuns.map((samples) => samples.at(-1)!.rss - at(samples, SAMPLE_EVERY).rss);
  const signed = (n: number) => `${n >= 0 ? '+' : ''}${n.toFixed(1)}`;
  return `| ${label(target)} | ${f(median(r.rssAtFirstAnswer))} | ${mib(tenK.map((s) => s.rss))}, heap ${f(median(tenK.map((s) => s.heapUsed)))} | ${mib(last.map((s) => s.rss))} | ${signed(median(growth))} (${growth.map(signed).join(', ')}) | ${(median(r.startsMs) / 1000).toFixed(2)} s (${r.startsMs.map((ms) => (ms / 1000).toFixed(2)).join(', ')}) |`;
}

interface Measured {
  result: TargetResult;
  target: Target;
}

/** Every sample of one store's load runs and its very first starts; with a before tree, both trees' in one list. */
function detail(ofStore: Measured[]): string {
  const compared = ofStore.length > 1;
  const who = ({ target }: Measured) => (target.tree.label === 'before' ? `before (${target.tree.ref})` : 'after');
  const runs = ofStore.flatMap((m) =>
    m.result.loadRuns.map((samples, run) => `- ${compared ? `${who(m)} ` : ''}run ${run + 1}: ${samples.map((s) => `${s.requests / 1000}k ${f(s.rss)}/${s.heapUsed.toFixed(1)}/${s.heapTotal.toFixed(1)}/${s.external.toFixed(1)}/${f(s.rssAfterGc)} (${f(s.rps)})`).join(' · ')}`),
  );
  const firstStarts = ({ result: r }: Measured) =>
    r.firstStartsMs.length > 1
      ? `Very first start on a fresh data directory (creating the database), median of ${r.firstStartsMs.length}: ${(median(r.firstStartsMs) / 1000).toFixed(2)} s (${r.firstStartsMs.map((ms) => (ms / 1000).toFixed(2)).join(', ')})`
      : `First start (creating the schema): ${(r.firstStartsMs[0]! / 1000).toFixed(2)} s`;
  const starts = compared ? `\n${ofStore.map((m) => `- ${who(m)}: ${firstStarts(m)}.`).join('\n')}` : `\n\n${firstStarts(ofStore[0]!)}.`;
  return `${ofStore[0]!.target.name}, every ${SAMPLE_EVERY.toLocaleString('en')} requests (RSS as the load left it / heap used after a full GC / heap committed / external after GC / RSS after GC, MiB; req/s):\n${runs.join('\n')}${starts}`;
}

/** before | after | after/before of the goals' figures, for each store. */
function comparison(before: Tree, measured: Measured[]): string {
  const goalsFor = (store: string, tree: Tree['label']) => {
    const m = measured.find((entry) => entry.target.name === store && entry.target.tree.label === tree)!;
    return goalsOf(m.result, m.target);
  };
  const stores = [...new Set(measured.map((m) => m.target.name))];
  return comparisonTable(
    before,
    stores.flatMap((store) => {
      const was = goalsFor(store, 'before');
      return goalsFor(store, 'after').map((goal, i) => ({ what: goal.what, before: was[i]!.value, after: goal.value, unit: goal.unit, digits: goal.unit === 's' ? 2 : 0 }));
    }),
  );
}

export async function runRuntimeBench(before?: Tree): Promise<void> {
  const loadBefore = loadavg().map((l) => l.toFixed(1)).join(' ');
  const trees = before ? [before, currentTree()] : [currentTree()];
  // Each tree on its own database: their migrations differ.
  const postgres = await Promise.all(trees.map(() => startOwnPostgres()));
  const dataDirs = trees.map(() => mkdtempSync(join(tmpdir(), 'launched-weekly-runtime-')));
  try {
    const targets = trees.map((tree, t) => targetsOf(tree, postgres[t]!.url, dataDirs[t]!));
    const measured: Measured[] = [];
    for (const store of targets[0]!.map((target) => target.name).filter((name) => STORES.includes(name))) {
      const pair = targets.map((ofTree) => ofTree.find((target) => target.name === store)!);
      (await measureTargets(pair)).forEach((result, t) => measured.push({ result, target: pair[t]! }));
    }
    const goals = measured.filter((m) => m.target.tree.label === 'after').flatMap((m) => goalsOf(m.result, m.target));
    const loadAfter = loadavg().map((l) => l.toFixed(1)).join(' ');

    const after = trees.at(-1)!;
    const command = before
      ? `\`${serverCommand(after)}\` for this tree and \`${serverCommand(before)}\` (that tree's own \`npm start\`) for ${before.ref}, each in its own folder on its own databases, starts and load runs alternating between the two,`
      : `\`${serverCommand(after)}\` (the environment, flags and file of \`npm start\` and the image's ENV and CMD; no TypeScript loader)`;
    const body = `${command} as a child process, HOST 127.0.0.1, DIGEST_CRON=off, request logs at info into a pipe; PostgreSQL 15 of the bench's own (fsync off) with NODE_ENV=production, PGlite in a fresh DATA_DIR with NODE_ENV=development (production refuses the embedded database). Time to first page: from spawning node to the first 200 of \`${FIRST_PAGE}\` (polled every 10 ms), ${STARTS} restarts on an existing database (24 weeks of content). RSS from /proc/PID/status. The load run adds \`--expose-gc\` and a probe that answers with the heap after a full collection; autocannon, ${CONNECTIONS} connections, ⅔ page views across all ${sitePaths().size} pages, ⅓ signups (\`POST /api/subscribe\`, each a new address from a new client address via X-Forwarded-For, TRUST_PROXY=1). One-minute, five-minute and fifteen-minute load average: ${loadBefore} before, ${loadAfter} after.
${before ? `\n${comparison(before, measured)}\n` : ''}
${LOAD_RUNS} load runs per store, each on a fresh server; the RSS and growth columns give their median, then each run's figure.

| store | RSS at first answer MiB (median of ${STARTS} starts) | after 10,000 requests MiB | after ${TOTAL.toLocaleString('en')} MiB | growth 10k→${TOTAL / 1000}k MiB | time to first page, median (${STARTS} starts) |
|---|---|---|---|---|---|
${measured.map((m) => row(m.result, m.target)).join('\n')}

${[...new Set(measured.map((m) => m.target.name))].map((store) => detail(measured.filter((m) => m.target.name === store))).join('\n\n')}

${goalLines(goals)}`;
    if (process.env.BENCH_RUNTIME_PRINT_ONLY) console.log(body);
    else await recordResults('Runtime: compiled server, memory, start-up', benchCommand(`${['BENCH_RUNTIME_REQUESTS', 'BENCH_RUNTIME_RUNS'].filter((name) => process.env[name]).map((name) => `${name}=${process.env[name]} `).join('')}npm run bench -- runtime`, before), body);
  } finally {
    await Promise.all(postgres.map((server) => server.destroy()));
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runRuntimeBench();
