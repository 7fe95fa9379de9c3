// Signup throughput and latency: POST /api/subscribe through the production app (in a child
// process, so autocannon does not share its event loop), against the physical limit of that path
// measured in the same run: single-row INSERTs over a pg pool of the same size, from the same
// number of concurrent callers. Goal (issue 8): app ≥ 0.5 × raw on PostgreSQL. PGlite beside it.
//   npm run bench -- signup
import { PGlite } from '@electric-sql/pglite';
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createApp } from '../server/app.ts';
import { createLogger } from '../server/logger.ts';
import { CLIENT_DIST, loadBuiltRenderer } from '../server/renderer.ts';
import { openPGliteStore } from '../server/store/pglite.ts';
import { createPgClient, openPostgresStore } from '../server/store/postgres.ts';
import type { Store } from '../server/store/types.ts';
import { startOwnPostgres } from '../tests/support/own-postgres.ts';
import { recordResults } from './support/results.ts';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const WARM_UP_SECONDS = 8;
/** openPostgresStore's default pool size, used by the app and by the raw loop alike. */
const POOL_SIZE = 10;
const INSERT = 'insert into public.email_signups (email, source) values ($1, $2)';
/**
 * BENCH_SIGNUP_MODE=double: every signup is a new address in double mode (202), so each one
 * promises a confirmation e-mail (written as an .eml by the mail outbox in the app's process).
 * The figure the mail outbox answers to (issue 21: ≤ 5 % of signup throughput).
 */
const MODE = process.env.BENCH_SIGNUP_MODE === 'double' ? 'double' : 'single';
const EXPECTED_STATUS = MODE === 'double' ? '202' : '201';
/** BENCH_SIGNUP_BACKENDS=postgres (or pglite): only that one. */
const BACKENDS = (process.env.BENCH_SIGNUP_BACKENDS ?? 'postgres,pglite').split(',');

type Backend = 'postgres' | 'pglite';

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  /** CPU time spent per request by the process that serves it (the app, or the raw loop's own). */
  cpuUs?: number;
}

/** User + system CPU seconds a process has used, from /proc (Linux; clock ticks of 1/100 s). */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/** Child process: the production app on the given store, answering on a loopback port. */
async function serve(backend: Backend, target: string) {
  const store: Store = backend === 'postgres' ? await openPostgresStore(target, { max: POOL_SIZE }) : await openPGliteStore(target);
  // Production logs one JSON line per request; the bench pays that cost too, into a sink.
  const logger = createLogger({ level: 'info', pretty: false, destination: new Writable({ write: (_chunk, _encoding, done) => done() }) });
  const renderer = await loadBuiltRenderer();
  const { createServer } = await import('node:http');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const mailDir = await mkdtemp(join(tmpdir(), 'launched-weekly-bench-mail-'));
  const config = {
    env: 'production',
    siteUrl: `http://127.0.0.1:${port}`,
    trustProxy: 0,
    rateLimitPerMinute: 1e9,
    unsubscribeSecret: 'bench-secret-bench-secret-bench-secret-00',
    signupConfirmation: MODE,
    mailer: { kind: 'outbox', dir: mailDir, from: 'Launched Weekly <bench@localhost>' },
  } as const;
  server.on('request', createApp({ config, store, renderer, logger, assets: { kind: 'static', dir: CLIENT_DIST } }));
  process.stdout.write(`${JSON.stringify({ port })}\n`);
  process.on('SIGTERM', () => {
    server.close();
    void store
      .close()
      .then(() => rm(mailDir, { recursive: true, force: true, maxRetries: 5 }))
      .then(() => process.exit(0));
  });
}

interface AppServer {
  url: string;
  pid: number;
  stop: () => Promise<void>;
}

async function startServer(backend: Backend, target: string): Promise<AppServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--serve', backend, target], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`signup bench server exited with ${code}`)));
  });
  const { port } = JSON.parse(line) as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

let sequence = 0;
const nextAddress = (tag: string) => `${tag}.${process.pid}.${sequence++}@bench.example.com`;

async function loadApp(server: AppServer, seconds: number): Promise<Figures> {
  const cpuBefore = await cpuSeconds(server.pid);
  const result = await autocannon({
    url: server.url,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path: '/api/subscribe',
        headers: { 'content-type': 'application/json' },
        setupRequest: (request) => ({ ...request, body: JSON.stringify({ email: nextAddress('app') }) }),
      },
    ],
  });
  const statuses = result.statusCodeStats as Record<string, { count: number }> | undefined;
  if (result.errors + result.timeouts > 0 || Object.keys(statuses ?? {}).some((status) => status !== EXPECTED_STATUS)) {
    throw new Error(`signups did not all answer ${EXPECTED_STATUS}: ${JSON.stringify({ errors: result.errors, timeouts: result.timeouts, statuses })}`);
  }
  const cpuUs = ((await cpuSeconds(server.pid)) - cpuBefore) * 1e6 / result.requests.total;
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, cpuUs };
}

