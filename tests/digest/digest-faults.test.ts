// The Monday e-mail under faults drawn at random, on a real PostgreSQL: each round sends another
// recap week to a few hundred subscribers while the local Resend stand-in throws 429 storms,
// 5xx bursts and hung connections at it, `npm run digest` children are SIGKILLed (when the
// provider has accepted a random batch but before its answer, or at a random moment), and two
// senders (CLI processes, schedulers, or one of each) start at once. Runs are repeated until
// the ledger is complete; then every active subscriber must hold exactly one message at the
// provider, nobody inactive any, the ledger one row each naming the provider's message, and the
// runs' reports must add up to what the provider recorded. Last, a provider enforcing Resend's
// default of 2 requests per second must never have to refuse one, and `--timeout` (which keeps a
// hung request from costing the default 30 s here) refuses values it cannot use.
//
// The seed is printed; DIGEST_FAULT_SEED=<seed> replays the same draws.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clockReading } from '../support/clocks.ts';
import { recaps } from '../../content/index.ts';
import { startDigestScheduler } from '../../jobs/digest/scheduler.ts';
import type { DigestReport } from '../../server/mail/digest/run.ts';
import { createLogger } from '../../server/http/logger.ts';
import { ResendMailer } from '../../server/mail/resend.ts';
import { openPostgresStore } from '../../server/store/postgres.ts';
import type { Store } from '../../server/store/types.ts';
import { startFakeResend, type FakeMessage, type FakeRequest, type FakeResend } from '../support/fake-resend.ts';
import { createTestDatabase, postgresUrl, type TestDatabase, insertReaders } from '../support/postgres.ts';
import { startDigestCli, type CliResult, type CliRun } from '../support/cli.ts';
import { seededRandom } from '../support/seeded-random.ts';

const SECRET = 'digest-faults-secret-0123456789abcdef0123456789';
const FROM = 'Launched Weekly <digest@launchedweekly.test>';
const SITE_URL = 'https://launchedweekly.test';
const SUBSCRIBERS = 320;
const LEFT_AT_START = 16;
const ROUNDS = 6;
/** The mailer's request timeout in these runs (`--timeout`): a hung request costs this, not 30 s. */
const TIMEOUT_SECONDS = 1.5;
const MAX_ATTEMPTS = 8;
const CLI_APP_NAME = 'digest-faults-cli';

const seed = Number(process.env.DIGEST_FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31));


type Kill = { kind: 'batch'; batch: number } | { kind: 'time'; ms: number };
type Sender = 'cli' | 'scheduler';
const PAIRS: readonly Sender[][] = [['cli', 'cli'], ['scheduler', 'scheduler'], ['cli', 'scheduler']];

interface RoundPlan {
  round: number;
  recap: string;
  /** Subscribers who leave just before the round. */
  leave: number;
  storm: { count: number; afterBatches: number } | null;
  serverErrors: { count: number; afterBatches: number } | null;
  hang: { count: number; afterBatches: number; afterAccept: boolean } | null;
  /** One CLI run per kill, each killed as it says, before anything else. */
  kills: Kill[];
  /** Then two senders started at the same moment (null: one CLI), then single CLI runs until done. */
  together: Sender[] | null;
}

