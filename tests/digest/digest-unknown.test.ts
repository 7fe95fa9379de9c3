// What a rerun does with a batch a killed run left pending when it can no longer repeat it safely,
// on a real PostgreSQL with `npm run digest` as a real child process against the Resend stand-in:
// 25 hours later (the provider has forgotten the key) it sends nothing and reports the batch
// unknown, with the commands that settle it, and `--settle BATCH send|skip` does what it says. When
// the recap text, MAIL_FROM or SITE_URL changed in between, the stored batch is repeated word for
// word, less those who left since; when it cannot be rebuilt, or the provider refuses the repeat
// (409), it is unknown, never a failure, and nobody gets the recap twice.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { runWeeklyDigest, type DigestOptions } from '../../server/mail/digest/run.ts';
import { ResendMailer } from '../../server/mail/resend.ts';
import type { Store } from '../../server/store/types.ts';
import { startDigestCli, type CliResult } from '../support/cli.ts';
import { type FakeResend } from '../support/fake-resend.ts';
import { postgresUrl, type TestDatabase } from '../support/postgres.ts';
import { listActiveSubscribers } from '../support/store-ops.ts';
import { openReadersAndProvider, type ReadersAndProvider } from '../support/digest-readers.ts';

const SECRET = 'digest-unknown-secret-0123456789abcdef0123456789';
const FROM = 'Launched Weekly <digest@launchedweekly.test>';
const SITE_URL = 'https://launchedweekly.test';
const SUBSCRIBERS = 250;
const HOUR = 3_600_000;

let db: TestDatabase;
let store: Store;
let sql: pg.Client;
let fake: FakeResend;

const cliEnv = (overrides: Record<string, string> = {}) => ({
  DATABASE_URL: db.url,
  RESEND_API_KEY: 're_test_unknown',
  RESEND_BASE_URL: fake.url,
  MAIL_FROM: FROM,
  UNSUBSCRIBE_SECRET: SECRET,
  SITE_URL,
  DIGEST_TZ: 'UTC',
  ...overrides,
});

const cli = (args: string[]): Promise<CliResult> => startDigestCli(args, cliEnv()).done;

/** Kills `npm run digest` when the provider has accepted its `batch`-th batch, before the answer. */
async function killAtAcceptedBatch(recap: string, batch: number) {
  const run = startDigestCli(['--json', '--recap', recap], cliEnv());
  const base = fake.acceptedBatches;
  fake.onBatchAccepted = async (accepted) => {
    if (accepted === base + batch) {
      run.child.kill('SIGKILL');
      await run.done;
    }
  };
  expect((await run.done).signal).toBe('SIGKILL');
  fake.onBatchAccepted = null;
  await sql.query(`update public.digest_locks set locked_until = now() - interval '1 second'`);
}

/** Kills it while its first request hangs unanswered and unaccepted: a batch written, never sent. */
async function killWhileFirstRequestHangs(recap: string) {
  fake.hang = 1;
  fake.hangAfterAccept = false;
  const run = startDigestCli(['--json', '--recap', recap, '--timeout', '30'], cliEnv());
  const poll = setInterval(() => {
    if (fake.requests.some((r) => r.kind === 'hung' && r.idempotencyKey?.includes(recap))) run.child.kill('SIGKILL');
  }, 10);
  expect((await run.done).signal).toBe('SIGKILL');
  clearInterval(poll);
  fake.hangAfterAccept = true;
  await sql.query(`update public.digest_locks set locked_until = now() - interval '1 second'`);
}

function rerun(recap: string, options: Partial<DigestOptions> = {}) {
  return runWeeklyDigest({
    store,
    mailer: new ResendMailer({ apiKey: 're_test_unknown', baseUrl: fake.url, from: FROM }),
    recaps,
    now: new Date(),
    siteUrl: SITE_URL,
    unsubscribeSecret: SECRET,
    mode: 'manual',
    recapWeek: recap,
    freshnessDays: 7,
    ...options,
  });
}

function messageCounts(recap: string) {
  const counts = new Map<string, number>();
  for (const message of fake.forRecap(recap)) for (const to of message.to) counts.set(to, (counts.get(to) ?? 0) + 1);
  return counts;
}

const ledgerCount = async (recap: string) => (await sql.query<{ n: number }>('select count(*)::int as n from public.digest_deliveries where recap_date = $1', [recap])).rows[0]!.n;
const activeEmails = async () => (await listActiveSubscribers(store, null, 10_000)).map((s) => s.email);

