// Signup throughput and latency: POST /api/subscribe through the production app (in a child
// process, so the load generator does not share its event loop), against the physical limit of that path
// measured in the same run: single-row INSERTs over a pg pool of the same size, from the same
// number of concurrent callers. Goal (issue 23): app ≥ 0.6 × raw on PostgreSQL with every defence
// on. PGlite beside it.
//   npm run bench -- signup
// Knobs: BENCH_CONNECTIONS, BENCH_ROUNDS, BENCH_SECONDS, BENCH_SIGNUP_MODE=double,
// BENCH_SIGNUP_BACKENDS=postgres (leaves PGlite out; double mode also takes pglite alone),
// BENCH_SIGNUP_CPU_PROF=DIR, BENCH_SIGNUP_NODE_FLAGS (instead of the start script's),
// BENCH_SIGNUP_EXTRA_APP_US.
import { PGlite } from '@electric-sql/pglite';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { SIGNUPS_PER_ADDRESS_PER_DAY } from '../server/abuse/signup-guard.ts';
import { createApp } from '../server/app.ts';
import { createLogger } from '../server/logger.ts';
import { CLIENT_DIST, loadBuiltRenderer } from '../server/renderer.ts';
import { openPGliteStore } from '../server/store/pglite.ts';
import { createPgClient, openPostgresStore } from '../server/store/postgres.ts';
import type { Store } from '../server/store/types.ts';
import { startOwnPostgres } from '../tests/support/own-postgres.ts';
import { percentile, runLoad, type LoadResult } from './support/http-load.ts';
import { recordResults } from './support/results.ts';
import { lateV8Flags, setLateV8Flags } from '../server/late-v8-flags.ts';
import { startEnv, startFlags } from './support/start-flags.ts';

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
/** BENCH_SIGNUP_BACKENDS=postgres: PGlite left out; in double mode `pglite` alone also works (single mode always measures PostgreSQL, the goal's figure). */
const BACKENDS = (process.env.BENCH_SIGNUP_BACKENDS ?? 'postgres,pglite').split(',');
/** BENCH_SIGNUP_CPU_PROF=DIR: the app's child writes a V8 CPU profile there when it stops. */
const CPU_PROF_DIR = process.env.BENCH_SIGNUP_CPU_PROF;
/**
 * RATE_LIMIT_PER_MINUTE's default, the limit production runs with. Every signup comes from its own
 * client address (X-Forwarded-For behind one trusted proxy), as a crowd's would, so the limit
 * counts every post (one counter row per address, its worst case) and refuses none.
 */
const RATE_LIMIT_PER_MINUTE = 10;

/**
 * BENCH_SIGNUP_EXTRA_APP_US=N: the app's child spins for N µs (wall time) on every signup before
 * the app sees it. Runs at N = 0, 100, 200 measure how the rate answers to the app's CPU per
 * signup, and so how much less of it the goal needs (bench/RESULTS.md, note "what the two open
 * goals would take"). Such a run prints its rounds and records nothing.
 */
const EXTRA_APP_US = Number(process.env.BENCH_SIGNUP_EXTRA_APP_US ?? 0);

/** A 'request' listener registered before the app's: it runs first, and spins on every POST. */
function spinOnSignups(microseconds: number) {
  return (req: IncomingMessage) => {
    if (req.method !== 'POST') return;
    const until = performance.now() + microseconds / 1000;
    while (performance.now() < until);
  };
}

type Backend = 'postgres' | 'pglite';

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  /** CPU time spent per request by the process that serves it (the app, or the raw loop's own). */
  cpuUs?: number;
  /** PostgreSQL's CPU time per request (all its processes), when the backend is PostgreSQL. */
  dbCpuUs?: number;
  /** The bench process's CPU time per request while it sends the app's load (bench/support/http-load.ts). */
  loadCpuUs?: number;
  /** The app's main thread (where its JavaScript runs), per signup: time on a core, and time runnable but waiting for one. */
  thread?: { onCoreUs: number; waitingUs: number };
  /** The share of the machine's CPU time that was idle while the load ran (every process's, this bench's included). */
  idleShare?: number;
}