/** The same app answering GET /healthz (no body, no database): its HTTP ceiling on this machine. */
async function loadHealthz(server: AppServer, seconds: number): Promise<Figures> {
  const cpuBefore = await cpuSeconds(server.pid);
  const result = await autocannon({ url: `${server.url}/healthz`, connections: CONNECTIONS, duration: seconds });
  if (result.errors + result.timeouts + result.non2xx > 0) throw new Error('GET /healthz failed under load');
  const cpuUs = ((await cpuSeconds(server.pid)) - cpuBefore) * 1e6 / result.requests.total;
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, cpuUs };
}

/** `CONNECTIONS` callers inserting one row at a time for `seconds`. */
async function loadRaw(insert: (email: string) => Promise<unknown>, seconds: number): Promise<Figures> {
  const latencies: number[] = [];
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        await insert(nextAddress('raw'));
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), cpuUs: (cpu.user + cpu.system) / latencies.length };
}

interface Comparison {
  rows: string[];
  app: Figures;
  raw: Figures;
  healthz: Figures;
  ratio: number;
}

async function compare(label: string, server: AppServer, insert: (email: string) => Promise<unknown>): Promise<Comparison> {
  // Warm-up: JIT (the app's signup path keeps getting faster for a few seconds), the pool's
  // connections, the table's first pages.
  await loadApp(server, WARM_UP_SECONDS);
  await loadRaw(insert, 2);
  await loadHealthz(server, 2);
  const app: Figures[] = [];
  const raw: Figures[] = [];
  const healthz: Figures[] = [];
  const rows: string[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const a = await loadApp(server, SECONDS);
    const b = await loadRaw(insert, SECONDS);
    const h = await loadHealthz(server, SECONDS);
    app.push(a);
    raw.push(b);
    healthz.push(h);
    rows.push(
      `| ${label} | ${round} | ${a.rps.toFixed(0)} | ${a.p50.toFixed(1)} | ${a.p99.toFixed(1)} | ${a.cpuUs!.toFixed(0)} | ${b.rps.toFixed(0)} | ${b.p50.toFixed(1)} | ${b.p99.toFixed(1)} | ${b.cpuUs!.toFixed(0)} | ${(a.rps / b.rps).toFixed(2)} | ${h.rps.toFixed(0)} | ${h.cpuUs!.toFixed(0)} |`,
    );
    console.error(`${label} round ${round}/${ROUNDS}: app ${a.rps.toFixed(0)} signups/s, raw ${b.rps.toFixed(0)} inserts/s, /healthz ${h.rps.toFixed(0)} req/s`);
  }
  const mid = (list: Figures[]): Figures => ({
    rps: median(list.map((f) => f.rps)),
    p50: median(list.map((f) => f.p50)),
    p99: median(list.map((f) => f.p99)),
    cpuUs: median(list.map((f) => f.cpuUs ?? 0)),
  });
  const appMedian = mid(app);
  const rawMedian = mid(raw);
  return { rows, app: appMedian, raw: rawMedian, healthz: mid(healthz), ratio: appMedian.rps / rawMedian.rps };
}

let postgresVersion = 'unknown';

async function benchPostgres(): Promise<Comparison> {
  const postgres = await startOwnPostgres({ maxConnections: 100 });
  try {
    const server = await startServer('postgres', postgres.url);
    const pool = createPgClient(postgres.url, { max: POOL_SIZE });
    try {
      const version = await pool.query<{ server_version: string }>('show server_version');
      postgresVersion = version.rows[0]?.server_version ?? 'unknown';
      return await compare('PostgreSQL', server, (email) => pool.query(INSERT, [email, '/']));
    } finally {
      await pool.close();
      await server.stop();
    }
  } finally {
    await postgres.destroy();
  }
}

