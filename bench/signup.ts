// Signups as readers make them: the production server (`node dist/bin/server.js` with npm start's
// flags and allocator settings) on PostgreSQL, every bot defence on, sent new addresses at a steady
// rate by autocannon. Goal: 300 new addresses per second for 60 s, 0 errors, p99 ≤ 100 ms.
// The per-address limit is raised (RATE_LIMIT_PER_MINUTE) so the load counts as legitimate; the
// other defences (per-mailbox limit, cross-site check, honeypot, disposable domains, suppression)
// stay as production runs them: each post is a new address, sent as the site's own page sends it.
//   npm run bench -- signup
// With `--before REF` the REF tree's server (its own build, start flags, migrations) is measured
// the same way first, on a PostgreSQL of its own, then this tree's.
// Knobs: BENCH_SIGNUP_RATE (default 300 a second), BENCH_SIGNUP_SECONDS (default 60),
// BENCH_SIGNUP_MODE=double (SIGNUP_CONFIRMATION=double: each signup answers 202 and queues a
// confirmation e-mail), BENCH_SIGNUP_PRINT_ONLY=1 (print instead of writing to bench/RESULTS.md).
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOwnPostgres } from '../scripts/own-postgres.ts';
import { freePort } from '../scripts/free-port.ts';
import { goalLines } from './support/goals.ts';
import { recordResults } from './support/results.ts';
import { benchCommand, comparisonTable } from './support/compare.ts';
import { currentTree, type Tree } from './support/tree.ts';

const RATE = Number(process.env.BENCH_SIGNUP_RATE ?? 300);
const SECONDS = Number(process.env.BENCH_SIGNUP_SECONDS ?? 60);
const MODE = process.env.BENCH_SIGNUP_MODE === 'double' ? 'double' : 'single';
// Enough connections that a slow answer does not hold the rate back (autocannon's overallRate is
// shared among them).
const CONNECTIONS = 20;
/** High enough that no post of the run is refused by the limit per client address. */
const RAISED_RATE_LIMIT = RATE * 60 * 2;

const serverCommand = (tree: Tree) => `${Object.entries(tree.startEnv).map(([name, value]) => `${name}=${value} `).join('')}node ${tree.startFlags.join(' ')} dist/bin/server.js`;

