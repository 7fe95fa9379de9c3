// Exactly once, the hard way: 1,000 subscribers on a real PostgreSQL, `npm run digest` as a real
// child process against a local server that answers as Resend does, killed with SIGKILL in the
// worst place (the provider has accepted a batch, its answer has not arrived, nothing is recorded)
// after 1, 3 and 7 batches, then run to completion. Every active subscriber must end with exactly
// one message, the ledger with one row each, and the report must match the provider's record.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { runWeeklyDigest, type DigestReport } from '../../server/mail/digest/run.ts';
import { ResendMailer } from '../../server/mail/resend.ts';
import type { Store } from '../../server/store/types.ts';
import { type FakeResend } from '../support/fake-resend.ts';
import { postgresUrl, type TestDatabase } from '../support/postgres.ts';
import { startDigestCli, type CliRun } from '../support/cli.ts';
import { listActiveSubscribers } from '../support/store-ops.ts';
import { openReadersAndProvider, type ReadersAndProvider } from '../support/digest-readers.ts';

const SECRET = 'exactly-once-secret-0123456789abcdef0123456789';
const SUBSCRIBERS = 1_000;
const LEFT_BEFORE = 50;
const ACTIVE = SUBSCRIBERS - LEFT_BEFORE;
const RECAP = '2025-07-14';

let opened: ReadersAndProvider;
let db: TestDatabase;
let store: Store;
let sql: pg.Client;
let fake: FakeResend;
let leftBefore: string[];

function startCli(args: string[], json = true): CliRun {
  return startDigestCli([...(json ? ['--json'] : []), ...args], {
    DATABASE_URL: db.url,
    RESEND_API_KEY: 're_test_exactly_once',
    RESEND_BASE_URL: fake.url,
    MAIL_FROM: 'Launched Weekly <digest@launchedweekly.test>',
    UNSUBSCRIBE_SECRET: SECRET,
    SITE_URL: 'https://launchedweekly.test',
    DIGEST_TZ: 'UTC',
  });
}

async function runToEnd(args: string[] = []): Promise<DigestReport & { exitCode: number | null }> {
  const result = await startCli(args).done;
  expect(result.signal, result.stderr).toBeNull();
  return { ...(JSON.parse(result.stdout) as DigestReport), exitCode: result.code };
}

/** Runs the CLI and SIGKILLs it when the provider has accepted its `total`-th batch, before the answer. */
async function runAndKillAt(total: number): Promise<void> {
  const run = startCli([]);
  fake.onBatchAccepted = async (accepted) => {
    if (accepted === total) {
      run.child.kill('SIGKILL');
      await run.done;
    }
  };
  const result = await run.done;
  fake.onBatchAccepted = null;
  expect(result.signal, `the run should have been killed at batch ${total}: ${result.stderr}`).toBe('SIGKILL');
}

async function ledger(recap: string): Promise<{ subscriber_id: string; provider_message_id: string | null }[]> {
  return (await sql.query('select subscriber_id, provider_message_id from public.digest_deliveries where recap_date = $1', [recap])).rows;
}

/** The killed run's lease would block reruns for a minute; move its expiry into the past instead of waiting. */
const expireLeases = () => sql.query(`update public.digest_locks set locked_until = now() - interval '1 second'`);

async function activeEmails(): Promise<string[]> {
  return (await listActiveSubscribers(store, null, SUBSCRIBERS)).map((s) => s.email);
}

function expectOncePerActive(recap: string, active: string[], gone: string[]) {
  const counts = new Map<string, number>();
  for (const message of fake.forRecap(recap)) for (const to of message.to) counts.set(to, (counts.get(to) ?? 0) + 1);
  expect(counts.size).toBe(active.length);
  for (const email of active) expect(counts.get(email), email).toBe(1);
  for (const email of gone) expect(counts.get(email), email).toBeUndefined();
}

async function expectLedgerMatchesProvider(recap: string) {
  const rows = await ledger(recap);
  const provider = fake.forRecap(recap);
  expect(rows).toHaveLength(provider.length);
  expect(new Set(rows.map((r) => r.subscriber_id)).size).toBe(rows.length);
  // Every ledger row names a message the provider holds, sent to that subscriber.
  const byId = new Map(provider.map((m) => [m.id, m.to[0]]));
  const emailOf = new Map((await sql.query('select id::text as id, email from public.email_signups')).rows.map((r: { id: string; email: string }) => [r.id, r.email]));
  for (const row of rows) expect(byId.get(row.provider_message_id!)).toBe(emailOf.get(row.subscriber_id));
}

/** A database of SUBSCRIBERS readers, every twentieth of whom left before the week, and the stand-in provider. */
async function openReadersSomeLeft() {
  opened = await openReadersAndProvider(SUBSCRIBERS);
  ({ db, store, sql, fake } = opened);
  const everyone = await listActiveSubscribers(store, null, SUBSCRIBERS);
  leftBefore = everyone.filter((_, i) => i % 20 === 0).map((s) => s.email);
  for (const s of everyone.filter((_, i) => i % 20 === 0)) await store.removeSubscriber(s.id, 'unsubscribed');
}