/** A process's main thread: its time on a core and waiting on the run queue for one, in nanoseconds (/proc/<pid>/task/<pid>/schedstat, Linux). */
async function mainThreadSchedule(pid: number): Promise<{ onCoreNs: number; waitingNs: number }> {
  const [onCoreNs = 0, waitingNs = 0] = (await readFile(`/proc/${pid}/task/${pid}/schedstat`, 'utf8')).split(' ').map(Number);
  return { onCoreNs, waitingNs };
}

/** The machine's CPU time so far in clock ticks, all of it and its idle part: the first line of /proc/stat (guest time is already in user). */
async function machineTicks(): Promise<{ total: number; idle: number }> {
  const [user, nice, system, idle, iowait, irq, softirq, steal] = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return { total: user! + nice! + system! + idle! + iowait! + irq! + softirq! + steal!, idle: idle! + iowait! };
}

const idleSince = async (before: { total: number; idle: number }) => {
  const after = await machineTicks();
  return (after.idle - before.idle) / Math.max(1, after.total - before.total);
};

/** User + system CPU seconds a process has used, from /proc (Linux; clock ticks of 1/100 s). */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Every process of the PostgreSQL server listening on `port` (the postmaster and its children; exited ones count in its cutime/cstime). */
async function postgresCpuSeconds(port: number): Promise<number> {
  const pids = (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry));
  const stats = new Map<number, { ppid: number; ticks: number; children: number }>();
  let postmaster: number | undefined;
  for (const pid of pids) {
    const [cmdline, stat] = await Promise.all([readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => ''), readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')]);
    if (!stat) continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    stats.set(Number(pid), { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]), children: Number(fields[13]) + Number(fields[14]) });
    if (cmdline.includes('postgres') && cmdline.includes(`\0-p\0${port}\0`)) postmaster = Number(pid);
  }
  if (postmaster === undefined) return 0;
  let ticks = stats.get(postmaster)!.ticks + stats.get(postmaster)!.children;
  for (const stat of stats.values()) if (stat.ppid === postmaster) ticks += stat.ticks;
  return ticks / 100;
}

const dbCpu = (figures: Figures) => (figures.dbCpuUs === undefined ? '–' : figures.dbCpuUs.toFixed(0));
const threadTimes = (figures: Figures) => (figures.thread ? `${figures.thread.onCoreUs.toFixed(0)} / ${figures.thread.waitingUs.toFixed(0)}` : '–');
const idlePercent = (figures: Figures) => (figures.idleShare === undefined ? '–' : `${(100 * figures.idleShare).toFixed(0)} %`);
/** The columns both tables end with: the app's main thread per signup, and the machine's idle CPU during the app's and the raw loop's load. */
const scheduleColumns = (app: Figures, raw: Figures) => `${threadTimes(app)} | ${idlePercent(app)} / ${idlePercent(raw)} |`;