/** A batch left pending past the provider's memory of its key: reported unknown, then settled by the operator either way. */
function settlingUnknownBatches() {
  it('25 hours later: sends nothing for the pending batch, reports it unknown with the command; --settle skip records it as sent', async () => {
    const recap = '2025-07-14';
    await killAtAcceptedBatch(recap, 1);
    const [pending] = await store.openDigestBatches(recap);
    expect(pending).toMatchObject({ state: 'pending', sequence: 1 });
    expect(fake.forRecap(recap)).toHaveLength(100);

    // Both clocks a day and an hour on: the provider no longer knows the key.
    fake.clock = () => Date.now() + 25 * HOUR;
    try {
      const later = await rerun(recap, { now: new Date(Date.now() + 25 * HOUR) });
      expect(later).toMatchObject({ outcome: 'unknown', sent: SUBSCRIBERS - 100, failed: [] });
      expect(later.unknown).toEqual([
        expect.objectContaining({ id: pending!.id, recipients: 100, settle: { send: `npm run digest -- --settle ${pending!.id} send`, skip: `npm run digest -- --settle ${pending!.id} skip` } }),
      ]);
      expect(later.unknown[0]!.reason).toMatch(/written 25\.0 h ago .* forgets its idempotency key after 24 h/);
      expect(later.message).toContain(`npm run digest -- --settle ${pending!.id} send`);
      // Nobody twice: the batch's 100 have their one message from the killed run, the rest theirs.
      const counts = messageCounts(recap);
      expect(counts.size).toBe(SUBSCRIBERS);
      expect([...counts.values()].every((n) => n === 1)).toBe(true);

      // Still unknown on the next run, and still nothing sent for it.
      const again = await rerun(recap, { now: new Date(Date.now() + 26 * HOUR) });
      expect(again).toMatchObject({ outcome: 'unknown', sent: 0 });
      expect(fake.forRecap(recap)).toHaveLength(SUBSCRIBERS);
    } finally {
      fake.clock = Date.now;
    }

    const history = await cli(['--history']);
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout).toMatch(/manual\s+2025-07-14 unknown/);
    expect(history.stdout).toContain(`Batch ${pending!.id} of the 2025-07-14 recap (100 recipients`);
    expect(history.stdout).toContain(`npm run digest -- --settle ${pending!.id} skip`);

    const settled = await cli(['--settle', pending!.id, 'skip']);
    expect(settled.code, settled.stderr).toBe(0);
    expect(settled.stdout).toContain(`Batch ${pending!.id} settled as sent: its 100 recipients are recorded`);
    expect(fake.forRecap(recap)).toHaveLength(SUBSCRIBERS);
    expect(await ledgerCount(recap)).toBe(SUBSCRIBERS);
    expect(await rerun(recap)).toMatchObject({ outcome: 'already-sent', sent: 0, unknown: [] });

    // Settling it twice, or a batch that does not exist, is refused with a reason.
    const twice = await cli(['--settle', pending!.id, 'send']);
    expect(twice.code).toBe(1);
    expect(twice.stdout).toContain('needs no settling: it is already skipped');
    const bad = await cli(['--settle', 'twelve', 'send']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('a batch is named by its number');
  }, 120_000);

  it('--settle send sends a batch that never went out to those still subscribed, once', async () => {
    const recap = '2025-07-06';
    await killWhileFirstRequestHangs(recap);
    expect(fake.forRecap(recap)).toHaveLength(0);
    const [pending] = await store.openDigestBatches(recap);
    expect(pending?.subscriberIds).toHaveLength(100);

    const later = await rerun(recap, { now: new Date(Date.now() + 25 * HOUR) });
    expect(later).toMatchObject({ outcome: 'unknown', sent: SUBSCRIBERS - 100, failed: [] });
    // Someone in it leaves before the operator decides: they get nothing.
    const leaver = pending!.subscriberIds[7]!;
    await store.removeSubscriber(leaver, 'unsubscribed');
    const leaverEmail = (await store.findSubscriber(leaver))!.email;

    const settled = await cli(['--settle', pending!.id, 'send']);
    expect(settled.code, settled.stderr).toBe(0);
    expect(settled.stdout).toContain(`Batch ${pending!.id} sent to 99 recipients; 1 recipient had left and got nothing.`);
    const counts = messageCounts(recap);
    expect(counts.get(leaverEmail)).toBeUndefined();
    expect(counts.size).toBe(SUBSCRIBERS - 1);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(await ledgerCount(recap)).toBe(SUBSCRIBERS - 1);
    expect(await store.openDigestBatches(recap)).toEqual([]);
  }, 120_000);
}

