// Exactly once under churn, on a real PostgreSQL: each round, `npm run digest` (a real child
// process) is SIGKILLed at a random point: while the provider holds an accepted batch whose answer
// has not gone out, just after that answer went out (before or while the job writes it down), or at
// a random moment. Then, before the rerun, people in the batch that was in flight leave: some
// unsubscribe with their message's one-click link, others bounce or complain through the signed
// Resend webhook; and new signups arrive whose ids sort ahead of everyone. The rerun (the job,
// in-process, as the scheduler runs it) must leave every recipient with at most one message, and
// everyone who was active throughout with exactly one; nobody is counted failed.
//
// The seed is printed; DIGEST_CHURN_SEED=<seed> replays the same draws.
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { Webhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { runWeeklyDigest } from '../../server/mail/digest/run.ts';
import { ResendMailer } from '../../server/mail/resend.ts';
import type { Store } from '../../server/store/types.ts';
import { createUnsubscribeToken, unsubscribeUrlFor } from '../../server/subscribers/signed-links.ts';
import { startDigestCli } from '../support/cli.ts';
import { type FakeResend } from '../support/fake-resend.ts';
import { postgresUrl, type TestDatabase } from '../support/postgres.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { seededRandom } from '../support/seeded-random.ts';
import { listActiveSubscribers } from '../support/store-ops.ts';
import { openReadersAndProvider, type ReadersAndProvider } from '../support/digest-readers.ts';

const SECRET = 'digest-churn-secret-0123456789abcdef0123456789';
const WEBHOOK_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const FROM = 'Launched Weekly <digest@launchedweekly.test>';
const SITE_URL = 'https://launchedweekly.test';
const SUBSCRIBERS = 300;
const ROUNDS = 20;
const seed = Number(process.env.DIGEST_CHURN_SEED ?? Math.floor(Math.random() * 2 ** 31));


type Kill = { kind: 'before-answer'; batch: number } | { kind: 'after-answer'; batch: number; delayMs: number } | { kind: 'time'; ms: number };

let opened: ReadersAndProvider;
let db: TestDatabase;
let store: Store;
let sql: pg.Client;
let fake: FakeResend;
let site: TestServer;
const signer = new Webhook(WEBHOOK_SECRET);
let signupCounter = 0;

const mailer = () => new ResendMailer({ apiKey: 're_test_churn', baseUrl: fake.url, from: FROM });

async function killedRun(recap: string, kill: Kill): Promise<string> {
  const run = startDigestCli(['--json', '--recap', recap, '--timeout', '2'], {
    DATABASE_URL: db.url,
    RESEND_API_KEY: 're_test_churn',
    RESEND_BASE_URL: fake.url,
    MAIL_FROM: FROM,
    UNSUBSCRIBE_SECRET: SECRET,
    SITE_URL,
    DIGEST_TZ: 'UTC',
  });
  const base = fake.acceptedBatches;
  let timer: NodeJS.Timeout | undefined;
  if (kill.kind === 'time') {
    // From the first request on, so the draw lands in the sending, not in Node's start-up.
    const started = fake.requests.length;
    const poll = setInterval(() => {
      if (fake.requests.length > started || fake.acceptedBatches > base) {
        clearInterval(poll);
        timer = setTimeout(() => run.child.kill('SIGKILL'), kill.ms);
      }
    }, 5);
    run.done.finally(() => clearInterval(poll));
  } else {
    fake.onBatchAccepted = async (accepted) => {
      if (accepted !== base + kill.batch) return;
      if (kill.kind === 'before-answer') {
        run.child.kill('SIGKILL');
        await run.done;
      } else {
        // The answer goes out now; the kill lands while the job records it, or just after.
        timer = setTimeout(() => run.child.kill('SIGKILL'), kill.delayMs);
      }
    };
  }
  const result = await run.done;
  clearTimeout(timer);
  fake.onBatchAccepted = null;
  return result.signal === 'SIGKILL' ? 'killed' : `finished (${result.code})`;
}

/**
 * One-click unsubscribe (RFC 8058, as a mail client posts it) with the link from the message the
 * provider holds for them, or the link any earlier e-mail carried.
 */
async function unsubscribeByLink(email: string, recap: string): Promise<void> {
  const message = fake.deliveredTo(email, recap)[0];
  const subscriber = (await store.findSubscriberByEmail(email))!;
  const link = new URL(message ? message.headers['List-Unsubscribe']!.slice(1, -1) : unsubscribeUrlFor(SITE_URL, createUnsubscribeToken(subscriber.id, SECRET)));
  const response = await fetch(`${site.url}${link.pathname}${link.search}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'List-Unsubscribe=One-Click',
  });
  expect(response.status).toBe(200);
  expect((await store.findSubscriberByEmail(email))?.active).toBe(false);
}

async function webhook(type: 'email.bounced' | 'email.complained', email: string) {
  const data: Record<string, unknown> = { created_at: new Date().toISOString(), email_id: randomUUID(), from: FROM, to: [email], subject: 'Launched Weekly' };
  if (type === 'email.bounced') data.bounce = { message: 'No such user', subType: 'General', type: 'Permanent' };
  const body = JSON.stringify({ type, created_at: new Date().toISOString(), data });
  const id = `msg_${randomBytes(8).toString('hex')}`;
  const at = new Date();
  const response = await fetch(`${site.url}/webhooks/resend`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', 'svix-id': id, 'svix-timestamp': String(Math.floor(at.getTime() / 1000)), 'svix-signature': signer.sign(id, at, body) },
  });
  expect(response.status).toBe(200);
}

/** New signups whose ids sort ahead of every existing one (uuids starting with zeros). */
async function signupsAhead(count: number) {
  for (let i = 0; i < count; i++) {
    signupCounter++;
    const id = `00000000-0000-4000-8000-${String(signupCounter).padStart(12, '0')}`;
    await sql.query(`insert into public.email_signups (id, email, source) values ($1, $2, '/')`, [id, `early${signupCounter}@example.com`]);
  }
}

const activeEmails = async () => new Set((await listActiveSubscribers(store, null, 100_000)).map((s) => s.email));

describe.skipIf(!postgresUrl)('the weekly digest under churn between a crash and the rerun: at most once for all, exactly once for who stayed', () => {
  beforeAll(async () => {
    opened = await openReadersAndProvider(SUBSCRIBERS);
    ({ db, store, sql, fake } = opened);
    fake.keepBodies = false;
    site = await startTestServer({ store, config: { resendWebhookSecret: WEBHOOK_SECRET, unsubscribeSecret: SECRET } });
  });

  afterAll(async () => {
    await site?.close();
    await opened?.close();
  });

  it(`holds over ${ROUNDS} seeded rounds of SIGKILL and churn (seed ${seed})`, async () => {
    console.log(`[digest-churn] seed ${seed} (DIGEST_CHURN_SEED=${seed} replays it)`);
    const draw = seededRandom(seed);
    const weeks = [...recaps].map((r) => r.date).sort().slice(0, ROUNDS);
    expect(weeks).toHaveLength(ROUNDS);
    const figures = { killed: 0, pendingFound: 0, repeated: 0, replayed: 0, left: 0, signups: 0, messages: 0, duplicates: 0, failed: 0, kinds: new Map<string, number>() };
    const started = Date.now();

    for (const [index, recap] of weeks.entries()) {
      // The kill draw: the headers are kept (keepBodies is false) for the one-click links.
      fake.keepBodies = true;
      const kinds = ['before-answer', 'after-answer', 'time'] as const;
      const kind = kinds[draw.int(0, 2)]!;
      const kill: Kill =
        kind === 'before-answer' ? { kind, batch: draw.int(1, 3) } : kind === 'after-answer' ? { kind, batch: draw.int(1, 3), delayMs: draw.int(0, 15) } : { kind, ms: draw.int(0, 400) };
      const activeAtStart = await activeEmails();
      const result = await killedRun(recap, kill);
      if (result === 'killed') figures.killed++;
      figures.kinds.set(kill.kind, (figures.kinds.get(kill.kind) ?? 0) + 1);
      await sql.query(`update public.digest_locks set locked_until = now() - interval '1 second'`);

      // Churn between the kill and the rerun, aimed at the batch in flight (if the kill left one).
      const open = await store.openDigestBatches(recap);
      figures.pendingFound += open.length;
      const inFlight = open.flatMap((b) => b.subscriberIds);
      const members = (await store.digestRecipients(inFlight)).filter((r) => r.active).map((r) => r.email);
      const others = [...activeAtStart].filter((e) => !members.includes(e));
      const pool = [...members.slice(0, 6), ...others.slice(draw.int(0, 50), draw.int(51, 60))];
      const leaving: string[] = [];
      for (const [i, email] of pool.slice(0, 6).entries()) {
        if (i % 3 === 0) {
          await unsubscribeByLink(email, recap);
          leaving.push(email);
        } else if (i % 3 === 1) {
          await webhook('email.bounced', email);
          leaving.push(email);
        } else if (i % 3 === 2) {
          await webhook('email.complained', email);
          leaving.push(email);
        }
      }
      figures.left += leaving.length;
      const newcomers = draw.int(3, 6);
      await signupsAhead(newcomers);
      figures.signups += newcomers;
      fake.keepBodies = false;

      const replayedBefore = fake.requests.filter((r) => r.kind === 'replayed').length;
      const report = await runWeeklyDigest({ store, mailer: mailer(), recaps, now: new Date(), siteUrl: SITE_URL, unsubscribeSecret: SECRET, mode: 'manual', recapWeek: recap, freshnessDays: 7 });
      expect(['sent', 'already-sent'], report.message).toContain(report.outcome);
      figures.failed += report.failed.reduce((sum, f) => sum + f.count, 0);
      expect(report.failed).toEqual([]);
      expect(report.unknown).toEqual([]);
      figures.repeated += open.length;
      figures.replayed += fake.requests.filter((r) => r.kind === 'replayed').length - replayedBefore;

      // At most once for everyone; exactly once for who was active throughout.
      const counts = new Map<string, number>();
      for (const message of fake.forRecap(recap)) for (const to of message.to) counts.set(to, (counts.get(to) ?? 0) + 1);
      const activeNow = await activeEmails();
      for (const [email, n] of counts) {
        if (n > 1) figures.duplicates += n - 1;
        expect(n, `${email} in round ${index + 1}`).toBe(1);
      }
      for (const email of activeNow) expect(counts.get(email) ?? 0, `${email} (active throughout) in round ${index + 1}`).toBe(activeAtStart.has(email) || email.startsWith('early') ? 1 : 0);
      for (const email of counts.keys()) expect(activeAtStart.has(email) || email.startsWith('early'), `${email} got the recap without being active`).toBe(true);
      // The ledger names exactly the provider's messages.
      const ledger = (await sql.query<{ n: number }>('select count(*)::int as n from public.digest_deliveries where recap_date = $1', [recap])).rows[0]!.n;
      expect(ledger).toBe(fake.forRecap(recap).length);
      figures.messages += fake.forRecap(recap).length;
    }

    const kinds = [...figures.kinds].map(([k, n]) => `${n} × ${k}`).join(', ');
    console.log(
      `[digest-churn] ${ROUNDS} rounds in ${((Date.now() - started) / 1000).toFixed(1)} s: ${figures.killed} runs killed (${kinds}); ` +
        `${figures.pendingFound} pending batches found and repeated with their stored key (${figures.replayed} answered from the provider's cache); ` +
        `${figures.left} in-flight or other recipients left before the rerun (one-click unsubscribe, bounce, complaint), ${figures.signups} signups sorting ahead; ` +
        `${figures.messages} messages, ${figures.duplicates} duplicates, ${figures.failed} counted failed`,
    );
    expect(figures.duplicates).toBe(0);
    expect(figures.pendingFound).toBeGreaterThan(0);
  }, 300_000);
});
