// The Monday job at list sizes the product may grow to: `npm run digest` as a child process on a
// PostgreSQL of its own, against the local server that answers as Resend does.
//   npm run bench -- digest          (or: node --import tsx bench/digest.ts)
// (a) unconstrained, at 100,000 and 1,000,000 subscribers: ≥ 5,000 recipients/s,
//     ≤ 0.05 queries per recipient, peak RSS ≤ 150 MB, the median of DIGEST_BENCH_REPEATS runs;
//     (b) the provider advertising and enforcing R requests per second: total time against the
//     floor N / (100 · R) s (goal ≤ 1.1×).
// With `--before REF` REF's own job (its build, its digest script's V8 flags) runs beside this tree's
// on a PostgreSQL of its own migrated by its own store, the runs alternating (before, after…) at
// each size, against the same stand-in provider.
// Knobs: DIGEST_BENCH_SIZES (default 100000,1000000), DIGEST_BENCH_RATE_SIZES (default 10000),
// DIGEST_BENCH_RATE (default 10), DIGEST_BENCH_REPEATS (runs per unconstrained size, default 1;
// the median is reported), DIGEST_BENCH_CPU_PROF=DIR (profile each job run),
// DIGEST_BENCH_PRINT_ONLY=1 (print the table instead of writing it to bench/RESULTS.md),
// DIGEST_BENCH_NODE_FLAGS="--max-…" (V8 flags for the job instead of the digest script's own),
// DIGEST_BENCH_SOURCE=1 (run bin/digest.ts through tsx instead of the compiled dist/bin/digest.js).
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { recaps } from '../content/index.ts';
import type { DigestReport } from '../server/mail/digest/run.ts';
import type { openPostgresStore as OpenPostgresStore } from '../server/store/postgres.ts';
import { startFakeResend, type FakeResend } from '../tests/support/fake-resend.ts';
import { startOwnPostgres, type OwnPostgres } from '../scripts/own-postgres.ts';
import { benchCommand, comparisonTable } from './support/compare.ts';
import { goalLines, type Goal } from './support/goals.ts';
import { recordResults } from './support/results.ts';
import { currentTree, type Tree } from './support/tree.ts';

