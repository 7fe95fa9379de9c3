// The Monday job as one function: pick the recap, take the sending lease, walk the active
// subscribers in id order a page at a time, send in provider-sized batches, and write a ledger row
// for each message only after the provider accepted it. The CLI and the scheduler are thin shells
// around it; everything it touches is passed in.
//
// Exactly once, across crashes and replicas:
// - The ledger (one row per recap and subscriber) says who already has the recap; a rerun skips them.
// - The lease keeps a second process from sending the same recap at the same time.
// - A crash after the provider accepted a batch but before its rows were written is covered by the
//   batch's idempotency key, a hash of the recap date and the batch's subscriber ids. Batches are
//   the next N not-yet-delivered active subscribers in id order, so a rerun rebuilds the same
//   first batch and the provider answers it from its idempotency cache (24 h at Resend) instead of
//   sending again. That holds unless the list ahead of that batch changed in between (a new signup
//   sorting before it, or an earlier address that was refused).
import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { daysBetween, formatWeekDate } from '../content/dates.ts';
import type { Recap } from '../content/schema.ts';
import { site } from '../content/site.ts';
import { prepareDigest, type PreparedDigest } from '../emails/render-digest.ts';
import { presendGate } from './digest-presend.ts';
import type { Mailer, OutgoingMessage } from '../server/mail/types.ts';
import type { Store, Subscriber } from '../server/store/types.ts';
import { createUnsubscribeToken, unsubscribeUrlFor } from '../server/unsubscribe-token.ts';

export const DEFAULT_PAGE_SIZE = 500;
export const DEFAULT_LEASE_MS = 60_000;
const RECHECK_CONCURRENCY = 10;
const RECORD_ATTEMPTS = 4;

export interface DigestLog {
  info(message: string): void;
  warn(message: string): void;
}

export interface DigestProgress {
  recap: RecapRef;
  /** Active subscribers when the run started. */
  total: number;
  sent: number;
  failed: number;
  skippedAlreadySent: number;
  skippedUnsubscribed: number;
  elapsedMs: number;
  dryRun: boolean;
}

export interface DigestOptions {
  store: Store;
  mailer: Mailer;
  /** Newest first or in any order; the job sorts. */
  recaps: readonly Recap[];
  now: Date;
  siteUrl: string;
  unsubscribeSecret: string;
  mode: 'scheduled' | 'manual';
  /** `2025-07-14` or its path; the newest recap whose date has come when absent. */
  recapWeek?: string;
  /** Render and count, send nothing, touch no ledger and take no lease. */
  dryRun?: boolean;
  /** Send one test copy to this address; the ledger is not touched. */
  testRecipient?: string;
  /** A scheduled run sends a recap only while it is younger than this many days. */
  freshnessDays: number;
  /** Whose calendar decides which day "today" is (DIGEST_TZ). */
  timezone?: string;
  /** NODE_ENV=production: the pre-send checks also refuse local and example links. */
  production?: boolean;
  log?: DigestLog;
  onProgress?: (progress: DigestProgress) => void;
  /** Stops the run before its next batch; the batch in flight finishes and is recorded. */
  signal?: AbortSignal;
  pageSize?: number;
  leaseMs?: number;
}

export interface RecapRef {
  date: string;
  path: string;
  headline: string;
  /** Days from the recap's date to today (negative: not yet come). */
  ageDays: number;
}

export type DigestOutcome =
  | 'sent'
  | 'already-sent'
  | 'no-subscribers'
  | 'dry-run'
  | 'test-sent'
  | 'test-failed'
  | 'stale'
  | 'locked'
  | 'no-recap'
  | 'unknown-recap'
  | 'not-yet'
  | 'refused'
  | 'stopped';

export interface DigestReport {
  outcome: DigestOutcome;
  /** One sentence for a person: what happened and, when nothing was sent, why. */
  message: string;
  recap: RecapRef | null;
  /** Messages the provider accepted in this run (in a dry run: messages that would go out). */
  sent: number;
  skippedAlreadySent: number;
  skippedUnsubscribed: number;
  failed: { reason: string; count: number }[];
  durationMs: number;
}

/** `YYYY-MM-DD` of an instant on the wall calendar of a time zone. */
export function isoDateIn(instant: Date, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(instant);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')}`;
}

/** The provider's idempotency key for one batch: the same recap and subscribers give the same key. */
export function batchIdempotencyKey(recapDate: string, subscriberIds: readonly string[]): string {
  const digest = createHash('sha256').update(recapDate).update('\n').update(subscriberIds.join('\n')).digest('hex');
  return `digest-${recapDate}-${digest.slice(0, 40)}`;
}