function planRounds(): RoundPlan[] {
  const draw = seededRandom(seed);
  // Recap weeks no other round uses; the scheduler needs the week after to be later than the day after.
  const weeks = [...recaps].map((r) => r.date).sort().slice(0, ROUNDS);
  const plans: RoundPlan[] = weeks.map((recap, index) => {
    const kills: Kill[] = [];
    if (draw.chance(0.6)) kills.push({ kind: 'batch', batch: draw.int(1, 3) });
    if (draw.chance(0.5)) kills.push({ kind: 'time', ms: draw.int(0, 700) });
    if (kills.length === 2 && draw.chance(0.5)) kills.reverse();
    return {
      round: index + 1,
      recap,
      leave: draw.int(0, 6),
      storm: draw.chance(0.5) ? { count: draw.int(1, 2), afterBatches: draw.int(0, 2) } : null,
      serverErrors: draw.chance(0.5) ? { count: draw.int(1, 2), afterBatches: draw.int(0, 2) } : null,
      hang: draw.chance(0.5) ? { count: 1, afterBatches: draw.int(0, 2), afterAccept: draw.chance(0.5) } : null,
      kills,
      together: draw.chance(0.5) ? PAIRS[draw.int(0, PAIRS.length - 1)]! : null,
    };
  });
  // Whatever the seed, every kind of fault and start is in some round.
  const some = (test: (p: RoundPlan) => boolean) => plans.some(test);
  const pick = () => plans[draw.int(0, plans.length - 1)]!;
  if (!some((p) => p.storm !== null)) pick().storm = { count: draw.int(1, 2), afterBatches: draw.int(0, 2) };
  if (!some((p) => p.serverErrors !== null)) pick().serverErrors = { count: draw.int(1, 2), afterBatches: draw.int(0, 2) };
  if (!some((p) => p.hang?.afterAccept === true)) pick().hang = { count: 1, afterBatches: draw.int(0, 2), afterAccept: true };
  if (!some((p) => p.hang?.afterAccept === false)) pick().hang = { count: 1, afterBatches: draw.int(0, 2), afterAccept: false };
  if (!some((p) => p.kills.some((k) => k.kind === 'batch'))) pick().kills.unshift({ kind: 'batch', batch: draw.int(1, 3) });
  if (!some((p) => p.kills.some((k) => k.kind === 'time'))) pick().kills.push({ kind: 'time', ms: draw.int(0, 700) });
  for (const pair of PAIRS) {
    if (!some((p) => p.together === pair)) {
      const free = plans.filter((p) => p.together === null);
      (free.length > 0 ? free[draw.int(0, free.length - 1)]! : pick()).together = pair;
    }
  }
  return plans;
}

const plans = planRounds();

function describePlan(plan: RoundPlan): string {
  const faults = [
    plan.storm && `429 storm ×${plan.storm.count} (retry-after 1 s) after ${plan.storm.afterBatches} batches`,
    plan.serverErrors && `5xx burst ×${plan.serverErrors.count} after ${plan.serverErrors.afterBatches} batches`,
    plan.hang && `${plan.hang.count} hung (${plan.hang.afterAccept ? 'after' : 'before'} accepting) after ${plan.hang.afterBatches} batches`,
    ...plan.kills.map((k, i) => `SIGKILL of run ${i + 1} ${k.kind === 'batch' ? `at its accepted batch ${k.batch}` : `${k.ms} ms after its first request`}`),
    plan.together && `then ${plan.together.join(' + ')} at once`,
  ].filter(Boolean);
  return faults.length > 0 ? faults.join('; ') : 'none';
}

let db: TestDatabase;
let schedulerStores: Store[] = [];
let sql: pg.Client;
let fake: FakeResend;
const summaries: string[] = [];

function startCli(recap: string, timeout = String(TIMEOUT_SECONDS)): CliRun {
  return startDigestCli(['--json', '--recap', recap, '--timeout', timeout], {
    DATABASE_URL: db.url,
    RESEND_API_KEY: 're_test_digest_faults',
    RESEND_BASE_URL: fake.url,
    MAIL_FROM: FROM,
    UNSUBSCRIBE_SECRET: SECRET,
    SITE_URL,
    DIGEST_TZ: 'UTC',
    // node-postgres names its connections after this, so the test can tell the CLI's apart.
    PGAPPNAME: CLI_APP_NAME,
  });
}

/** Each scheduler run's tick is an instant of its own: what is tried here is the sending lease and the batches, not the tick's claim. */
let schedulerTicks = 0;

/** A scheduler as a second replica would run it: its own pool, its own mailer, its clock on the day after the recap. */
function runScheduler(recap: string, index: number): Promise<DigestReport | null> {
  const tick = Date.parse(`${recap}T09:00:00Z`) + 86_400_000 + ++schedulerTicks;
  const scheduler = startDigestScheduler({
    // Feb 29 at midnight: never fires by itself while a round runs; runNow() is the tick.
    cron: '0 0 29 2 *',
    timezone: 'UTC',
    freshnessDays: 7,
    store: schedulerStores[index % schedulerStores.length]!,
    mailer: new ResendMailer({ apiKey: 're_test_digest_faults', baseUrl: fake.url, from: FROM, policy: { requestTimeoutMs: TIMEOUT_SECONDS * 1000 } }),
    recaps,
    siteUrl: SITE_URL,
    unsubscribeSecret: SECRET,
    logger: createLogger({ level: 'silent', pretty: false }),
    clock: clockReading(() => new Date(tick)),
  });
  return scheduler.runNow().finally(() => scheduler.stop());
}