/** PostgreSQL's CPU seconds so far, while the PostgreSQL backend is measured. */
let databaseCpu: (() => Promise<number>) | null = null;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Child process: the production app on the given store, answering on a loopback port. */
async function serve(backend: Backend, target: string) {
  // The V8 flags the production server sets on itself after its command line's.
  setLateV8Flags(backend);
  const store: Store = backend === 'postgres' ? await openPostgresStore(target, { max: POOL_SIZE }) : await openPGliteStore(target);
  // Production logs one JSON line per request; the bench pays that cost too, into a sink.
  const logger = createLogger({ level: 'info', pretty: false, destination: new Writable({ write: (_chunk, _encoding, done) => done() }) });
  const renderer = await loadBuiltRenderer();
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const mailDir = await mkdtemp(join(tmpdir(), 'launched-weekly-bench-mail-'));
  const config = {
    env: 'production',
    siteUrl: `http://127.0.0.1:${port}`,
    trustProxy: 1,
    rateLimitPerMinute: RATE_LIMIT_PER_MINUTE,
    unsubscribeSecret: 'bench-secret-bench-secret-bench-secret-00',
    signupConfirmation: MODE,
    mailer: { kind: 'outbox', dir: mailDir, from: 'Launched Weekly <bench@localhost>' },
  } as const;
  const app = createApp({ config, store, renderer, logger, assets: { kind: 'static', dir: CLIENT_DIST } });
  if (EXTRA_APP_US > 0) server.on('request', spinOnSignups(EXTRA_APP_US));
  server.on('request', app);
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
  const profile = CPU_PROF_DIR ? ['--cpu-prof', '--cpu-prof-dir', CPU_PROF_DIR, '--cpu-prof-name', `signup-${backend}-${MODE}-${process.pid}.cpuprofile`] : [];
  // npm start's node flags and allocator settings, as production runs the server.
  const child = spawn(process.execPath, [...startFlags(process.env.BENCH_SIGNUP_NODE_FLAGS), ...profile, '--import', 'tsx', fileURLToPath(import.meta.url), '--serve', backend, target], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...startEnv(), ...process.env, NODE_ENV: 'production' },
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
let client = 0;
/** A new client address per signup (10.0.0.0/8 holds 16 million), given by the trusted proxy. */
const nextClient = () => {
  const n = client++;
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
};

async function loadApp(server: AppServer, seconds: number): Promise<Figures> {
  const cpuBefore = await cpuSeconds(server.pid);
  const dbBefore = await databaseCpu?.();
  const loadBefore = process.cpuUsage();
  const threadBefore = await mainThreadSchedule(server.pid);
  const machineBefore = await machineTicks();
  const result = await runLoad({
    url: server.url,
    connections: CONNECTIONS,
    seconds,
    next: () => ({
      method: 'POST',
      path: '/api/subscribe',
      // What a browser's fetch from the site's own page sends: the cross-site check reads Sec-Fetch-Site.
      headers: { 'content-type': 'application/json', 'sec-fetch-site': 'same-origin', origin: server.url, 'x-forwarded-for': nextClient() },
      body: JSON.stringify({ email: nextAddress('app') }),
    }),
  });
  expectOnly(result, Number(EXPECTED_STATUS), 'signups');
  const load = process.cpuUsage(loadBefore);
  const threadAfter = await mainThreadSchedule(server.pid);
  const idleShare = await idleSince(machineBefore);
  const signups = result.requests;
  const cpuUs = ((await cpuSeconds(server.pid)) - cpuBefore) * 1e6 / signups;
  const dbCpuUs = dbBefore === undefined ? undefined : ((await databaseCpu!()) - dbBefore) * 1e6 / signups;
  const thread = { onCoreUs: (threadAfter.onCoreNs - threadBefore.onCoreNs) / 1000 / signups, waitingUs: (threadAfter.waitingNs - threadBefore.waitingNs) / 1000 / signups };
  return { rps: result.rate, p50: result.latency.p50, p99: result.latency.p99, cpuUs, dbCpuUs, loadCpuUs: (load.user + load.system) / signups, thread, idleShare };
}

/** Stops the bench when any answer of the load had another status than `status`. */
function expectOnly(result: LoadResult, status: number, what: string) {
  if ([...result.statuses.keys()].some((answered) => answered !== status)) {
    throw new Error(`${what} did not all answer ${status}: ${JSON.stringify(Object.fromEntries(result.statuses))}`);
  }
}

/** The same app answering GET /healthz (no body, no database): its HTTP ceiling on this machine. */
async function loadHealthz(server: AppServer, seconds: number): Promise<Figures> {
  const cpuBefore = await cpuSeconds(server.pid);
  const result = await runLoad({ url: server.url, connections: CONNECTIONS, seconds, next: () => ({ method: 'GET', path: '/healthz', headers: {} }) });
  expectOnly(result, 200, 'GET /healthz');
  const cpuUs = ((await cpuSeconds(server.pid)) - cpuBefore) * 1e6 / result.requests;
  return { rps: result.rate, p50: result.latency.p50, p99: result.latency.p99, cpuUs };
}

/** `CONNECTIONS` callers inserting one row at a time for `seconds`. */
async function loadRaw(insert: (email: string) => Promise<unknown>, seconds: number): Promise<Figures> {
  const latencies: number[] = [];
  const cpuBefore = process.cpuUsage();
  const dbBefore = await databaseCpu?.();
  const machineBefore = await machineTicks();
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
  const idleShare = await idleSince(machineBefore);
  const cpu = process.cpuUsage(cpuBefore);
  const dbCpuUs = dbBefore === undefined ? undefined : ((await databaseCpu!()) - dbBefore) * 1e6 / latencies.length;
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), cpuUs: (cpu.user + cpu.system) / latencies.length, dbCpuUs, idleShare };
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
      `| ${label} | ${round} | ${a.rps.toFixed(0)} | ${a.p50.toFixed(1)} | ${a.p99.toFixed(1)} | ${a.cpuUs!.toFixed(0)} | ${b.rps.toFixed(0)} | ${b.p50.toFixed(1)} | ${b.p99.toFixed(1)} | ${b.cpuUs!.toFixed(0)} | ${(a.rps / b.rps).toFixed(2)} | ${h.rps.toFixed(0)} | ${h.cpuUs!.toFixed(0)} | ${dbCpu(a)} / ${dbCpu(b)} | ${scheduleColumns(a, b)}`,
    );
    console.error(
      `${label} round ${round}/${ROUNDS}: app ${a.rps.toFixed(0)} signups/s (${a.cpuUs!.toFixed(0)} µs app CPU, ${dbCpu(a)} µs database CPU, ${a.loadCpuUs!.toFixed(0)} µs load generator CPU; the app's main thread ${threadTimes(a)} µs on a core / waiting for one; machine ${idlePercent(a)} idle), raw ${b.rps.toFixed(0)} inserts/s (${dbCpu(b)} µs database CPU; machine ${idlePercent(b)} idle), /healthz ${h.rps.toFixed(0)} req/s`,
    );
  }
  const mid = (list: Figures[]): Figures => ({
    rps: median(list.map((f) => f.rps)),
    p50: median(list.map((f) => f.p50)),
    p99: median(list.map((f) => f.p99)),
    cpuUs: median(list.map((f) => f.cpuUs ?? 0)),
    loadCpuUs: median(list.map((f) => f.loadCpuUs ?? 0)),
    dbCpuUs: list[0]?.dbCpuUs === undefined ? undefined : median(list.map((f) => f.dbCpuUs ?? 0)),
    thread: list[0]?.thread && { onCoreUs: median(list.map((f) => f.thread?.onCoreUs ?? 0)), waitingUs: median(list.map((f) => f.thread?.waitingUs ?? 0)) },
    idleShare: list[0]?.idleShare === undefined ? undefined : median(list.map((f) => f.idleShare ?? 0)),
  });
  const appMedian = mid(app);
  const rawMedian = mid(raw);
  return { rows, app: appMedian, raw: rawMedian, healthz: mid(healthz), ratio: appMedian.rps / rawMedian.rps };
}