export function findRecapIn(recaps: readonly Recap[], week: string): Recap | undefined {
  const path = week.startsWith('/') ? week : `/${week}`;
  return recaps.find((recap) => recap.date === week || recap.path === path);
}

const weekLabel = (recap: Pick<Recap, 'date'>) => site.recap.weekOf(formatWeekDate(recap.date));
const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

class FailureTally {
  private readonly counts = new Map<string, number>();
  add(reason: string, count = 1) {
    this.counts.set(reason, (this.counts.get(reason) ?? 0) + count);
  }
  total() {
    return [...this.counts.values()].reduce((sum, n) => sum + n, 0);
  }
  list() {
    return [...this.counts].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count);
  }
}

async function mapLimit<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  });
  await Promise.all(workers);
  return results;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runWeeklyDigest(options: DigestOptions): Promise<DigestReport> {
  const started = Date.now();
  const { store, mailer, now, siteUrl, unsubscribeSecret, mode, dryRun = false, testRecipient, freshnessDays, log, signal } = options;
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const today = isoDateIn(now, options.timezone ?? 'UTC');

  const failures = new FailureTally();
  const counts = { sent: 0, skippedAlreadySent: 0, skippedUnsubscribed: 0 };
  let recapRef: RecapRef | null = null;
  const finish = (outcome: DigestOutcome, message: string): DigestReport => ({
    outcome,
    message,
    recap: recapRef,
    ...counts,
    failed: failures.list(),
    durationMs: Date.now() - started,
  });

  // Which recap.
  const newestFirst = [...options.recaps].sort((a, b) => b.date.localeCompare(a.date));
  let recap: Recap | undefined;
  if (options.recapWeek !== undefined) {
    recap = findRecapIn(newestFirst, options.recapWeek);
    if (!recap) return finish('unknown-recap', `There is no recap for "${options.recapWeek}". Use a date such as ${newestFirst[0]?.date ?? '2025-07-14'} or its path.`);
  } else {
    recap = newestFirst.find((candidate) => candidate.date <= today);
    if (!recap) return finish('no-recap', `Nothing to send: no recap is dated on or before ${today}.`);
  }
  const ageDays = daysBetween(recap.date, today);
  recapRef = { date: recap.date, path: recap.path, headline: recap.headline, ageDays };
  const label = weekLabel(recap);

  if (ageDays < 0 && !dryRun && !testRecipient) {
    return finish('not-yet', `Nothing sent: ${label} is dated ${recap.date}, which has not come yet (today is ${today}). Preview it with --to or --dry-run.`);
  }
  if (mode === 'scheduled' && options.recapWeek === undefined && ageDays >= freshnessDays && !testRecipient) {
    return finish(
      'stale',
      `Nothing sent: the newest recap, ${label}, is ${plural(ageDays, 'day')} old, and the schedule sends a recap only during the ${plural(freshnessDays, 'day')} from its date (DIGEST_FRESHNESS_DAYS). Add this week's recap, or send that one by hand: npm run digest -- --recap ${recap.date}`,
    );
  }
  log?.info(`Recap: ${label} — ${recap.headline} (${recap.path}, ${ageDays === 0 ? 'dated today' : ageDays > 0 ? `${plural(ageDays, 'day')} old` : `dated ${recap.date}`})`);

  const digest = await prepareDigest(recap, siteUrl);
  const refusal = presendGate(digest, { siteUrl, production: options.production, label, log });
  if (refusal) return finish('refused', refusal);
  const messageFor = (subscriber: Subscriber, subjectPrefix = ''): OutgoingMessage => {
    const url = unsubscribeUrlFor(siteUrl, createUnsubscribeToken(subscriber.id, unsubscribeSecret));
    const copy = digest.personalize(url);
    return {
      to: subscriber.email,
      from: mailer.from,
      subject: `${subjectPrefix}${copy.subject}`,
      html: copy.html,
      text: copy.text,
      // RFC 8058 one-click: mail clients show an unsubscribe button that POSTs to this URL.
      headers: { 'List-Unsubscribe': `<${url}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
      tags: { recap: recap.date, kind: subjectPrefix ? 'test' : 'digest' },
    };
  };

  if (testRecipient) return sendTest(testRecipient);

  const total = (await store.countSubscribers()).active;
  const progress = () =>
    options.onProgress?.({
      recap: recapRef!,
      total,
      sent: counts.sent,
      failed: failures.total(),
      skippedAlreadySent: counts.skippedAlreadySent,
      skippedUnsubscribed: counts.skippedUnsubscribed,
      elapsedMs: Date.now() - started,
      dryRun,
    });

  if (dryRun) {
    await walk(digest, async (messages) => {
      counts.sent += messages.length;
      progress();
      return null;
    });
    return finish(
      'dry-run',
      `Dry run: ${label} would go to ${plural(counts.sent, 'subscriber')}; ${counts.skippedAlreadySent.toLocaleString('en-US')} already have it. Nothing was sent.`,
    );
  }

  // The lease: one sender per recap across processes and replicas.
  const holder = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  if (!(await store.acquireDigestLock(recap.date, holder, leaseMs))) {
    return finish(
      'locked',
      `Nothing sent: another run is sending ${label} right now (it holds the sending lease). If that run was killed, its lease runs out within ${Math.round(leaseMs / 1000)} s; run again after that.`,
    );
  }
  let lastRenewal = Date.now();
  let leaseLost = false;
  const renew = async () => {
    const held = await store.acquireDigestLock(recap.date, holder, leaseMs);
    if (held) lastRenewal = Date.now();
    else leaseLost = true;
  };
  // Renewed in the background too, so a long rate-limit wait inside one batch keeps the lease.
  const renewal = setInterval(() => void renew().catch(() => {}), Math.max(1_000, Math.floor(leaseMs / 3)));
  renewal.unref();

  let stopped: string | null;
  try {
    stopped = await walk(digest, async (messages, subscribers) => {
      if (signal?.aborted) return 'stopped on request';
      if (Date.now() - lastRenewal > leaseMs / 3) await renew().catch(() => {});
      if (leaseLost || Date.now() - lastRenewal > leaseMs / 2) return 'lost the sending lease (the database did not confirm it in time)';

      const key = batchIdempotencyKey(recap.date, subscribers.map((s) => s.id));
      const outcome = await mailer.sendBatch(messages, { idempotencyKey: key, signal });
      const deliveries = subscribers.flatMap((subscriber, index) => {
        const result = outcome.results[index];
        return result?.status === 'accepted' ? [{ subscriberId: subscriber.id, providerMessageId: result.providerId }] : [];
      });
      let retryable: string | null = null;
      for (const result of outcome.results) {
        if (result.status === 'failed') {
          failures.add(result.reason);
          if (!result.permanent) retryable ??= result.reason;
        }
      }
      counts.sent += deliveries.length;
      const unrecorded = await record(recap.date, deliveries);
      progress();
      if (unrecorded) return unrecorded;
      if (outcome.fatal) return `the provider refused the sender: ${outcome.fatal}`;
      // A provider still failing after the retry budget will fail the next batch too; the ledger
      // lets a later run pick up exactly here.
      if (retryable) return `the provider kept failing: ${retryable}`;
      return null;
    });
  } catch (error) {
    stopped = `unexpected error: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    clearInterval(renewal);
    await store.releaseDigestLock(recap.date, holder).catch(() => {});
  }

  if (stopped) {
    return finish(
      'stopped',
      `Stopped after sending ${label} to ${plural(counts.sent, 'subscriber')}: ${stopped}. Run again to continue; subscribers who have it are skipped.`,
    );
  }
  const failedCount = failures.total();
  if (counts.sent === 0 && failedCount === 0) {
    if (counts.skippedAlreadySent === 0) return finish('no-subscribers', `Nothing to send: there are no active subscribers for ${label}.`);
    return finish(
      'already-sent',
      `Nothing to send: ${label} already went to every active subscriber (${counts.skippedAlreadySent.toLocaleString('en-US')}). A recap is sent once; the next one goes out when its file is in content/recaps.`,
    );
  }
  return finish(
    'sent',
    `Sent ${label} to ${plural(counts.sent, 'subscriber')}${failedCount > 0 ? `; ${plural(failedCount, 'message')} failed` : ''}.`,
  );

  /**
   * Streams undelivered active subscribers in id order, re-checks each batch's members just
   * before it goes out, while the batch ahead of it is with the provider (someone may have left
   * since their page was read), and hands each batch to `handle`. Returns the reason `handle`
   * gave for stopping, or null at the end of the list.
   */
  async function walk(prepared: PreparedDigest, handle: (messages: OutgoingMessage[], subscribers: Subscriber[]) => Promise<string | null>): Promise<string | null> {
    const pending = undelivered(prepared.recap.date);
    const prepare = async () => {
      const subscribers = await nextBatch(pending, mailer.maxBatchSize);
      return { subscribers, messages: subscribers.map((subscriber) => messageFor(subscriber)) };
    };
    // The next batch is read, re-checked and rendered while this one is with the provider: the
    // database and the provider each wait on the other otherwise. Batches are still sent and
    // recorded one at a time, in order.
    let upcoming = prepare();
    for (;;) {
      const { subscribers, messages } = await upcoming;
      if (subscribers.length === 0) return null;
      upcoming = prepare();
      // Awaited before walk returns even when this batch stops the run; its failure then goes
      // unreported, as the run is ending for another reason.
      upcoming.catch(() => {});
      const reason = await handle(messages, subscribers);
      if (reason) {
        await upcoming.catch(() => {});
        return reason;
      }
    }
  }

  async function* undelivered(recapDate: string): AsyncGenerator<Subscriber> {
    let after: string | null = null;
    for (;;) {
      const page: Subscriber[] = await store.listActiveSubscribers(after, pageSize);
      if (page.length === 0) return;
      after = page.at(-1)!.id;
      const delivered = await store.deliveredTo(recapDate, page.map((s) => s.id));
      for (const subscriber of page) {
        if (delivered.has(subscriber.id)) counts.skippedAlreadySent++;
        else yield subscriber;
      }
      if (page.length < pageSize) return;
    }
  }

  /**
   * The next `size` subscribers that are still active now. Someone who left after their page was
   * read is skipped and the batch is topped up from the stream, so a batch is always "the next N
   * active, undelivered subscribers": the same set a rerun would build.
   */
  async function nextBatch(stream: AsyncGenerator<Subscriber>, size: number): Promise<Subscriber[]> {
    const batch: Subscriber[] = [];
    while (batch.length < size) {
      const candidates: Subscriber[] = [];
      while (candidates.length < size - batch.length) {
        const next = await stream.next();
        if (next.done) break;
        candidates.push(next.value);
      }
      if (candidates.length === 0) break;
      // By address, not by id: the address has a unique index on every backend, while a lookup by
      // id as text scans the whole table (uuid or integer ids are compared as text), which made
      // the re-check alone cost O(N) per subscriber.
      const current = await mapLimit(candidates, RECHECK_CONCURRENCY, (candidate) => store.findSubscriberByEmail(candidate.email));
      candidates.forEach((candidate, index) => {
        const record = current[index];
        if (record?.active && record.id === candidate.id) batch.push({ id: candidate.id, email: record.email });
        else counts.skippedUnsubscribed++;
      });
    }
    return batch;
  }

  /** Writes ledger rows, retrying a flaky store; returns why it could not, or null. */
  async function record(recapDate: string, deliveries: { subscriberId: string; providerMessageId: string | null }[]): Promise<string | null> {
    for (let attempt = 1; ; attempt++) {
      try {
        await store.recordDeliveries(recapDate, deliveries);
        return null;
      } catch (error) {
        if (attempt >= RECORD_ATTEMPTS) {
          return `the provider accepted ${plural(deliveries.length, 'message')} but the database did not record them (${error instanceof Error ? error.message : String(error)}); a rerun within 24 h repeats that batch with the same idempotency key, which the provider does not send twice`;
        }
        log?.warn(`Recording deliveries failed (try ${attempt} of ${RECORD_ATTEMPTS}); retrying`);
        await pause(500 * 2 ** attempt);
      }
    }
  }

  async function sendTest(address: string): Promise<DigestReport> {
    // The operator's own link when they are on the list; a token that unsubscribes nobody otherwise.
    const known = await store.findSubscriberByEmail(address);
    const message = messageFor({ id: known?.id ?? 'test-message', email: address }, '[Test] ');
    if (dryRun) {
      counts.sent = 1;
      return finish('dry-run', `Dry run: a test of ${label} would go to ${address}. Nothing was sent.`);
    }
    const result = await mailer.send(message, { signal });
    if (result.status === 'accepted') {
      counts.sent = 1;
      return finish('test-sent', `Sent a test of ${label} to ${address}${result.providerId ? ` (${mailer.kind === 'outbox' ? 'file' : 'id'} ${result.providerId})` : ''}. The ledger is unchanged.`);
    }
    failures.add(result.reason);
    return finish('test-failed', `The test of ${label} to ${address} failed: ${result.reason}.`);
  }
}