const ledgerCount = async (recap: string) =>
  (await sql.query<{ n: number }>('select count(*)::int as n from public.digest_deliveries where recap_date = $1', [recap])).rows[0]!.n;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A killed run's lease would block the rerun for a minute; end it as its expiry would. */
const expireLeases = () => sql.query(`update public.digest_locks set locked_until = now() - interval '1 second'`);

/**
 * A statement the killed process sent just before it died still runs to its end on the server
 * (a ledger insert, a lease renewal). A server process reads everything its client sent before
 * it sees the connection closed, so once the CLI's server processes are gone, so are those
 * statements: they are counted with the killed run and cannot renew a lease after it expired.
 */
async function settleAfterKill(): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const left = (
      await sql.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = $1', [CLI_APP_NAME])
    ).rows[0]!.n;
    if (left === 0) return;
    if (Date.now() > deadline) throw new Error(`${left} connections of killed digest runs are still open`);
    await pause(20);
  }
}

interface AttemptResult {
  /** Reports of runs that finished (CLI JSON or the scheduler's report). */
  reports: { sender: Sender; report: DigestReport; exitCode: number | null }[];
  killed: number;
  ledgerDelta: number;
  ms: number;
}

interface RoundSubscriber {
  id: string;
  email: string;
  active: boolean;
}

/** Those the plan has leave just before the round, then everyone as the round starts. */
async function subscribersAtRoundStart(plan: RoundPlan): Promise<{ everyone: RoundSubscriber[]; active: RoundSubscriber[]; inactive: RoundSubscriber[] }> {
  if (plan.leave > 0) {
    await sql.query(
      `update public.email_signups set unsubscribed_at = now(), unsubscribe_reason = 'unsubscribed'
       where id in (select id from public.email_signups where unsubscribed_at is null order by md5(email || $2) limit $1)`,
      [plan.leave, String(seed + plan.round)],
    );
  }
  const everyone = (await sql.query<RoundSubscriber>('select id::text as id, email, unsubscribed_at is null as active from public.email_signups')).rows;
  return { everyone, active: everyone.filter((s) => s.active), inactive: everyone.filter((s) => !s.active) };
}

/**
 * The round's faults, each armed once the round's provider has accepted so many batches (0: at
 * once). Call the result whenever batches may have been accepted: it arms those now due.
 */
function faultArming(plan: RoundPlan): () => void {
  const roundStart = fake.acceptedBatches;
  const pending = [
    plan.storm && { after: plan.storm.afterBatches, arm: () => ((fake.stormRetryAfterSeconds = 1), (fake.rateLimitStorm = plan.storm!.count)) },
    plan.serverErrors && { after: plan.serverErrors.afterBatches, arm: () => (fake.serverErrors = plan.serverErrors!.count) },
    plan.hang && { after: plan.hang.afterBatches, arm: () => ((fake.hangAfterAccept = plan.hang!.afterAccept), (fake.hang = plan.hang!.count)) },
  ].filter((f): f is { after: number; arm: () => number } => Boolean(f));
  return () => {
    for (const fault of [...pending]) {
      if (fake.acceptedBatches - roundStart >= fault.after) {
        fault.arm();
        pending.splice(pending.indexOf(fault), 1);
      }
    }
  };
}

/** Faults the round ended before reaching must not leak into the next one. */
function disarmFaults(): void {
  fake.rateLimitStorm = 0;
  fake.serverErrors = 0;
  fake.hang = 0;
}

type SenderOutcome = { sender: Sender; report: DigestReport | null; exitCode: null } | { sender: Sender; result: CliResult };

/** Starts the attempt's senders at once, kills their CLI runs when `kill` says, and waits for all of them. */
async function runSenders(recap: string, senders: Sender[], kill: Kill | undefined, armDue: () => void): Promise<SenderOutcome[]> {
  const acceptedBefore = fake.acceptedBatches;
  const requestsBefore = fake.requests.length;
  const clis: CliRun[] = [];
  let killed = false;
  const killAll = async () => {
    killed = true;
    for (const cli of clis) cli.child.kill('SIGKILL');
    await Promise.all(clis.map((cli) => cli.done));
  };
  fake.onBatchAccepted = async (accepted) => {
    armDue();
    // The worst moment: the provider holds the batch, its answer has not left, nothing is recorded.
    if (kill?.kind === 'batch' && !killed && accepted - acceptedBefore === kill.batch) await killAll();
  };
  const runs = senders.map((sender, index): Promise<SenderOutcome> => {
    if (sender === 'scheduler') return runScheduler(recap, index).then((report) => ({ sender, report, exitCode: null }));
    const cli = startCli(recap);
    clis.push(cli);
    return cli.done.then((result) => ({ sender, result }));
  });
  let timer: Promise<void> | null = null;
  if (kill?.kind === 'time') {
    timer = (async () => {
      const deadline = Date.now() + 30_000;
      while (fake.requests.length === requestsBefore && Date.now() < deadline && clis.some((c) => c.child.exitCode === null)) await pause(5);
      await pause(kill.ms);
      if (clis.some((c) => c.child.exitCode === null && c.child.signalCode === null)) await killAll();
    })();
  }
  const settled = await Promise.all(runs);
  await timer;
  fake.onBatchAccepted = null;
  return settled;
}