const sizes = (name: string, fallback: string) =>
  (process.env[name] ?? fallback)
    .split(',')
    .map((n) => Number(n.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);
const SIZES = sizes('DIGEST_BENCH_SIZES', '100000,1000000');
const RATE_SIZES = sizes('DIGEST_BENCH_RATE_SIZES', '10000');
const RATE = Number(process.env.DIGEST_BENCH_RATE ?? 10);
const REPEATS = Math.max(1, Number(process.env.DIGEST_BENCH_REPEATS ?? 1));
const CPU_PROF_DIR = process.env.DIGEST_BENCH_CPU_PROF;
const BATCH = 100;
// The V8 heap flags `npm run digest` runs the job with (package.json), so the bench measures what
// the operator runs; DIGEST_BENCH_NODE_FLAGS replaces them to compare settings.
const digestNodeFlags = (tree: Tree) =>
  (process.env.DIGEST_BENCH_NODE_FLAGS ?? (JSON.parse(readFileSync(tree.path('package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.digest!.match(/--max-[\w-]+=\d+/g)!.join(' '))
    .split(' ')
    .filter(Boolean);
const SAMPLE_MS = 50;
// What `npm run digest` runs: the compiled CLI (built first when stale). DIGEST_BENCH_SOURCE=1 runs
// the TypeScript sources through tsx instead (e.g. to compare with a checkout that has no build).
const FROM_SOURCE = Boolean(process.env.DIGEST_BENCH_SOURCE);
const JOB = FROM_SOURCE ? ['--import', 'tsx', 'bin/digest.ts'] : ['dist/bin/digest.js'];

// The job's own high-water mark, written as it exits (stderr is a pipe: synchronous on Linux):
// VmHWM of its memory map, not resourceUsage().maxRSS, which on Linux carries the RSS of the
// process that spawned it (this bench, 170–220 MB) over the fork and exec.
const REPORT_MAX_RSS = `data:text/javascript,import{readFileSync}from'node:fs';process.on('exit',()=>{const u=process.resourceUsage();const hwm=/VmHWM:\\s+(\\d+)/.exec(readFileSync('/proc/self/status','utf8'))[1];process.stderr.write('\\nmaxRSS '+hwm+' cpu '+(u.userCPUTime+u.systemCPUTime)+'\\n')})`;

interface JobRun {
  n: number;
  report: DigestReport;
  wallMs: number;
  /** kB, the job's VmHWM (/proc/self/status) as it exits. */
  maxRssKb: number;
  /** kB, VmHWM from /proc as last sampled (a cross-check; it misses the last few ms). */
  sampledHwmKb: number;
  /** CPU time (user + system) of the job process, start-up included, and of the stand-in provider (the bench process) while the job ran, µs. */
  jobCpuUs: number;
  providerCpuUs: number;
  /** CPU time of the PostgreSQL server while the job ran, µs. */
  postgresCpuUs: number;
  requests: number;
  rateLimited: number;
  /** Database transactions (one per statement) while the job ran, start-up and migrations included. */
  transactions: number;
  /** Between consecutive provider requests: median and 90th percentile, ms. */
  gapMs: { p50: number; p90: number };
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function procStatusKb(pid: number, field: string): Promise<number | null> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

const CLOCK_TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** /proc/PID/stat's fields after the command name (index 0 is field 3, the state), or null. */
async function procStat(pid: number | string): Promise<string[] | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/**
 * CPU time of the PostgreSQL server, µs: the postmaster's own and its exited children's (a backend
 * that served the job and ended is counted there), plus every child still running.
 */
async function postgresCpuUs(postmaster: number): Promise<number> {
  const own = await procStat(postmaster);
  if (!own) return 0;
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const child = await procStat(entry);
    if (child && Number(child[1]) === postmaster) ticks += Number(child[11]) + Number(child[12]);
  }
  return (ticks * 1_000_000) / CLOCK_TICKS_PER_SECOND;
}

function runJob(tree: Tree, env: Record<string, string>, recap: string, label: string): Promise<{ report: DigestReport; wallMs: number; maxRssKb: number; sampledHwmKb: number; jobCpuUs: number; providerCpuUs: number }> {
  const profile = CPU_PROF_DIR ? ['--cpu-prof', '--cpu-prof-dir', CPU_PROF_DIR, '--cpu-prof-name', `digest-${label}.cpuprofile`] : [];
  const started = performance.now();
  const providerCpu = process.cpuUsage();
  const child = spawn(process.execPath, [...profile, ...digestNodeFlags(tree), '--import', REPORT_MAX_RSS, ...JOB, '--json', '--recap', recap], {
    cwd: tree.root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let sampledHwmKb = 0;
  const sampler = setInterval(() => {
    void procStatusKb(child.pid!, 'VmHWM').then((kb) => {
      if (kb !== null) sampledHwmKb = Math.max(sampledHwmKb, kb);
    });
  }, SAMPLE_MS);
  return new Promise((resolve, reject) => {
    child.on('close', (code) => {
      clearInterval(sampler);
      const wallMs = performance.now() - started;
      const provider = process.cpuUsage(providerCpu);
      const maxRss = /maxRSS (\d+) cpu (\d+)/.exec(stderr);
      if (code !== 0 || !maxRss) return reject(new Error(`digest exited with ${code}:\n${stderr.slice(-3000)}\n${stdout}`));
      resolve({ report: JSON.parse(stdout) as DigestReport, wallMs, maxRssKb: Number(maxRss[1]), sampledHwmKb, jobCpuUs: Number(maxRss[2]), providerCpuUs: provider.user + provider.system });
    });
  });
}

/** One tree's side of the run: its PostgreSQL (migrated by the tree's own store) and the job's environment. */
interface Lane {
  tree: Tree;
  postgres: OwnPostgres;
  sql: pg.Client;
  /** The PostgreSQL server's main process, whose CPU time (and its children's) is counted. */
  postmaster: number;
  env: Record<string, string>;
}

async function openLane(tree: Tree, providerUrl: string): Promise<Lane> {
  const postgres = await startOwnPostgres();
  const { openPostgresStore } = (await tree.load('server/store/postgres.ts')) as { openPostgresStore: typeof OpenPostgresStore };
  const store = await openPostgresStore(postgres.url, { max: 2 });
  await store.close();
  const sql = new pg.Client({ connectionString: postgres.url });
  await sql.connect();
  // The server's main process: the parent of this connection's backend.
  const backend = (await sql.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  const postmaster = Number((await procStat(backend))![1]);
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    NODE_ENV: 'test',
    DATABASE_URL: postgres.url,
    RESEND_API_KEY: 're_bench_digest',
    RESEND_BASE_URL: providerUrl,
    MAIL_FROM: 'Launched Weekly <digest@launchedweekly.test>',
    UNSUBSCRIBE_SECRET: 'bench-digest-secret-0123456789abcdef0123456789',
    SITE_URL: 'https://launchedweekly.test',
    DIGEST_TZ: 'UTC',
  };
  return { tree, postgres, sql, postmaster, env };
}

// Every statement the job runs is its own transaction (autocommit; a batch is settled by one
// function call), so committed + rolled-back transactions of the database count its queries,
// migrations and lease renewals included.
async function countTransactions({ sql }: Lane): Promise<number> {
  await sql.query('select pg_stat_clear_snapshot()');
  const row = (await sql.query<{ n: string }>('select (xact_commit + xact_rollback)::text as n from pg_stat_database where datname = current_database()')).rows[0]!;
  return Number(row.n);
}

/** One job run of n subscribers on one lane, the provider's view of it checked against the job's report. */
async function runAtSize(lane: Lane, fake: FakeResend, recap: string, n: number, label: string): Promise<JobRun> {
  const { sql, postmaster } = lane;
  await sql.query('truncate public.email_signups, public.digest_deliveries, public.digest_locks, public.digest_batches, public.digest_ticks, public.digest_runs, public.digest_contents');
  await sql.query(
    `insert into public.email_signups (email, source)
     select format('reader%s@example.com', g), '/' from generate_series(1, $1::int) g`,
    [n],
  );
  await sql.query('vacuum analyze public.email_signups');
  const before = fake.requests.length;
  const rateLimitedBefore = fake.enforcedRateLimits();
  console.error(`${label}: ${n.toLocaleString('en-US')} subscribers, recap ${recap}`);
  const transactionsBefore = await countTransactions(lane);
  const postgresBefore = await postgresCpuUs(postmaster);
  const job = await runJob(lane.tree, lane.env, recap, label);
  // The job's backends flush their statistics as they exit; give the collector a moment.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  // After the pause: the job's backends have ended and been counted in the postmaster's total.
  const postgresCpu = (await postgresCpuUs(postmaster)) - postgresBefore;
  // Minus this function's own two statements (each one transaction).
  const jobTransactions = (await countTransactions(lane)) - transactionsBefore - 2;
  const delivered = fake.forRecap(recap).length;
  const ledger = (await sql.query<{ n: number }>('select count(*)::int as n from public.digest_deliveries where recap_date = $1', [recap])).rows[0]!.n;
  if (job.report.outcome !== 'sent' || job.report.sent !== n || delivered !== n || ledger !== n) {
    throw new Error(`${label}: expected ${n} sent, delivered and recorded; report ${JSON.stringify(job.report)}, provider ${delivered}, ledger ${ledger}`);
  }
  const times = fake.requests.slice(before).map((r) => r.at);
  const gaps = times.slice(1).map((at, i) => at - times[i]!);
  const result = {
    n,
    ...job,
    transactions: jobTransactions,
    postgresCpuUs: postgresCpu,
    requests: times.length,
    rateLimited: fake.enforcedRateLimits() - rateLimitedBefore,
    gapMs: { p50: percentile(gaps, 50), p90: percentile(gaps, 90) },
  };
  console.error(
    `  job CPU ${(job.jobCpuUs / n).toFixed(1)} µs/recipient, provider CPU ${(job.providerCpuUs / n).toFixed(1)} µs/recipient, PostgreSQL CPU ${(postgresCpu / n).toFixed(1)} µs/recipient, ${(jobTransactions / n).toFixed(4)} queries/recipient (${jobTransactions} transactions), ${(n / (job.report.durationMs / 1000)).toFixed(0)} recipients/s, job ${(job.report.durationMs / 1000).toFixed(1)} s, wall ${(job.wallMs / 1000).toFixed(1)} s, maxRSS ${(job.maxRssKb / 1024).toFixed(0)} MB, ${result.requests} requests (${result.rateLimited} answered 429), gap between requests p50 ${result.gapMs.p50} ms, p90 ${result.gapMs.p90} ms`,
  );
  return result;
}

export async function runDigestBench(before?: Tree): Promise<void> {
  const after = currentTree();
  if (!FROM_SOURCE) execFileSync(process.execPath, ['scripts/ensure-build.ts'], { cwd: after.root, stdio: 'inherit' });
  const loadBefore = loadavg().map((l) => l.toFixed(1)).join(' ');
  const lanes: Lane[] = [];
  let fake: FakeResend | null = null;
  try {
    fake = await startFakeResend();
    fake.keepBodies = false;
    for (const tree of before ? [before, after] : [after]) lanes.push(await openLane(tree, fake.url));
    // A week per run, so each run's messages are told apart at the provider.
    const weeks = recaps.map((r) => r.date);
    let nextWeek = 0;

    const run = (lane: Lane, n: number, label: string) => runAtSize(lane, fake!, weeks[nextWeek++ % weeks.length]!, n, label);

    // Each size REPEATS times; its row is the run with the median time, and every run is listed.
    // With a before tree, its run and this tree's alternate; each lane has its own results.
    const sides = lanes.map(() => ({ free: [] as JobRun[], allRuns: new Map<number, JobRun[]>(), limited: [] as JobRun[] }));
    const prefix = (lane: Lane) => (lane.tree.label === 'before' ? 'before-' : '');
    fake.requestsPerSecond = null;
    for (const n of SIZES) {
      const runs: JobRun[][] = lanes.map(() => []);
      for (let r = 1; r <= REPEATS; r++) {
        for (const [i, lane] of lanes.entries()) runs[i]!.push(await run(lane, n, `${prefix(lane)}unconstrained-${n}-${r}`));
      }
      sides.forEach((side, i) => {
        side.allRuns.set(n, runs[i]!);
        side.free.push([...runs[i]!].sort((a, b) => a.report.durationMs - b.report.durationMs)[Math.floor((runs[i]!.length - 1) / 2)]!);
      });
    }

    fake.requestsPerSecond = RATE;
    for (const n of RATE_SIZES) {
      for (const [i, lane] of lanes.entries()) sides[i]!.limited.push(await run(lane, n, `${prefix(lane)}rate${RATE}-${n}`));
    }
    fake.requestsPerSecond = null;
    const { free, limited } = sides.at(-1)!;

    const mb = (kb: number) => (kb / 1024).toFixed(0);
    const rate = (r: JobRun) => r.n / (r.report.durationMs / 1000);
    const floor = (n: number) => n / (BATCH * RATE);
    // A row per size, and with a before tree a row per tree and size, the before tree's first.
    const treeCell = (i: number) => (before ? (lanes[i]!.tree.label === 'before' ? `| before (${before.ref}) ` : '| after ') : '');
    const perTree = <T,>(rows: (side: (typeof sides)[number]) => T[]) => sides.map(rows).flatMap((rowsOfTree, i) => rowsOfTree.map((row, at) => ({ row, at, i }))).sort((a, b) => a.at - b.at || a.i - b.i);
    const freeRows = perTree((side) => side.free.map((r) => ({ r, allRuns: side.allRuns }))).map(
      ({ row: { r, allRuns }, i }) =>
        `${treeCell(i)}| ${r.n.toLocaleString('en-US')} | ${(r.report.durationMs / 1000).toFixed(1)} | ${(r.wallMs / 1000).toFixed(1)} | **${rate(r).toFixed(0)}** | **${(r.transactions / r.n).toFixed(4)}** (${r.transactions}) | **${mb(r.maxRssKb)}** | ${mb(r.sampledHwmKb)} | ${(r.jobCpuUs / r.n).toFixed(0)} / ${(r.providerCpuUs / r.n).toFixed(0)} / ${(r.postgresCpuUs / r.n).toFixed(0)} | ${r.requests} | ${r.gapMs.p50} / ${r.gapMs.p90} | ${allRuns
          .get(r.n)!
          .map((x) => `${rate(x).toFixed(0)}/s ${mb(x.maxRssKb)} MB`)
          .join('; ')} |`,
    );
    const limitedRows = perTree((side) => side.limited).map(
      ({ row: r, i }) =>
        `${treeCell(i)}| ${r.n.toLocaleString('en-US')} | ${floor(r.n).toFixed(0)} | ${(r.report.durationMs / 1000).toFixed(1)} | **${(r.report.durationMs / 1000 / floor(r.n)).toFixed(3)}×** | ${(r.wallMs / 1000).toFixed(1)} (${(r.wallMs / 1000 / floor(r.n)).toFixed(3)}×) | ${rate(r).toFixed(0)} | ${r.requests} | ${r.rateLimited} | ${r.gapMs.p50} / ${r.gapMs.p90} | ${mb(r.maxRssKb)} |`,
    );
    const goals: Goal[] = free.flatMap((r) => {
      const at = `at ${r.n.toLocaleString('en-US')} subscribers`;
      return [
        { what: `recipients per second ${at}`, value: Math.round(rate(r)), is: '≥', target: 5000 },
        { what: `queries per recipient ${at}`, value: Number((r.transactions / r.n).toFixed(4)), is: '≤', target: 0.05 },
        { what: `peak RSS ${at}`, value: Math.round(r.maxRssKb / 1024), is: '≤', target: 150, unit: 'MB' },
      ] satisfies Goal[];
    });
    const worstRatio = Math.max(...limited.map((r) => r.report.durationMs / 1000 / floor(r.n)));
    const command = benchCommand(`npm run bench -- digest${process.env.DIGEST_BENCH_SIZES ? ` (DIGEST_BENCH_SIZES=${process.env.DIGEST_BENCH_SIZES})` : ''}${process.env.DIGEST_BENCH_RATE_SIZES ? ` (DIGEST_BENCH_RATE_SIZES=${process.env.DIGEST_BENCH_RATE_SIZES})` : ''}${process.env.DIGEST_BENCH_REPEATS ? ` (DIGEST_BENCH_REPEATS=${REPEATS})` : ''}`, before);
    const comparison = before
      ? `\n\n${comparisonTable(before, [
          ...sides[1]!.free.flatMap((now, s) => {
            const was = sides[0]!.free[s]!;
            const at = `at ${now.n.toLocaleString('en-US')}`;
            return [
              { what: `recipients per second ${at}`, before: rate(was), after: rate(now) },
              { what: `queries per recipient ${at}`, before: was.transactions / was.n, after: now.transactions / now.n, digits: 4 },
              { what: `peak RSS ${at}`, before: was.maxRssKb / 1024, after: now.maxRssKb / 1024, unit: 'MB' },
            ];
          }),
          ...sides[1]!.limited.map((now, s) => ({ what: `ratio to the floor at ${now.n.toLocaleString('en-US')}, ${RATE} requests/s`, before: sides[0]!.limited[s]!.report.durationMs / 1000 / floor(now.n), after: now.report.durationMs / 1000 / floor(now.n), digits: 3 })),
        ])}`
      : '';
    const jobs = lanes.map(({ tree }) => `\`${JOB.join(' ')}\`, V8 flags \`${digestNodeFlags(tree).join(' ')}\`${before ? ` for ${tree.label === 'before' ? `${before.ref}, in its own folder on its own PostgreSQL migrated by its own store` : 'this tree'}` : ''}`).join('; ');
    await (process.env.DIGEST_BENCH_PRINT_ONLY ? async (_title: string, _command: string, body: string) => console.log(body) : recordResults)(
      'Weekly digest: throughput, memory and pacing',
      command,
      `\`npm run digest -- --json --recap WEEK\` as a child process (${jobs}${process.env.DIGEST_BENCH_NODE_FLAGS ? ', set by DIGEST_BENCH_NODE_FLAGS' : ', as the digest script sets them'}${before ? '; the two trees\' runs alternating' : ''}) on a PostgreSQL 15 of the bench's own (fsync off, loopback), against tests/support/fake-resend.ts in the bench process, not the job's (Resend's batch API: 100 messages per request, idempotency keys, permissive validation; templates created, published and checked; message bodies parsed, not kept; while a job runs, the bench process does nothing else but sample the job's /proc every ${SAMPLE_MS} ms). The job sends through a Resend template: the e-mail is registered once per recap and each message carries only its link token. Subscribers inserted with one \`insert … select generate_series\`. "job s" is the run's own durationMs (from choosing the recap and rendering the template once to the last ledger row); "wall s" adds the process start-up (Node, loading modules, opening the database). Peak RSS is the job's VmHWM (/proc/self/status) read as it exits, in MiB; "sampled" is the same figure polled every ${SAMPLE_MS} ms from outside. Not \`process.resourceUsage().maxRSS\`: on Linux it carries the RSS of the process that spawned the job (this bench, 170–220 MB) over the fork and exec, which inflated the peak RSS of earlier runs of this bench. CPU per recipient (less sensitive to other load than the rate): the job process's user + system time at exit, start-up included, the bench process's (the stand-in provider's) while the job ran, and the PostgreSQL server's (its processes' /proc/PID/stat, ended backends included) while the job ran. Their sum over the machine's 2 cores bounds the rate a quiet machine can reach.${comparison}

(a) Unconstrained, each size run ${REPEATS} times; a row is the run with the median time ("every run" lists them all). Goals: ≥ 5,000 recipients/s, ≤ 0.05 database queries per recipient, peak RSS ≤ 150 MB, at 100,000 and at 1,000,000. Queries are the database's committed and rolled-back transactions (pg_stat_database) while the job ran: every statement of the job is its own transaction, so this counts them all, start-up, migrations check, run history and lease renewals included.

|${before ? ' tree |' : ''} subscribers | job s | wall s | recipients/s | queries / recipient (total) | peak RSS MB | sampled MB | CPU µs / recipient: job / provider / PostgreSQL | requests | gap p50 / p90 ms | every run |
|${before ? '---|' : ''}---|---|---|---|---|---|---|---|---|---|---|
${freeRows.join('\n')}

${goalLines(goals)}

(b) The provider advertising and enforcing ${RATE} requests per second (ratelimit-limit/-remaining/-reset on every answer, 429 with retry-after past it): floor N / (100 · ${RATE}) s. Goal ≤ 1.1×.

|${before ? ' tree |' : ''} subscribers | floor s | job s | ratio | wall s (ratio) | recipients/s | requests | answered 429 | gap p50 / p90 ms | peak RSS MB |
|${before ? '---|' : ''}---|---|---|---|---|---|---|---|---|---|
${limitedRows.join('\n')}

${goalLines([{ what: 'worst ratio to the floor', value: Number(worstRatio.toFixed(3)), is: '≤', target: 1.1 }])} The ratio is the job's own time; the wall time adds the process start-up. The gap is between consecutive requests as the provider saw them: the pacing spaces calls ${(1000 / RATE).toFixed(0)} ms apart (the window over the limit) and, once an answer says the window's allowance is spent, waits until one window after the answer that opened it.

Load average when the run began and ended: ${loadBefore} → ${loadavg().map((l) => l.toFixed(1)).join(' ')} (other work on the machine shares its 2 cores with the job, the stand-in provider and PostgreSQL).`,
    );
  } finally {
    await fake?.close();
    for (const { sql, postgres } of lanes) {
      await sql.end();
      await postgres.destroy();
    }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runDigestBench();