let postgresVersion = 'unknown';

/** Where the app's thread spent the time between two signups, and what the machine left unused meanwhile. */
function threadSentence({ app, raw }: Comparison): string {
  if (!app.thread || app.idleShare === undefined || raw.idleShare === undefined) return '';
  const between = 1e6 / app.rps;
  const { onCoreUs, waitingUs } = app.thread;
  return ` The app's JavaScript runs on one thread. Per signup, ${between.toFixed(0)} µs apart, it was on a core for ${onCoreUs.toFixed(0)} µs and runnable but waiting for a core for ${waitingUs.toFixed(0)} µs (idle the remaining ${Math.max(0, between - onCoreUs - waitingUs).toFixed(0)} µs), while ${(100 * app.idleShare).toFixed(0)} % of the machine's CPU time went unused; during the raw loop ${(100 * raw.idleShare).toFixed(0)} % did. The three processes take turns on two cores, and the one thread every signup passes through spent ${((100 * waitingUs) / between).toFixed(0)} % of its time queued behind the other two.`;
}

async function benchPostgres(): Promise<Comparison> {
  const postgres = await startOwnPostgres({ maxConnections: 100 });
  databaseCpu = () => postgresCpuSeconds(postgres.port);
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
    databaseCpu = null;
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
  if (EXTRA_APP_US > 0) {
    // A deliberately slowed app: its rounds are printed above, the current table stays, and
    // PGlite, which the figure is not about, is not run.
    console.error(`BENCH_SIGNUP_EXTRA_APP_US=${EXTRA_APP_US}: ratio ${postgres.ratio.toFixed(2)}, not recorded in bench/RESULTS.md`);
    return { ratio: postgres.ratio };
  }
  const pglite = BACKENDS.includes('pglite') ? await benchPGlite() : null;
  const loadAfter = loadavg()[0]!;
  const summary = (label: string, c: Comparison) =>
    `| ${label} | ${c.app.rps.toFixed(0)} | ${c.app.p50.toFixed(1)} | ${c.app.p99.toFixed(1)} | ${c.app.cpuUs!.toFixed(0)} | ${c.raw.rps.toFixed(0)} | ${c.raw.p50.toFixed(1)} | ${c.raw.p99.toFixed(1)} | ${c.raw.cpuUs!.toFixed(0)} | **${c.ratio.toFixed(2)}** | ${c.healthz.rps.toFixed(0)} | ${c.healthz.cpuUs!.toFixed(0)} | ${dbCpu(c.app)} / ${dbCpu(c.raw)} | ${scheduleColumns(c.app, c.raw)}`;
  const ceiling = postgres.app.rps / postgres.healthz.rps;
  await recordResults(
    'Signup throughput: POST /api/subscribe vs raw single-row INSERTs',
    'npm run bench -- signup',
    `Each signup is a new address (201). The app (production build, request logging into a null sink) runs in a child process with \`npm start\`'s node flags and allocator settings (\`${Object.entries(startEnv()).map(([name, value]) => `${name}=${value} `).join('')}node ${startFlags(process.env.BENCH_SIGNUP_NODE_FLAGS).join(' ')}\`, then the V8 flags the server sets on itself: \`${lateV8Flags('postgres').join(' ')}\`, and for PGlite also \`${lateV8Flags('pglite').filter((flag) => !lateV8Flags('postgres').includes(flag)).join(' ')}\`; server/late-v8-flags.ts) with every defence of the production configuration on: the limit per client address (RATE_LIMIT_PER_MINUTE=${RATE_LIMIT_PER_MINUTE}, the default; each signup comes from its own address via X-Forwarded-For with TRUST_PROXY=1, so every post is counted and none refused), the limit per mailbox (${SIGNUPS_PER_ADDRESS_PER_DAY} a day), the cross-site check (each post sends Sec-Fetch-Site: same-origin and the site's Origin), the honeypot, the disposable-domain list and the suppression list's mailbox keys. The load comes from ${CONNECTIONS} keep-alive connections with one request in flight each, from bench/support/http-load.ts in the bench process: it writes each request as one string and reads only the answer's status and length, and so leaves more of the shared cores to the app and the database than autocannon, which rebuilt each request and parsed every answer's headers in JavaScript, at about half its CPU per signup (bench/RESULTS.md, the note "Issue 23: a lighter load generator…"). "Raw" is ${CONNECTIONS} concurrent callers in the bench process running \`${INSERT}\` one row at a time: over a pg pool of ${POOL_SIZE} connections (the app's pool size) for PostgreSQL, straight on an embedded PGlite for PGlite. PostgreSQL ${postgresVersion} is a private server started for the run (fsync off, loopback). "/healthz" is the same app process answering its liveness check (no body, no database): the HTTP ceiling of this app on this machine. "CPU µs" is user + system CPU time per request of the process doing the work: the app's for app and /healthz, the bench process's (the pg driver; for PGlite the whole database) for raw; "PostgreSQL CPU µs" is the database server's (all its processes) per signup or insert, from /proc. "App main thread" is the thread the app's JavaScript runs on, per signup: its time on a core and its time runnable but waiting for one (/proc/<pid>/task/<pid>/schedstat); "idle CPU" is the share of the whole machine's CPU time left unused while the app's load and while the raw loop ran (/proc/stat). ${ROUNDS} alternating rounds of ${SECONDS} s after warm-ups (app ${WARM_UP_SECONDS} s, the others 2 s); medians. One-minute load average ${loadBefore.toFixed(1)} before the run and ${loadAfter.toFixed(1)} after it (other processes shared the machine).

| backend | app signups/s | app p50 ms | app p99 ms | app CPU µs | raw inserts/s | raw p50 ms | raw p99 ms | raw CPU µs | ratio | /healthz req/s | /healthz CPU µs | PostgreSQL CPU µs app / raw | app main thread µs on a core / waiting | idle CPU app / raw |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
${summary('PostgreSQL', postgres)}
${pglite ? summary('PGlite', pglite) : ''}

Rounds:

| backend | round | app/s | app p50 | app p99 | app CPU µs | raw/s | raw p50 | raw p99 | raw CPU µs | ratio | /healthz/s | /healthz CPU µs | PostgreSQL CPU µs app / raw | app main thread µs on a core / waiting | idle CPU app / raw |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
${[...postgres.rows, ...(pglite?.rows ?? [])].join('\n')}

**PostgreSQL: app ${postgres.app.rps.toFixed(0)} signups/s = ${postgres.ratio.toFixed(2)} × the raw INSERT loop** (goal ≥ 0.60), and ${ceiling.toFixed(2)} × the same process's /healthz.

How the app writes: a new address's row goes to the database in the statement that takes its two limit counts, with the other signups' of that moment (signup_counted_list, server/abuse/rate-limit-batcher.ts, at most two statements in flight), and is written only within both limits; a signup that statement did not write (a repeat, an address already on the list) takes a second statement (server/store/signup-batcher.ts). Each is answered only after its row has committed. "Raw" stays one statement per row with no limits, so the ratio says what the batching and the app's own cost add up to. Of a signup's ${postgres.app.cpuUs!.toFixed(0)} µs of app CPU, ~${postgres.healthz.cpuUs!.toFixed(0)} µs are what any request costs this app (HTTP parsing, Express, the security headers, the request log: /healthz); the rest is the signup path (limit counts, cross-site check, body reading, validation, five keyed hashes, its share of one statement, the JSON answer). The three processes share the machine's cores: per signup the app ${postgres.app.cpuUs!.toFixed(0)} µs, PostgreSQL ${dbCpu(postgres.app)} µs and the load generator ${postgres.app.loadCpuUs!.toFixed(0)} µs of CPU; per raw insert PostgreSQL ${dbCpu(postgres.raw)} µs and the pg driver ${postgres.raw.cpuUs!.toFixed(0)} µs.${threadSentence(postgres)}`,
  );
  return { ratio: postgres.ratio };
}