/** The reports of the runs that finished, checked as they come in, and how many runs were killed. */
function reportsOf(settled: SenderOutcome[], recap: string): { reports: AttemptResult['reports']; killedRuns: number } {
  const reports: AttemptResult['reports'] = [];
  let killedRuns = 0;
  for (const run of settled) {
    if ('report' in run) {
      expect(run.report, 'the scheduler run threw').not.toBeNull();
      expect(run.report!.recap?.date, 'the scheduler picked the round’s recap').toBe(recap);
      reports.push({ sender: 'scheduler', report: run.report!, exitCode: null });
    } else if (run.result.signal === 'SIGKILL') {
      killedRuns++;
    } else {
      expect(run.result.signal, run.result.stderr).toBeNull();
      reports.push({ sender: 'cli', report: JSON.parse(run.result.stdout) as DigestReport, exitCode: run.result.code });
    }
  }
  return { reports, killedRuns };
}

/** One attempt of the round: its senders (killed if the plan says so), then what they recorded checked against what they reported. */
async function runAttempt(plan: RoundPlan, attempt: number, armDue: () => void): Promise<AttemptResult> {
  const { recap } = plan;
  const kill = plan.kills[attempt];
  const senders: Sender[] = !kill && attempt === plan.kills.length && plan.together ? plan.together : ['cli'];
  const attemptStarted = Date.now();
  const ledgerBefore = await ledgerCount(recap);
  const { reports, killedRuns } = reportsOf(await runSenders(recap, senders, kill, armDue), recap);
  if (killedRuns > 0) await settleAfterKill();
  const ledgerDelta = (await ledgerCount(recap)) - ledgerBefore;
  const sentReported = reports.reduce((sum, r) => sum + r.report.sent, 0);
  // Completed runs recorded exactly what they say they sent; a killed run's rows are on top.
  if (killedRuns === 0) expect(ledgerDelta).toBe(sentReported);
  else expect(ledgerDelta).toBeGreaterThanOrEqual(sentReported);
  // Nothing recorded in this attempt that the provider did not accept in this or an earlier attempt.
  expect(await ledgerCount(recap)).toBeLessThanOrEqual(fake.forRecap(recap).length);
  for (const { report, exitCode, sender } of reports) {
    expect(['sent', 'already-sent', 'locked', 'stopped'], JSON.stringify(report)).toContain(report.outcome);
    if (sender === 'cli') expect(exitCode, report.message).toBe(report.outcome === 'stopped' || report.failed.length > 0 ? 1 : 0);
    expect(report.skippedUnsubscribed).toBe(0);
  }
  return { reports, killed: killedRuns, ledgerDelta, ms: Date.now() - attemptStarted };
}

/** Attempts until the ledger is complete; every planned attempt runs, even after that (then it must send nothing). */
async function runAttempts(plan: RoundPlan, activeCount: number, armDue: () => void): Promise<AttemptResult[]> {
  const attempts: AttemptResult[] = [];
  for (let attempt = 0; ; attempt++) {
    expect(attempt, `round ${plan.round} did not complete in ${MAX_ATTEMPTS} attempts`).toBeLessThan(MAX_ATTEMPTS);
    const result = await runAttempt(plan, attempt, armDue);
    attempts.push(result);
    if (result.killed > 0) await expireLeases();
    armDue();

    const complete = (await ledgerCount(plan.recap)) === activeCount;
    const finished = result.reports.some((r) => r.report.outcome === 'sent' || r.report.outcome === 'already-sent');
    const planned = plan.kills.length + (plan.together ? 1 : 0);
    if (complete && finished && result.killed === 0 && attempt + 1 >= planned) return attempts;
  }
}