/** A pending batch whose e-mail changed since: repeated as stored, or unknown when it cannot be, never failed. */
function repeatingChangedBatches() {
  it('repeats the stored batch word for word when the recap text, MAIL_FROM and SITE_URL changed: nobody failed, nobody twice', async () => {
    const recap = '2025-06-30';
    await killAtAcceptedBatch(recap, 2);
    const first = fake.forRecap(recap).slice(100, 200);
    const changed = recaps.map((r) => (r.date === recap ? { ...r, headline: `${r.headline} (corrected)` } : r));
    const replayedBefore = fake.requests.filter((r) => r.kind === 'replayed').length;
    const report = await rerun(recap, {
      recaps: changed,
      siteUrl: 'https://www.launchedweekly.test',
      mailer: new ResendMailer({ apiKey: 're_test_unknown', baseUrl: fake.url, from: 'The Launched Weekly team <hello@launchedweekly.test>' }),
    });
    expect(report).toMatchObject({ outcome: 'sent', failed: [], unknown: [] });
    expect(fake.requests.filter((r) => r.kind === 'replayed').length - replayedBefore).toBe(1);
    expect(fake.requests.filter((r) => r.kind === 'idempotency-conflict')).toHaveLength(0);
    const counts = messageCounts(recap);
    expect(counts.size).toBe((await activeEmails()).length);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    // The batch in flight went out (once) as first written; the rest with the new sender.
    expect(first.every((m) => m.from === FROM)).toBe(true);
    expect(fake.forRecap(recap).at(-1)!.from).toBe('The Launched Weekly team <hello@launchedweekly.test>');
    expect(await ledgerCount(recap)).toBe(counts.size);
  }, 120_000);

  it('reports unknown, not failed, when the batch cannot be rebuilt or the provider refuses the repeat (409)', async () => {
    // A new UNSUBSCRIBE_SECRET: the stored batch's links cannot be signed again.
    const recap = '2025-06-23';
    await killAtAcceptedBatch(recap, 1);
    const secretChanged = await rerun(recap, { unsubscribeSecret: 'another-secret-0123456789abcdef0123456789abcdef' });
    expect(secretChanged).toMatchObject({ outcome: 'unknown', failed: [] });
    expect(secretChanged.unknown[0]!.reason).toContain('UNSUBSCRIBE_SECRET changed');
    expect([...messageCounts(recap).values()].every((n) => n === 1)).toBe(true);

    // The stored content no longer matches what the provider got under that key.
    const other = '2025-06-16';
    await killAtAcceptedBatch(other, 1);
    const [pending] = await store.openDigestBatches(other);
    await sql.query(`update public.digest_contents set subject = subject || ' (edited)' where content_hash = $1`, [pending!.contentHash]);
    const refused = await rerun(other);
    // Refused through the template, then as whole copies (how a batch pending from before templates went out), and no more.
    expect(fake.requests.filter((r) => r.kind === 'idempotency-conflict')).toHaveLength(2);
    expect(refused).toMatchObject({ outcome: 'unknown', failed: [] });
    expect(refused.unknown[0]!.reason).toContain('invalid_idempotent_request');
    expect([...messageCounts(other).values()].every((n) => n === 1)).toBe(true);
    expect(messageCounts(other).size).toBe((await activeEmails()).length);
  }, 120_000);
}

/** A pending batch with a reader gone since: repeated without them, or exactly when the provider already has it. */
function repeatingWithoutLeavers() {
  it('repeats a pending batch without a reader who complained since: the rest get it once, the complainer nothing', async () => {
    const recap = '2025-06-09';
    await killWhileFirstRequestHangs(recap);
    expect(fake.forRecap(recap)).toHaveLength(0);
    const [pending] = await store.openDigestBatches(recap);
    const complainer = pending!.subscriberIds[3]!;
    await store.removeSubscriber(complainer, 'complained');
    const complainerEmail = (await store.findSubscriber(complainer))!.email;

    const report = await rerun(recap);
    expect(report).toMatchObject({ outcome: 'sent', failed: [], unknown: [], skippedUnsubscribed: 1 });
    const counts = messageCounts(recap);
    expect(counts.get(complainerEmail)).toBeUndefined();
    expect(counts.size).toBe((await activeEmails()).length);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(await ledgerCount(recap)).toBe(counts.size);
    expect(await store.openDigestBatches(recap)).toEqual([]);
  }, 120_000);

  it('a pending batch the provider took, with a reader gone since: the shorter repeat is refused, the exact one answered from the cache, nobody twice', async () => {
    const recap = '2025-06-01';
    await killAtAcceptedBatch(recap, 1);
    const [pending] = await store.openDigestBatches(recap);
    await store.removeSubscriber(pending!.subscriberIds[0]!, 'unsubscribed');
    const conflictsBefore = fake.requests.filter((r) => r.kind === 'idempotency-conflict').length;
    const replayedBefore = fake.requests.filter((r) => r.kind === 'replayed').length;

    const report = await rerun(recap);
    expect(fake.requests.filter((r) => r.kind === 'idempotency-conflict').length).toBeGreaterThan(conflictsBefore);
    expect(fake.requests.filter((r) => r.kind === 'replayed').length - replayedBefore).toBe(1);
    expect(report).toMatchObject({ outcome: 'sent', failed: [], unknown: [] });
    // The batch's readers, the one who left among them, each have the one copy the killed run's request delivered.
    const counts = messageCounts(recap);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(counts.size).toBe((await activeEmails()).length + 1);
    expect(await ledgerCount(recap)).toBe(counts.size);
    expect(await store.openDigestBatches(recap)).toEqual([]);
  }, 120_000);
}

describe.skipIf(!postgresUrl)('batches that can no longer be repeated safely', () => {
  let opened: ReadersAndProvider;
  beforeAll(async () => {
    opened = await openReadersAndProvider(SUBSCRIBERS);
    ({ db, store, sql, fake } = opened);
  });
  afterAll(() => opened?.close());

  // The groups share one database and provider, and what they check (leavers, requests, the ledger) accumulates: keep this order.
  settlingUnknownBatches();
  repeatingChangedBatches();
  repeatingWithoutLeavers();
});