/** Double mode: the app's figures only (the raw loop is the same as in single mode), per backend asked for. */
async function runDoubleModeBench(loadBefore: number): Promise<{ ratio: number }> {
  const results: [string, Comparison][] = [];
  if (BACKENDS.includes('postgres')) results.push(['PostgreSQL', await benchPostgres()]);
  if (BACKENDS.includes('pglite')) results.push(['PGlite', await benchPGlite()]);
  const row = ([label, c]: [string, Comparison]) => `| ${label} | ${c.app.rps.toFixed(0)} | ${c.app.p50.toFixed(1)} | ${c.app.p99.toFixed(1)} | ${c.app.cpuUs!.toFixed(0)} | ${dbCpu(c.app)} | ${c.healthz.rps.toFixed(0)} |`;
  await recordResults(
    'Signup throughput in double mode (each signup promises a confirmation e-mail)',
    'BENCH_SIGNUP_MODE=double npm run bench -- signup',
    `Each signup is a new address in double mode (202), with every defence on as in the single-mode benchmark, so each queues a confirmation that the app's mail outbox writes as an .eml file. Otherwise as the single-mode signup benchmark: ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s after an ${WARM_UP_SECONDS} s warm-up, medians. Load average ${loadBefore.toFixed(1)} before and ${loadavg()[0]!.toFixed(1)} after (one-minute averages; the runs themselves raise it).

| backend | app signups/s | app p50 ms | app p99 ms | app CPU µs | PostgreSQL CPU µs | /healthz req/s |
|---|---|---|---|---|---|---|
${results.map(row).join('\n')}`,
  );
  return { ratio: results[0]?.[1].ratio ?? 0 };
}

if (process.argv[2] === '--serve') await serve(process.argv[3] as Backend, process.argv[4]!);
else if (import.meta.url === `file://${process.argv[1]}`) await runSignupBench();