/** The provider: every active subscriber exactly once, nobody inactive. Returns the recap's messages. */
function expectProviderServedActiveOnce(recap: string, active: RoundSubscriber[], inactive: RoundSubscriber[]): FakeMessage[] {
  const messages = fake.forRecap(recap);
  const perAddress = new Map<string, number>();
  for (const m of messages) for (const to of m.to) perAddress.set(to, (perAddress.get(to) ?? 0) + 1);
  const duplicates = [...perAddress].filter(([, n]) => n > 1);
  expect(duplicates, 'addresses that received the recap more than once').toEqual([]);
  for (const s of active) expect(perAddress.get(s.email), s.email).toBe(1);
  for (const s of inactive) expect(perAddress.get(s.email), `${s.email} had left`).toBeUndefined();
  expect(messages).toHaveLength(active.length);
  return messages;
}

/** The ledger: one row per active subscriber, each naming the provider's message to that address. */
async function expectLedgerNamesProviderMessages(recap: string, everyone: RoundSubscriber[], active: RoundSubscriber[], messages: FakeMessage[]): Promise<void> {
  const rows = (await sql.query<{ subscriber_id: string; provider_message_id: string | null }>('select subscriber_id, provider_message_id from public.digest_deliveries where recap_date = $1', [recap])).rows;
  expect(rows).toHaveLength(active.length);
  const emailOf = new Map(everyone.map((s) => [s.id, s.email]));
  const messageTo = new Map(messages.map((m) => [m.id, m.to[0]]));
  for (const row of rows) {
    expect(emailOf.get(row.subscriber_id) !== undefined && active.some((s) => s.id === row.subscriber_id), `ledger row for ${row.subscriber_id}`).toBe(true);
    expect(messageTo.get(row.provider_message_id ?? ''), `ledger row ${row.subscriber_id} names the provider’s message`).toBe(emailOf.get(row.subscriber_id));
  }
}

/**
 * The reports: what the finished runs say they sent, plus what killed runs recorded before dying,
 * is what the provider holds; the run that finished the round accounts for everyone.
 */
function expectReportsAddUp(attempts: AttemptResult[], recap: string, messageCount: number, activeCount: number): void {
  const sentByReports = attempts.flatMap((a) => a.reports).reduce((sum, r) => sum + r.report.sent, 0);
  const recordedByKilled = attempts.reduce((sum, a) => sum + a.ledgerDelta - a.reports.reduce((s, r) => s + r.report.sent, 0), 0);
  expect(sentByReports + recordedByKilled).toBe(messageCount);
  const finalReport = attempts.at(-1)!.reports.find((r) => r.report.outcome === 'sent' || r.report.outcome === 'already-sent')!.report;
  expect(finalReport.failed).toEqual([]);
  expect(finalReport.sent + finalReport.skippedAlreadySent).toBe(activeCount);
  expect(finalReport.recap?.date).toBe(recap);
}

/** One line of the round for the summary printed at the end: what was planned, what it took, what the provider saw. */
function roundSummary(
  plan: RoundPlan,
  attempts: AttemptResult[],
  requests: FakeRequest[],
  counts: { messages: number; active: number; inactive: number },
  started: number,
): string {
  const kinds = (kind: string) => requests.filter((r) => r.kind === kind).length;
  return (
    `round ${plan.round} (${plan.recap}): ${describePlan(plan)} → ${attempts.length} attempts, ` +
    `${attempts.reduce((n, a) => n + a.reports.length + a.killed, 0)} runs (${attempts.reduce((n, a) => n + a.killed, 0)} killed, ` +
    `${attempts.flatMap((a) => a.reports).filter((r) => r.report.outcome === 'locked').length} locked out, ` +
    `${attempts.flatMap((a) => a.reports).filter((r) => r.report.outcome === 'stopped').length} stopped); ` +
    `${counts.messages} messages to ${counts.active} active (${counts.inactive} inactive skipped); ` +
    `${requests.length} requests: ${kinds('accepted') + kinds('accepted-then-hung')} accepted, ${kinds('replayed')} replayed, ` +
    `${kinds('storm')} × 429, ${kinds('server-error')} × 500, ${kinds('hung') + kinds('accepted-then-hung')} hung, ${kinds('idempotency-concurrent')} × 409; ` +
    `${((Date.now() - started) / 1000).toFixed(1)} s (attempts: ${attempts.map((a) => (a.ms / 1000).toFixed(1)).join(' + ')} s)`
  );
}