async function benchPGlite(): Promise<Comparison> {
  const dir = await mkdtemp(join(tmpdir(), 'launched-weekly-bench-signup-'));
  try {
    const server = await startServer('pglite', join(dir, 'app'));
    // The raw loop gets its own embedded database (PGlite has one owner process), migrated the
    // same way and then driven directly.
    await (await openPGliteStore(join(dir, 'raw'))).close();
    const db = new PGlite(join(dir, 'raw', 'db'));
    try {
      return await compare('PGlite', server, (email) => db.query(INSERT, [email, '/']));
    } finally {
      await db.close();
      await server.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function runSignupBench(): Promise<{ ratio: number }> {
  const loadBefore = loadavg()[0]!;
  if (MODE === 'double') return runDoubleModeBench(loadBefore);
  const postgres = await benchPostgres();
  const pglite = await benchPGlite();
  const loadAfter = loadavg()[0]!;
  const summary = (label: string, c: Comparison) =>
    `| ${label} | ${c.app.rps.toFixed(0)} | ${c.app.p50.toFixed(1)} | ${c.app.p99.toFixed(1)} | ${c.app.cpuUs!.toFixed(0)} | ${c.raw.rps.toFixed(0)} | ${c.raw.p50.toFixed(1)} | ${c.raw.p99.toFixed(1)} | ${c.raw.cpuUs!.toFixed(0)} | **${c.ratio.toFixed(2)}** | ${c.healthz.rps.toFixed(0)} | ${c.healthz.cpuUs!.toFixed(0)} |`;
  const ceiling = postgres.app.rps / postgres.healthz.rps;
  await recordResults(
    'Signup throughput: POST /api/subscribe vs raw single-row INSERTs',
    'npm run bench -- signup',
    `Each signup is a new address (201). The app (production build, request logging into a null sink, rate limit off) runs in a child process; autocannon sends ${CONNECTIONS} concurrent connections. "Raw" is ${CONNECTIONS} concurrent callers in the bench process running \`${INSERT}\` one row at a time: over a pg pool of ${POOL_SIZE} connections (the app's pool size) for PostgreSQL, straight on an embedded PGlite for PGlite. PostgreSQL ${postgresVersion} is a private server started for the run (fsync off, loopback). "/healthz" is the same app process answering its liveness check (no body, no database): the HTTP ceiling of this app on this machine. "CPU µs" is user + system CPU time per request of the process doing the work: the app's for app and /healthz, the bench process's (the pg driver; for PGlite the whole database) for raw. ${ROUNDS} alternating rounds of ${SECONDS} s after warm-ups (app ${WARM_UP_SECONDS} s, the others 2 s); medians. One-minute load average ${loadBefore.toFixed(1)} before the run and ${loadAfter.toFixed(1)} after it (other processes shared the machine).

| backend | app signups/s | app p50 ms | app p99 ms | app CPU µs | raw inserts/s | raw p50 ms | raw p99 ms | raw CPU µs | ratio | /healthz req/s | /healthz CPU µs |
|---|---|---|---|---|---|---|---|---|---|---|---|
${summary('PostgreSQL', postgres)}
${summary('PGlite', pglite)}

Rounds:

| backend | round | app/s | app p50 | app p99 | app CPU µs | raw/s | raw p50 | raw p99 | raw CPU µs | ratio | /healthz/s | /healthz CPU µs |
|---|---|---|---|---|---|---|---|---|---|---|---|---|
${[...postgres.rows, ...pglite.rows].join('\n')}

**PostgreSQL: app ${postgres.app.rps.toFixed(0)} signups/s = ${postgres.ratio.toFixed(2)} × the raw INSERT loop** (goal ≥ 0.50), and ${ceiling.toFixed(2)} × the same process's /healthz.

How the app writes: a signup that finds no statement in flight is written alone at once; the ones that arrive while a statement runs are written together in the next one, a multi-row INSERT (server/store/signup-batcher.ts), each answered only after its row has committed. "Raw" stays one statement per row: the path the app took before, so the ratio says what the batching and the app's own cost add up to. Of a signup's ${postgres.app.cpuUs!.toFixed(0)} µs of app CPU, ~${postgres.healthz.cpuUs!.toFixed(0)} µs are what any request costs this app (HTTP parsing, helmet's headers, compression's check, the request log: /healthz); the rest is the signup path (rate limit, cross-site check, body parsing, validation, its share of a statement, the JSON answer).`,
  );
  return { ratio: postgres.ratio };
}

/** Double mode: the app's figures only (the raw loop is the same as in single mode), per backend asked for. */
async function runDoubleModeBench(loadBefore: number): Promise<{ ratio: number }> {
  const results: [string, Comparison][] = [];
  if (BACKENDS.includes('postgres')) results.push(['PostgreSQL', await benchPostgres()]);
  if (BACKENDS.includes('pglite')) results.push(['PGlite', await benchPGlite()]);
  const row = ([label, c]: [string, Comparison]) => `| ${label} | ${c.app.rps.toFixed(0)} | ${c.app.p50.toFixed(1)} | ${c.app.p99.toFixed(1)} | ${c.app.cpuUs!.toFixed(0)} | ${c.healthz.rps.toFixed(0)} |`;
  await recordResults(
    'Signup throughput in double mode (each signup promises a confirmation e-mail)',
    'BENCH_SIGNUP_MODE=double npm run bench -- signup',
    `Each signup is a new address in double mode (202), so each queues a confirmation that the app's mail outbox writes as an .eml file. Otherwise as the single-mode signup benchmark: ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s after an ${WARM_UP_SECONDS} s warm-up, medians. Load average ${loadBefore.toFixed(1)} before and ${loadavg()[0]!.toFixed(1)} after (a shared machine).

| backend | app signups/s | app p50 ms | app p99 ms | app CPU µs | /healthz req/s |
|---|---|---|---|---|---|
${results.map(row).join('\n')}`,
  );
  return { ratio: results[0]?.[1].ratio ?? 0 };
}

if (process.argv[2] === '--serve') await serve(process.argv[3] as Backend, process.argv[4]!);
else if (import.meta.url === `file://${process.argv[1]}`) await runSignupBench();