describe.skipIf(!postgresUrl)('the weekly digest on PostgreSQL with Resend: exactly once', () => {
  beforeAll(openReadersSomeLeft);
  afterAll(() => opened?.close());

  it('survives SIGKILL after 1, 3 and 7 accepted batches: every active subscriber gets exactly one message', async () => {
    expect(leftBefore).toHaveLength(LEFT_BEFORE);

    await runAndKillAt(1);
    // Killed between "accepted" and "recorded": the provider has 100 messages, the ledger none.
    expect(fake.forRecap(RECAP)).toHaveLength(100);
    expect(await ledger(RECAP)).toHaveLength(0);

    // The killed run still holds the lease: a second run right away sends nothing and says why.
    const blocked = await runToEnd();
    expect(blocked).toMatchObject({ outcome: 'locked', sent: 0, exitCode: 0 });
    expect(blocked.message).toContain('another run is sending');
    expect(fake.forRecap(RECAP)).toHaveLength(100);

    await expireLeases();
    await runAndKillAt(3);
    // The rerun repeated batch 1 with the same idempotency key (answered from the provider's
    // cache, not sent again), recorded it and batch 2, and died with batch 3 unrecorded.
    expect(fake.requests.filter((r) => r.kind === 'replayed')).toHaveLength(1);
    expect(fake.forRecap(RECAP)).toHaveLength(300);
    expect(await ledger(RECAP)).toHaveLength(200);

    await expireLeases();
    await runAndKillAt(7);
    expect(fake.forRecap(RECAP)).toHaveLength(700);
    expect(await ledger(RECAP)).toHaveLength(600);

    await expireLeases();
    const final = await runToEnd();
    expect(final).toMatchObject({ outcome: 'sent', failed: [], exitCode: 0, skippedAlreadySent: 600, skippedUnsubscribed: 0 });
    // Batch 7 replayed (recorded now), then 8, 9 and the last 50.
    expect(final.sent).toBe(ACTIVE - 600);
    expect(fake.requests.filter((r) => r.kind === 'replayed')).toHaveLength(3);

    const active = await activeEmails();
    expect(active).toHaveLength(ACTIVE);
    expectOncePerActive(RECAP, active, leftBefore);
    expect(await ledger(RECAP)).toHaveLength(ACTIVE);
    await expectLedgerMatchesProvider(RECAP);
  }, 120_000);

  it('sends nothing on the next run and says why', async () => {
    const before = fake.messages.length;
    const again = await runToEnd();
    expect(again).toMatchObject({ outcome: 'already-sent', sent: 0, skippedAlreadySent: ACTIVE, exitCode: 0 });
    expect(again.message).toContain(`already went to every active subscriber (${ACTIVE})`);
    expect(fake.messages.length).toBe(before);
  }, 60_000);

  it('sends once when two runs start at the same moment, and the reports add up to the provider’s record', async () => {
    const recap = '2025-07-06';
    const [a, b] = await Promise.all([runToEnd(['--recap', recap]), runToEnd(['--recap', recap])]);
    const outcomes = [a.outcome, b.outcome].sort();
    expect(outcomes[1]).toBe('sent');
    expect(['already-sent', 'locked']).toContain(outcomes[0]);
    expect(a.sent + b.sent).toBe(ACTIVE);
    expect(fake.forRecap(recap)).toHaveLength(ACTIVE);
    expectOncePerActive(recap, await activeEmails(), leftBefore);
    await expectLedgerMatchesProvider(recap);
  }, 60_000);

  it('skips subscribers who leave while the run is going, re-checking each batch before it goes out', async () => {
    const recap = '2025-06-30';
    const everyone = await listActiveSubscribers(store, null, SUBSCRIBERS);
    // In the first page of 500, well after the first batch: read before they leave, sent after.
    const leaving = everyone.slice(250, 260);
    const base = fake.acceptedBatches;
    fake.onBatchAccepted = async (accepted) => {
      if (accepted === base + 1) for (const s of leaving) await store.removeSubscriber(s.id, 'unsubscribed');
    };
    const report = await runWeeklyDigest({
      store,
      mailer: new ResendMailer({ apiKey: 're_test_in_process', baseUrl: fake.url, from: 'Launched Weekly <digest@launchedweekly.test>' }),
      recaps,
      now: new Date('2025-07-16T09:00:00Z'),
      siteUrl: 'https://launchedweekly.test',
      unsubscribeSecret: SECRET,
      mode: 'manual',
      recapWeek: recap,
      freshnessDays: 7,
    });
    fake.onBatchAccepted = null;
    expect(report).toMatchObject({ outcome: 'sent', sent: ACTIVE - leaving.length, skippedUnsubscribed: leaving.length, skippedAlreadySent: 0, failed: [] });
    for (const s of leaving) expect(fake.deliveredTo(s.email, recap)).toHaveLength(0);
    expect(fake.forRecap(recap)).toHaveLength(report.sent);
    expectOncePerActive(recap, await activeEmails(), [...leftBefore, ...leaving.map((s) => s.email)]);
    await expectLedgerMatchesProvider(recap);
  }, 60_000);

  it('exits 1 and names the reason when the provider refuses an address; that address is not recorded', async () => {
    const recap = '2025-06-16';
    const active = await activeEmails();
    const refused = active[3]!;
    fake.refusedAddresses.add(refused);
    const result = await startCli(['--recap', recap], false).done;
    fake.refusedAddresses.clear();
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toMatch(new RegExp(`sent:\\s+${active.length - 1}\n`));
    expect(result.stdout).toMatch(/failed:\s+1\n\s+1 × validation_error: Invalid `to` field/);
    expect(result.stdout).toContain('1 message failed');
    expect(fake.deliveredTo(refused, recap)).toHaveLength(0);
    expect(await ledger(recap)).toHaveLength(active.length - 1);
    await expectLedgerMatchesProvider(recap);
  }, 60_000);
});