describe.skipIf(!postgresUrl)(`the weekly digest under random faults (seed ${seed})`, () => {
  beforeAll(async () => {
    console.log(`[digest-faults] seed ${seed}: rerun with DIGEST_FAULT_SEED=${seed}`);
    db = await createTestDatabase();
    // Opening the first store applies the migrations.
    schedulerStores = [await openPostgresStore(db.url, { max: 4 }), await openPostgresStore(db.url, { max: 4 })];
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    await insertReaders(sql, SUBSCRIBERS);
    await sql.query(
      `update public.email_signups set unsubscribed_at = now(), unsubscribe_reason = 'unsubscribed'
       where id in (select id from public.email_signups order by md5(email || $2) limit $1)`,
      [LEFT_AT_START, String(seed)],
    );
    fake = await startFakeResend();
    // 320 copies of a 26 KB e-mail per round: the envelopes are what the checks read.
    fake.keepBodies = false;
  });

  afterAll(async () => {
    if (summaries.length > 0) console.log(`[digest-faults] seed ${seed}\n${summaries.join('\n')}`);
    await fake?.close();
    await sql?.end();
    for (const s of schedulerStores) await s.close();
    await db?.drop();
  });

  for (const plan of plans) {
    it(`round ${plan.round}: ${plan.recap} with ${describePlan(plan)}`, async () => {
      const started = Date.now();
      const { recap } = plan;
      const { everyone, active, inactive } = await subscribersAtRoundStart(plan);
      expect(active.length).toBeGreaterThan(250);

      const requestsAtStart = fake.requests.length;
      const armDue = faultArming(plan);
      armDue();
      const attempts = await runAttempts(plan, active.length, armDue);
      disarmFaults();

      const messages = expectProviderServedActiveOnce(recap, active, inactive);
      await expectLedgerNamesProviderMessages(recap, everyone, active, messages);
      expectReportsAddUp(attempts, recap, messages.length, active.length);
      const counts = { messages: messages.length, active: active.length, inactive: inactive.length };
      summaries.push(roundSummary(plan, attempts, fake.requests.slice(requestsAtStart), counts, started));
    }, 90_000);
  }

  it('refuses a --timeout it cannot use before it touches the database or the provider', async () => {
    const recap = [...recaps].map((r) => r.date).sort()[ROUNDS]!;
    const requests = fake.requests.length;
    const result = await startCli(recap, '0').done;
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--timeout 0: must be a number of seconds from 0.1 to 600');
    expect(fake.requests.length).toBe(requests);
    expect(await ledgerCount(recap)).toBe(0);
  }, 30_000);

  it('paces itself to a provider enforcing 2 requests per second (Resend’s default) without one refusal', async () => {
    const recap = [...recaps].map((r) => r.date).sort()[ROUNDS]!;
    const active = (await sql.query<{ n: number }>('select count(*)::int as n from public.email_signups where unsubscribed_at is null')).rows[0]!.n;
    expect(Math.ceil(active / 100)).toBeGreaterThan(2);
    const before = fake.requests.length;
    const refusedBefore = fake.enforcedRateLimits();
    const started = Date.now();
    fake.requestsPerSecond = 2;
    try {
      const report = await runScheduler(recap, 0);
      expect(report).toMatchObject({ outcome: 'sent', sent: active, failed: [] });
    } finally {
      fake.requestsPerSecond = null;
    }
    // Every request was within the allowance: after the second, the gate waited for the window to turn.
    expect(fake.enforcedRateLimits() - refusedBefore).toBe(0);
    const requests = fake.requests.slice(before);
    // The template's registration (look-up, creation, publishing) goes through the same gate.
    expect(requests.every((r) => r.kind === 'accepted' || (r.path.startsWith('/templates') && r.status !== 429))).toBe(true);
    expect(requests.filter((r) => r.kind === 'accepted')).toHaveLength(Math.ceil(active / 100));
    expect(requests[2]!.at - requests[0]!.at).toBeGreaterThanOrEqual(1000);
    expect(fake.forRecap(recap)).toHaveLength(active);
    expect(await ledgerCount(recap)).toBe(active);
    summaries.push(`pacing (${recap}): ${active} messages in ${requests.length} requests at 2 requests/s, 0 refused, ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }, 60_000);
});