async function startServer(tree: Tree, databaseUrl: string, dataDir: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [...tree.startFlags, tree.path('dist/bin/server.js')], {
    cwd: tree.root,
    env: {
      PATH: process.env.PATH ?? '',
      ...tree.startEnv,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      SITE_URL: url,
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      DIGEST_CRON: 'off',
      RATE_LIMIT_PER_MINUTE: String(RAISED_RATE_LIMIT),
      SIGNUP_CONFIRMATION: MODE,
      UNSUBSCRIBE_SECRET: 'bench-signup-secret-0123456789abcdef0123456',
      MAIL_FROM: 'Launched Weekly <digest@launchedweekly.com>',
      RESEND_API_KEY: 're_bench_signup',
      // Nothing listens there: a confirmation (double mode) waits in the outbox table, as in an outage.
      RESEND_BASE_URL: 'http://127.0.0.1:9',
      RESEND_WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    },
    // Its request log (one line per signup) is read and dropped, as a log shipper would; the tail is kept for a failed start.
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let tail = '';
  child.stderr!.on('data', (chunk: Buffer) => (tail = (tail + chunk.toString()).slice(-4000)));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}:\n${tail}`);
    const ready = await fetch(`${url}/readyz`).then((response) => response.ok, () => false);
    if (ready) return { url, child };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function signups(url: string): Promise<autocannon.Result> {
  let n = 0;
  return autocannon({
    url,
    connections: CONNECTIONS,
    overallRate: RATE,
    duration: SECONDS,
    requests: [
      {
        method: 'POST',
        path: '/api/subscribe',
        setupRequest: (request) => ({
          ...request,
          // What a browser's fetch from the site's own page sends: the cross-site check reads these.
          headers: { 'content-type': 'application/json', 'sec-fetch-site': 'same-origin', origin: url },
          body: JSON.stringify({ email: `reader.${process.pid}.${n++}@bench.example.com` }),
        }),
      },
    ],
  });
}

/** One tree's server on a PostgreSQL of its own under the signup load. */
async function measure(tree: Tree): Promise<autocannon.Result> {
  const postgres = await startOwnPostgres({ maxConnections: 100 });
  const dataDir = await mkdtemp(join(tmpdir(), 'launched-weekly-bench-signup-'));
  const server = await startServer(tree, postgres.url, dataDir).catch(async (error: unknown) => {
    await postgres.destroy();
    throw error;
  });
  try {
    const result = await signups(server.url);
    console.error(`${tree.label}: ${result.requests.total} signups, ${result.errors} / ${result.timeouts} / ${result.non2xx} errors, p99 ${result.latency.p99} ms`);
    return result;
  } finally {
    const exited = new Promise((resolve) => server.child.once('exit', resolve));
    server.child.kill('SIGTERM');
    await exited;
    await postgres.destroy();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const errorsOf = (result: autocannon.Result) => result.errors + result.timeouts + result.non2xx;

export async function runSignupBench(before?: Tree): Promise<{ errors: number; p99: number }> {
  const loadBefore = loadavg()[0]!;
  const after = currentTree();
  const was = before ? await measure(before) : undefined;
  const result = await measure(after);
  const errors = errorsOf(result);
  const line = (label: string, r: autocannon.Result) =>
    `|${before ? ` ${label} |` : ''} ${r.requests.total} | ${r.requests.average.toFixed(0)} | ${r.errors} / ${r.timeouts} / ${r.non2xx} | ${r.latency.p50} | ${r.latency.p99} | ${r.latency.max} |`;
  const server = before
    ? `\`${serverCommand(after)}\` for this tree and \`${serverCommand(before)}\` for ${before.ref} (that tree's own build and \`npm start\`), one after the other, each on its own database`
    : `\`${serverCommand(after)}\``;
  const body = `The production server (${server}, NODE_ENV=production, SIGNUP_CONFIRMATION=${MODE}) on a private PostgreSQL (fsync off, loopback), every bot defence on, RATE_LIMIT_PER_MINUTE=${RAISED_RATE_LIMIT} so no post counts as abuse. autocannon, ${CONNECTIONS} connections, ${RATE} requests a second overall for ${SECONDS} s; each a new address posted as the site's page posts it (JSON, Sec-Fetch-Site: same-origin, the site's Origin). One-minute load average ${loadBefore.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after.
${
  before && was
    ? `\n${comparisonTable(before, [
        { what: 'signups answered per second', before: was.requests.average, after: result.requests.average },
        { what: 'errors', before: errorsOf(was), after: errors },
        { what: 'p50', before: was.latency.p50, after: result.latency.p50, unit: 'ms' },
        { what: 'p99', before: was.latency.p99, after: result.latency.p99, unit: 'ms' },
      ])}\n`
    : ''
}
|${before ? ' tree |' : ''} signups | answered/s | errors (connection, timeout, non-2xx) | p50 ms | p99 ms | max ms |
|---|${before ? '---|' : ''}---|---|---|---|---|
${[...(before && was ? [line(`before (${before.ref})`, was)] : []), line('after', result)].join('\n')}

${goalLines([
  { what: 'signups answered per second', value: Math.round(result.requests.average), is: '≥', target: RATE },
  { what: 'errors', value: errors, is: '≤', target: 0 },
  { what: 'p99', value: result.latency.p99, is: '≤', target: 100, unit: 'ms' },
])}`;
  if (process.env.BENCH_SIGNUP_PRINT_ONLY) console.log(body);
  else
    await recordResults(
      MODE === 'double' ? 'Signups in double mode on PostgreSQL' : 'Signups on PostgreSQL: 300 new addresses a second',
      benchCommand(`${MODE === 'double' ? 'BENCH_SIGNUP_MODE=double ' : ''}npm run bench -- signup`, before),
      body,
    );
  return { errors, p99: result.latency.p99 };
}

if (import.meta.url === `file://${process.argv[1]}`) await runSignupBench();
